"""fleetkeeper.simulation"""
