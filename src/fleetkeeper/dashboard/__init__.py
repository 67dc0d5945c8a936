"""fleetkeeper.dashboard"""
