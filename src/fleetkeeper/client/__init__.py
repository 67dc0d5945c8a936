"""fleetkeeper.client"""
