"""fleetkeeper.cli"""
