"""ClusterAffinity: a cluster must match the placement's affinity.

With ``clusterAffinity`` that one affinity; with ``clusterAffinities`` the term being
tried (``status.schedulerObservingAffinityName``), whose overflow groups also count for
workloads. No affinity at all means every cluster matches. Matching is Karmada's
``ClusterMatches`` (exclude, labels, provider/region/zone fields, names). The plugin
also scores, always 0, as Karmada's does.
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.api import rules
from fleetkeeper.scheduler import framework
from fleetkeeper.scheduler.framework import BindingView, Result
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

NAME = "ClusterAffinity"
REASON = "cluster(s) did not match the placement cluster affinity constraint"


class ClusterAffinity:
    """Keeps clusters the placement's (current) cluster affinity selects."""

    @property
    def name(self) -> str:
        return NAME

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        affinities = binding.placement.affinities(binding.observed_affinity, binding.is_workload)
        if affinities is None or cluster.cluster is None:
            return framework.SUCCESS
        if any(rules.cluster_matches(affinity, cluster.cluster) for affinity in affinities):
            return framework.SUCCESS
        return framework.unschedulable(REASON)

    def score(self, binding: BindingView, cluster: ClusterFacts) -> int:
        return framework.MIN_SCORE

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        return binding.placement.affinity_key(binding.observed_affinity, binding.is_workload)


def new() -> ClusterAffinity:
    return ClusterAffinity()
