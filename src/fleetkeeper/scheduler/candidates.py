"""Feasible clusters as candidates: score, capacity and overflow tier, in global order.

Between the filters and the spread constraints, each feasible cluster becomes a
:class:`~fleetkeeper.scheduler.spread.Candidate` (Karmada's ``ClusterDetailInfo``):

* **score** — the summed score plugins;
* **allocatable** — what the general estimator says still fits (every cluster counts as
  unbounded for a non-workload, and an unbounded estimate reads as the replica count);
* **available** — allocatable plus what the binding already runs there;
* **overflow tier** — with ``clusterAffinities``, 0 for the observed term's own group,
  ``i + 1`` for its ``i``-th overflow group, 1000 for neither.

The estimates for one kind of replica, and the static weights of one policy, are
computed once per snapshot (they depend on the clusters, not on the binding).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from fleetkeeper.api import rules
from fleetkeeper.api.work import ResourceBindingSpec
from fleetkeeper.scheduler import estimator
from fleetkeeper.scheduler.assignment import static_weights
from fleetkeeper.scheduler.framework import BindingView, Fit
from fleetkeeper.scheduler.placement import PlacementInfo
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot
from fleetkeeper.scheduler.spread import Candidate, order_key

#: OverflowOrder of a cluster that matches no group of the observed term
NO_OVERFLOW_GROUP = 1000

RequestKey = tuple[tuple[str, str], ...] | None


def build(binding: BindingView, fit: Fit, scores: Sequence[int], snapshot: Snapshot) -> list[Candidate]:
    """The feasible clusters as candidates, sorted in the global order."""
    capacity = allocatable(binding.spec, fit.feasible, snapshot)
    overflow = overflow_orders(binding, fit.feasible)
    targets = binding.targets
    cands = [
        Candidate(c.name, scores[i], capacity[i] + targets.get(c.name, 0), capacity[i], overflow[i], c)
        for i, c in enumerate(fit.feasible)
    ]
    cands.sort(key=order_key)
    return cands


def capacity_key(spec: ResourceBindingSpec, snapshot: Snapshot) -> Hashable:
    """What :func:`allocatable` reads from the binding (for sharing candidates)."""
    if spec.replicas == 0 and not spec.components:
        return "non-workload"
    key = estimator.request_key(spec.replica_requirements)
    _, unbounded = _estimates(snapshot, key)
    return (key, spec.replicas) if unbounded else key


def allocatable(spec: ResourceBindingSpec, clusters: Sequence[ClusterFacts], snapshot: Snapshot) -> list[int]:
    """What still fits per cluster (Karmada's ``calAvailableReplicas`` with the general estimator)."""
    if spec.replicas == 0 and not spec.components:
        return [estimator.MAX_INT32] * len(clusters)
    per_cluster, _ = _estimates(snapshot, estimator.request_key(spec.replica_requirements))
    replicas = spec.replicas
    out = []
    for c in clusters:
        value = per_cluster[c.name]
        out.append(replicas if value == estimator.MAX_INT32 else value)
    return out


def _estimates(snapshot: Snapshot, key: RequestKey) -> tuple[dict[str, int], bool]:
    def compute() -> tuple[dict[str, int], bool]:
        request = None if key is None else estimator.request_of(key)
        values = {c.name: estimator.max_available_replicas(c.capacity, request) for c in snapshot.live}
        return values, estimator.MAX_INT32 in values.values()

    return snapshot.memo(("allocatable", key), compute)


def overflow_orders(binding: BindingView, clusters: Sequence[ClusterFacts]) -> list[int]:
    """Each cluster's overflow tier under the observed clusterAffinities term."""
    placement = binding.placement.placement
    if placement.cluster_affinity is not None or not placement.cluster_affinities:
        return [0] * len(clusters)
    if binding.placement.term(binding.observed_affinity) is None:
        return [NO_OVERFLOW_GROUP] * len(clusters)
    inline, *overflow = binding.placement.affinities(binding.observed_affinity, True) or ()
    orders = []
    for c in clusters:
        model = c.cluster
        if model is None or rules.cluster_matches(inline, model):
            orders.append(0)
            continue
        orders.append(next((i + 1 for i, a in enumerate(overflow) if rules.cluster_matches(a, model)),
                           NO_OVERFLOW_GROUP))
    return orders


def static_weights_of(info: PlacementInfo, snapshot: Snapshot) -> dict[str, int] | None:
    """The policy's static weight per cluster (``None`` without a weight preference)."""
    rs = info.placement.replica_scheduling
    if info.strategy != "StaticWeight" or rs is None or rs.weight_preference is None:
        return None
    static = rs.weight_preference.static_weight_list or []
    return snapshot.memo(("weights", info.json), lambda: static_weights(static, snapshot.live),
                         topology_only=True)


__all__ = ["NO_OVERFLOW_GROUP", "allocatable", "build", "capacity_key", "overflow_orders",
           "static_weights_of"]
