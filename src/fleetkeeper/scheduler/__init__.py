"""fleetkeeper.scheduler"""
