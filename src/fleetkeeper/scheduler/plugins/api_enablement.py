"""APIEnablement: a cluster must serve the kind of the resource template.

A cluster already in the binding's result passes regardless, so a placement survives
an API that is briefly missing from the cluster's reported ``apiEnablements``. An
unknown API (the cluster has not reported its APIs yet) is rejected too: the check is
strict, as in Karmada.
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.scheduler import framework
from fleetkeeper.scheduler.framework import BindingView, Result
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

NAME = "APIEnablement"
REASON = "cluster(s) did not have the API resource"


class APIEnablement:
    """Keeps clusters that serve the template's group, version and kind."""

    @property
    def name(self) -> str:
        return NAME

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        if cluster.name in binding.targets or binding.group_version_kind in cluster.apis:
            return framework.SUCCESS
        return framework.unschedulable(REASON)

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        gvk = binding.group_version_kind
        lacking = snapshot.memo((NAME, gvk), lambda: _lacking(snapshot, gvk), topology_only=True)
        return (gvk, lacking.intersection(binding.targets) if binding.targets else frozenset())


def _lacking(snapshot: Snapshot, gvk: tuple[str, str]) -> frozenset[str]:
    return frozenset(c.name for c in snapshot.clusters if gvk not in c.apis)


def new() -> APIEnablement:
    return APIEnablement()
