"""fleetkeeper.interpreter"""
