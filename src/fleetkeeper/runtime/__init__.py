"""fleetkeeper.runtime"""
