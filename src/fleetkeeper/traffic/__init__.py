"""fleetkeeper.traffic"""
