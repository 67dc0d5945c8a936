"""fleetkeeper.cmd"""
