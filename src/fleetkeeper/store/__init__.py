"""fleetkeeper.store"""
