"""SpreadConstraint: to spread by provider, region or zone a cluster must have that field.

Constraints are checked in order and the first missing field rejects the cluster.
Spreading by ``cluster`` or by a label never rejects anything here; choosing among the
clusters that pass is :mod:`fleetkeeper.scheduler.spread`'s job.
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.scheduler import framework
from fleetkeeper.scheduler.framework import BindingView, Result
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

NAME = "SpreadConstraint"


class SpreadConstraint:
    """Keeps clusters that carry the topology fields the placement spreads by."""

    @property
    def name(self) -> str:
        return NAME

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        for constraint in binding.placement.spread:
            field = constraint.spread_by_field
            if field == "provider" and not cluster.provider:
                return framework.unschedulable("cluster(s) did not have provider property")
            if field == "region" and not cluster.region:
                return framework.unschedulable("cluster(s) did not have region property")
            if field == "zone" and not cluster.zones:
                return framework.unschedulable("cluster(s) did not have zones property")
        return framework.SUCCESS

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        return tuple(c.spread_by_field for c in binding.placement.spread)


def new() -> SpreadConstraint:
    return SpreadConstraint()
