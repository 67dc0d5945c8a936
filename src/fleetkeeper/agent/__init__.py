"""fleetkeeper.agent"""
