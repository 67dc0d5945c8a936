"""ClusterEviction: never schedule back onto a cluster the workload is leaving.

A cluster named by one of the binding's ``gracefulEvictionTasks`` is rejected for as
long as the task exists — even if it is still in the result, because the point of the
task is to move away from it. fleetkeeper adds the eviction *history*: a cluster the
workload was evicted from stays rejected until ``evictedAt + blockPredecessorSeconds``
(``spec.failover.application``, default 600 s; 0 = for good), so a flapping cluster
does not get the workload straight back once the task is gone.
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.scheduler import framework
from fleetkeeper.scheduler.framework import BindingView, Result
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

NAME = "ClusterEviction"
REASON = "cluster(s) is in the process of eviction"
BLOCKED_REASON = "cluster(s) was recently evicted and is blocked for this workload"


class ClusterEviction:
    """Rejects clusters being evicted from, or recently evicted from."""

    @property
    def name(self) -> str:
        return NAME

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        if cluster.name in binding.evicting:
            return framework.unschedulable(REASON)
        if cluster.name in binding.blocked:
            return framework.unschedulable(BLOCKED_REASON)
        return framework.SUCCESS

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        return (binding.evicting, binding.blocked)


def new() -> ClusterEviction:
    return ClusterEviction()
