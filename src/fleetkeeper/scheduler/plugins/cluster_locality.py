"""ClusterLocality: prefer the clusters the workload already runs on.

A cluster in the binding's current result scores 100, every other 0. This is what
keeps a schedule stable: among equally able clusters the existing ones sort first.
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.scheduler import framework
from fleetkeeper.scheduler.framework import BindingView
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

NAME = "ClusterLocality"


class ClusterLocality:
    """Scores the binding's current clusters highest."""

    @property
    def name(self) -> str:
        return NAME

    def score(self, binding: BindingView, cluster: ClusterFacts) -> int:
        return framework.MAX_SCORE if cluster.name in binding.targets else framework.MIN_SCORE

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        return frozenset(binding.targets)


def new() -> ClusterLocality:
    return ClusterLocality()
