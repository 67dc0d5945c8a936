"""fleetkeeper.controllers"""
