"""fleetkeeper: a multi-cluster failover control plane for Kubernetes, compatible with Karmada's API.

Users declare a workload once plus a PropagationPolicy; fleetkeeper schedules it over
member clusters and keeps it running when a cluster, or the application in it, fails.
"""

from fleetkeeper.clock import Clock, SystemClock, VirtualClock

__all__ = ["Clock", "SystemClock", "VirtualClock", "__version__"]
__version__ = "0.1.0"
