"""What ``kubectl get`` prints: the columns of each kind and the ``meta.k8s.io/v1`` Table.

Pure functions of an object's wire dict and the clock's ``now``, shared by every server
that answers kubectl — the plane's API server and the simulated members' — so a Deployment
prints the same columns wherever it is read: :mod:`columns` (the extractors), :mod:`kube`
(kubectl's columns for built-in kinds), :mod:`table` (the Table and its rows).
"""
