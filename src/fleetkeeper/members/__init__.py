"""fleetkeeper.members"""
