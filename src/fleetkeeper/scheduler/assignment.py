"""Replica assignment: how many replicas each selected cluster gets.

Strategies (chosen in :mod:`~fleetkeeper.scheduler.placement`):

* **Duplicated** — every selected cluster runs all replicas; capacity is not checked.
* **StaticWeight** — replicas are apportioned by Webster over the static weights (a
  cluster's weight is the largest weight of the rules whose ``targetCluster`` matches
  it; clusters no rule matches get nothing; with no matching rule at all every cluster
  weighs 1). The previous assignment plays no part, so a static result only depends on
  the weights and the replica count.
* **DynamicWeight** / **Aggregated** — weights are what still fits on each cluster, and
  the previous assignment is kept:

  - *scale down* (more assigned than wanted): the old replicas are the weights, and the
    new total is apportioned over them — every cluster shrinks in proportion;
  - *scale up* (fewer assigned, which includes the first schedule and a cluster lost to
    failover): only the missing replicas are placed, weighted by free capacity, and
    added to what each cluster already runs;
  - *fresh* (an explicit reschedule): everything is placed from scratch, each cluster
    weighted by its free capacity plus what it runs now;
  - Aggregated additionally keeps the fewest clusters: clusters already in use first,
    then by capacity, cut at the shortest prefix that holds the target.

* **Overflow tiers** (a ``clusterAffinities`` term with ``overflowAffinities``): the
  replicas fill the inline group's capacity first, then each overflow group in turn.

Only Divided workloads reach the strategies; a non-workload (no replicas and no
requirements) is placed on every selected cluster without a replica count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from fleetkeeper.api import rules
from fleetkeeper.api.placement import StaticClusterWeight
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.gosort import go_sort
from fleetkeeper.scheduler.placement import PlacementInfo
from fleetkeeper.scheduler.snapshot import ClusterFacts
from fleetkeeper.scheduler.spread import Candidate
from fleetkeeper.scheduler.webster import apportion, larger_name_wins, spread_cached

#: the result of an assignment: ``(cluster name, replicas)`` in result order
Assignment = list[tuple[str, int]]


def static_weights(rules_: Sequence[StaticClusterWeight], clusters: Iterable[ClusterFacts]) -> dict[str, int]:
    """Each cluster's static weight: the largest weight among the rules matching it (0 = none)."""
    weights: dict[str, int] = {}
    for facts in clusters:
        weight = 0
        for rule in rules_:
            if rule.weight > weight and facts.cluster is not None and rules.cluster_matches(
                    rule.target_cluster, facts.cluster):
                weight = rule.weight
        weights[facts.name] = weight
    return weights


def assign_replicas(
    selected: Sequence[Candidate],
    info: PlacementInfo,
    *,
    replicas: int,
    divide: bool,
    previous: Sequence[tuple[str, int]] = (),
    uid: str = "",
    fresh: bool = False,
    observed: str = "",
    weights: Mapping[str, int] | None = None,
) -> Assignment:
    """Karmada's ``AssignReplicas`` over the selected clusters.

    ``divide``: the binding is a single-template workload (replicas or requirements);
    ``previous``: ``spec.clusters``; ``fresh``: an explicit reschedule was requested;
    ``weights``: static weights per cluster (``None`` when the policy has no weight
    preference, meaning 1 each)."""
    if not selected:
        raise ScheduleError("no clusters available to schedule")
    if not divide:
        return [(c.name, 0) for c in selected]
    if not info.overflow_enabled(observed):
        return _assign(selected, info, replicas, previous, uid, fresh, weights)
    tiers: dict[int, list[Candidate]] = {}
    for c in selected:
        tiers.setdefault(c.overflow_order, []).append(c)
    result: Assignment = []
    remaining = replicas
    for order in sorted(tiers):
        tier = tiers[order]
        target = min(remaining, sum(c.available for c in tier))
        result.extend(_assign(tier, info, target, previous, uid, fresh, weights))
        remaining -= target
        if remaining <= 0:
            break
    if remaining > 0:
        raise UnschedulableError("Clusters available replicas are not enough to schedule.")
    return result


def _assign(cands: Sequence[Candidate], info: PlacementInfo, replicas: int,
            previous: Sequence[tuple[str, int]], uid: str, fresh: bool,
            weights: Mapping[str, int] | None) -> Assignment:
    strategy = info.strategy
    if strategy == "Duplicated":
        result = assign_duplicated(cands, replicas)
    elif strategy == "StaticWeight":
        result = assign_static(cands, replicas, weights, uid)
    elif strategy in ("DynamicWeight", "Aggregated"):
        aggregated = strategy == "Aggregated"
        result = assign_dynamic(cands, replicas, previous, uid, fresh=fresh, aggregated=aggregated)
    else:
        rs = info.placement.replica_scheduling
        preference = (rs.replica_division_preference or "") if rs is not None else ""
        raise ScheduleError(
            "unsupported replica scheduling strategy, "
            f"replicaSchedulingType: {info.replica_scheduling_type}, "
            f"replicaDivisionPreference: {preference}, please try another scheduling strategy")
    return [(name, r) for name, r in result if r > 0]


def assign_duplicated(cands: Sequence[Candidate], replicas: int) -> Assignment:
    """Every cluster runs all replicas."""
    return [(c.name, replicas) for c in cands]


def assign_static(cands: Sequence[Candidate], replicas: int, weights: Mapping[str, int] | None, uid: str = ""
                  ) -> Assignment:
    """Apportion by static weight (Webster, name-sorted, zero seats included)."""
    if weights is None:
        votes = [(c.name, 1) for c in cands]
    else:
        votes = [(c.name, weights.get(c.name, 0)) for c in cands if weights.get(c.name, 0) > 0]
        if not votes:
            votes = [(c.name, 1) for c in cands]
    return list(spread_cached(replicas, tuple(sorted(votes)), larger_name_wins(uid)))


def assign_dynamic(cands: Sequence[Candidate], replicas: int, previous: Sequence[tuple[str, int]],
                   uid: str = "",
                   *, fresh: bool = False, aggregated: bool = False) -> Assignment:
    """The dynamic strategies (DynamicWeight, Aggregated): scale down, scale up or fresh."""
    names = {c.name for c in cands}
    scheduled = [(name, r) for name, r in previous if name in names]
    assigned = sum(r for _, r in scheduled)
    if fresh:
        kept = dict(scheduled)
        avail = [(c.name, c.allocatable + kept.get(c.name, 0)) for c in cands]
        return _divide(replicas, avail, [], uid, aggregated, "failed to do fresh scale")
    if assigned > replicas:
        return _divide(replicas, list(scheduled), [], uid, aggregated, "failed to scale down")
    if assigned < replicas:
        avail = [(c.name, c.allocatable) for c in cands]
        return _divide(replicas - assigned, avail, scheduled, uid, aggregated, "failed to scale up")
    return scheduled


def _divide(target: int, avail: list[tuple[str, int]], scheduled: list[tuple[str, int]], uid: str,
            aggregated: bool, context: str) -> Assignment:
    total = sum(r for _, r in avail)
    if total < target:
        message = f"Clusters available replicas {total} are not enough to schedule."
        raise UnschedulableError(message).wrap(context)
    if aggregated:
        go_sort(avail, lambda a, b: a[1] > b[1])
        prior = {name for name, r in scheduled if r > 0}
        if prior:
            avail = [a for a in avail if a[0] in prior] + [a for a in avail if a[0] not in prior]
        running = 0
        for i, (_, r) in enumerate(avail):
            running += r
            if running >= target:
                avail = avail[:i + 1]
                break
    if sum(r for _, r in avail) == 0:
        return merge(scheduled, [])
    new = apportion(target, dict(avail), larger_name_first=larger_name_wins(uid))
    return merge(scheduled, new)


def merge(scheduled: Sequence[tuple[str, int]], new: Sequence[tuple[str, int]]) -> Assignment:
    """Add the previous replicas to the new ones; keep previous clusters the new result lacks."""
    if not scheduled:
        return list(new)
    if not new:
        return list(scheduled)
    old = dict(scheduled)
    result = [(name, r + old.get(name, 0)) for name, r in new]
    placed = {name for name, _ in new}
    result.extend((name, r) for name, r in scheduled if name not in placed)
    return result


__all__ = [
    "Assignment", "assign_duplicated", "assign_dynamic", "assign_replicas", "assign_static", "merge",
    "static_weights",
]
