"""TaintToleration: a cluster's NoSchedule and NoExecute taints must be tolerated.

The placement's ``clusterTolerations`` are matched against the cluster's taints in the
cluster's order; the first taint none of them tolerates rejects the cluster, and the
reason names it (``cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}``,
Karmada's ``key=value:effect`` spelling). A cluster already in the binding's result
passes: new taints never move a running workload here — the taint manager evicts it
when a NoExecute taint is not tolerated, and the scheduler then reacts to the eviction.
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.api import rules
from fleetkeeper.api.core import Taint
from fleetkeeper.scheduler import framework
from fleetkeeper.scheduler.framework import BindingView, Result
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

NAME = "TaintToleration"


class TaintToleration:
    """Keeps clusters whose scheduling taints the placement tolerates."""

    @property
    def name(self) -> str:
        return NAME

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        if not cluster.taints or cluster.name in binding.targets:
            return framework.SUCCESS
        tolerations = binding.placement.placement.cluster_tolerations
        for taint in cluster.taints:
            if not rules.tolerations_tolerate_taint(tolerations, taint):
                return framework.unschedulable(f"cluster(s) had untolerated taint {{{taint_text(taint)}}}")
        return framework.SUCCESS

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        targeted = snapshot.tainted.intersection(binding.targets) if binding.targets else frozenset()
        return (binding.placement.tolerations_key, targeted)


def taint_text(taint: Taint) -> str:
    """A taint as Kubernetes prints it: ``key=value:effect`` (empty parts left out)."""
    value, effect = taint.value or "", taint.effect or ""
    if not effect:
        return f"{taint.key}={value}:" if value else taint.key
    return f"{taint.key}={value}:{effect}" if value else f"{taint.key}:{effect}"


def new() -> TaintToleration:
    return TaintToleration()
