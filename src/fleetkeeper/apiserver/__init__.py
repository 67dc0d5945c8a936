"""fleetkeeper.apiserver"""
