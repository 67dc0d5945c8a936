"""Simulated member clusters: a KWOK-like, in-process, fault-injectable Kubernetes.

Each :class:`SimulatedCluster` is a small cluster model on the injected clock — its objects
in the store's synchronous :class:`~fleetkeeper.store.local.LocalStore`, written by
server-side apply and by controllers, nodes with allocatable resources, a first-fit scheduler
with priority preemption, workload controllers that create pods and keep Kubernetes'
status fields (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, bare Pods), health
endpoints and a cluster summary — and it implements the
:class:`~fleetkeeper.members.interface.Member` protocol. Faults are plain method calls
named after the scenario actions. :class:`SimulatedFleet` holds the clusters of a run.

Module map: ``cluster`` (the Member façade and faults) → ``engine`` (the synchronous
work loop, pods, garbage collection) → ``deployments``/``statefulsets``/``daemonsets``/
``jobs`` (controllers) and ``lifecycle``/``scheduler``/``nodes`` (placement and pod
states on the clock); ``network`` (node addresses, pod ranges, pod IPs) and
``events``/``podevents`` (the Events the scheduler, kubelets and controllers write);
``objects``/``podapply`` (keys and apply rules, server-side apply being
:mod:`fleetkeeper.api.serverapply`'s), ``watch`` (the in-process watch), ``served`` (what the
cluster serves, for its status), ``faults``, ``quantity`` support them; ``containers`` tells
what its containers print and answers exec.

Served over HTTPS (``fleetkeeper member-sim``) or through the plane's cluster proxy, a cluster
is the plane's own API server (:mod:`fleetkeeper.apiserver`) over ``api_store``'s
:class:`~fleetkeeper.members.simulated.api_store.ClusterStore`, whose writes go through the
engine and whose watches are the store's (``api_watch``).
"""

from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.faults import ApiState
from fleetkeeper.members.simulated.fleet import SimulatedFleet
from fleetkeeper.members.simulated.jobs import RUN_SECONDS_ANNOTATION
from fleetkeeper.members.simulated.scheduler import DEFAULT_NODE_RESOURCES

__all__ = [
    "DEFAULT_NODE_RESOURCES", "RUN_SECONDS_ANNOTATION", "ApiState", "SimulatedCluster", "SimulatedFleet",
]
