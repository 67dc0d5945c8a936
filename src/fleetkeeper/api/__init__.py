"""fleetkeeper.api"""
