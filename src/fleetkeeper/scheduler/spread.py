"""Spread constraints: ordering candidates, grouping them, and choosing clusters.

Input: the feasible clusters as :class:`Candidate` values (score, capacity, overflow
tier). Output: the ordered clusters replica assignment will use. Karmada's rules:

* **Global order** — overflow tier ascending, score descending, available replicas
  descending, name ascending (a total order, so the result never depends on input order).
* **No spread constraints** (or ignored, see :mod:`~fleetkeeper.scheduler.placement`):
  every candidate, in global order.
* **By cluster** (``spreadByField: cluster``): at least ``minGroups`` candidates, take
  the first ``maxGroups``; for Divided workloads, swap in larger clusters from the rest
  (back to front) until their capacity covers the replicas.
* **By region**: regions are groups worth their cluster count and weighted by a group
  score; a depth-first search picks the region set (``minGroups``..``maxGroups`` regions
  holding at least the cluster constraint's ``minGroups`` clusters), each chosen region
  contributes its best cluster, and the best remaining ones fill up to ``maxGroups``.
* ``zone`` and ``provider`` constraints only filter (a cluster must have the field);
  alone, without a cluster or region constraint, they are an error, as in Karmada.

Errors here are plain scheduling errors (retried with backoff), never "unschedulable".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from fleetkeeper.api.placement import SpreadConstraint
from fleetkeeper.scheduler.errors import ScheduleError
from fleetkeeper.scheduler.placement import PlacementInfo
from fleetkeeper.scheduler.snapshot import ClusterFacts

WEIGHT_UNIT = 1000
_NO_CONSTRAINT = SpreadConstraint()


class Candidate(NamedTuple):
    """A feasible cluster as selection and assignment see it (Karmada's ClusterDetailInfo).

    A named tuple: hundreds are made per scheduling run, and tuples are the cheapest
    immutable record Python builds."""

    name: str
    score: int = 0
    #: what the estimator says still fits, plus what the binding already runs there
    available: int = 0
    #: what the estimator says still fits
    allocatable: int = 0
    overflow_order: int = 0
    facts: ClusterFacts | None = None


def order_key(c: Candidate) -> tuple[int, int, int, str]:
    """The global candidate order."""
    return (c.overflow_order, -c.score, -c.available, c.name)


@dataclass(frozen=True, slots=True)
class Group:
    """Clusters sharing a topology value (a region), in global order, with a group score."""

    name: str
    score: int = 0
    clusters: tuple[Candidate, ...] = ()


# --------------------------------------------------------------------------- group scores


def group_score(clusters: Sequence[Candidate], *, duplicated: bool, replicas: int, min_groups: int,
                cluster_min_groups: int) -> int:
    """How attractive a group is (Karmada's ``calcGroupScore``)."""
    if duplicated:
        valid = [c for c in clusters if c.available >= replicas]
        if not valid:
            return 0
        return len(valid) * WEIGHT_UNIT + sum(c.score for c in valid) // len(valid)
    target = _divided_target(replicas, min_groups)
    need = max(cluster_min_groups, min_groups)
    total = score = n = 0
    for c in clusters:
        total += c.available
        score += c.score
        n += 1
        if n >= need and total >= target:
            break
    if total < target:
        return total * WEIGHT_UNIT + score // len(clusters)
    return _wrap64(target * WEIGHT_UNIT) + score // n


def _divided_target(replicas: int, min_groups: int) -> int:
    if min_groups <= 0:
        # Go converts +Inf (or NaN) to the smallest int64 on amd64
        return -(2**63)
    return math.ceil(replicas / min_groups)


def _wrap64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def group_by(ordered: Sequence[Candidate], by: str, info: PlacementInfo, replicas: int) -> dict[str, Group]:
    """Topology groups (``zone``, ``region`` or ``provider``) with their scores.

    A cluster joins one zone group per entry of ``spec.zones``; clusters without the
    field are left out. Only region groups drive selection; the others exist for
    parity with Karmada's grouping."""
    members: dict[str, list[Candidate]] = {}
    for c in ordered:
        facts = c.facts
        if facts is None:
            continue
        for key in (facts.zones if by == "zone" else (getattr(facts, by),)):
            if key:
                group = members.get(key)
                if group is None:
                    members[key] = [c]
                else:
                    group.append(c)
    own = info.spread_by_field.get(by, _NO_CONSTRAINT)
    cluster = info.spread_by_field.get("cluster", _NO_CONSTRAINT)
    duplicated = info.replica_scheduling_type == "Duplicated"
    return {
        name: Group(name, group_score(cs, duplicated=duplicated, replicas=replicas, min_groups=own.min_groups,
                                      cluster_min_groups=cluster.min_groups), tuple(cs))
        for name, cs in members.items()
    }


# --------------------------------------------------------------------------- selectGroups


@dataclass(frozen=True, slots=True)
class GroupChoice:
    """A group for :func:`select_groups`: its name, value (cluster count) and weight (score)."""

    name: str
    value: int
    weight: int


def select_groups(groups: Iterable[GroupChoice], min_groups: int, max_groups: int, target: int
                  ) -> list[GroupChoice]:
    """Choose between ``min_groups`` and ``max_groups`` groups whose values reach ``target``.

    Depth-first over combinations of groups sorted by value ascending; among the feasible
    combinations the heaviest wins, then the most valuable, then the first found — and
    a shorter combination that is a prefix of the winner replaces it."""
    ordered = sorted(groups, key=lambda g: (g.value, -g.weight, g.name))
    if not ordered:
        return []
    paths: list[tuple[int, list[GroupChoice], int, int]] = []
    path: list[GroupChoice] = []

    def dfs(total: int, begin: int) -> None:
        if total >= target and min_groups <= len(path) <= max_groups:
            chosen = sorted(path, key=lambda g: (-g.weight, g.name))
            paths.append((len(paths) + 1, chosen, sum(g.weight for g in path), sum(g.value for g in path)))
            return
        if len(path) >= max_groups:
            return
        for i in range(begin, len(ordered)):
            path.append(ordered[i])
            dfs(total + ordered[i].value, i + 1)
            if len(ordered) == min_groups:
                break
            path.pop()

    dfs(0, 0)
    if not paths:
        return []
    if len(paths) == 1:
        return paths[0][1]
    paths.sort(key=lambda p: (-p[2], -p[3], p[0]))
    final = paths[0][1]
    for _, groups_, _, _ in paths[1:]:
        if len(groups_) < len(final) and all(final[j].name == g.name for j, g in enumerate(groups_)):
            final = groups_
    return final


# --------------------------------------------------------------------------- selection


def select_by_cluster(ordered: Sequence[Candidate], constraint: SpreadConstraint, need_replicas: int | None
                      ) -> list[Candidate]:
    """Pick clusters for a ``cluster`` constraint (``need_replicas=None`` ignores capacity)."""
    if len(ordered) < constraint.min_groups:
        raise ScheduleError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    k = min(len(ordered), constraint.max_groups)
    if need_replicas is None:
        return list(ordered[:k])
    chosen, rest = list(ordered[:k]), list(ordered[k:])
    i = k - 1
    while sum(c.available for c in chosen) < need_replicas and i >= 0:
        best, best_avail = -1, chosen[i].available
        for j, c in enumerate(rest):
            if c.available > best_avail:
                best, best_avail = j, c.available
        if best >= 0:
            chosen[i], rest[best] = rest[best], chosen[i]
        i -= 1
    if sum(c.available for c in chosen) < need_replicas or not chosen:
        raise ScheduleError(f"no enough resource when selecting {k} clusters")
    return chosen


def select_by_region(regions: Mapping[str, Group], region_c: SpreadConstraint, cluster_c: SpreadConstraint
                     ) -> list[Candidate]:
    """Pick clusters for a ``region`` constraint (and the ``cluster`` one beside it)."""
    if len(regions) < region_c.min_groups:
        raise ScheduleError("the number of feasible region is less than spreadConstraint.MinGroups")
    choices = [GroupChoice(g.name, len(g.clusters), g.score) for g in regions.values()]
    picked = select_groups(choices, region_c.min_groups, region_c.max_groups, cluster_c.min_groups)
    if not picked:
        raise ScheduleError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    selected: list[Candidate] = []
    spare: list[Candidate] = []
    for choice in picked:
        first, *others = regions[choice.name].clusters
        selected.append(first)
        spare.extend(others)
    rest = min(len(selected) + len(spare), cluster_c.max_groups) - len(selected)
    if rest > 0:
        selected.extend(sorted(spare, key=order_key)[:rest])
    return selected


def select_clusters(ordered: Sequence[Candidate], info: PlacementInfo, replicas: int) -> list[Candidate]:
    """Karmada's ``SelectBestClusters`` over candidates already in global order."""
    if not info.spread or info.ignores_spread:
        return list(ordered)
    need: int | None = None if info.ignores_available else replicas
    if "region" in info.spread_by_field:
        regions = group_by(ordered, "region", info, replicas)
        return select_by_region(regions, info.spread_by_field["region"],
                                info.spread_by_field.get("cluster", _NO_CONSTRAINT))
    if "cluster" in info.spread_by_field:
        return select_by_cluster(ordered, info.spread_by_field["cluster"], need)
    raise ScheduleError("just support cluster and region spread constraint")


__all__ = [
    "WEIGHT_UNIT", "Candidate", "Group", "GroupChoice", "group_by", "group_score", "order_key",
    "select_by_cluster", "select_by_region", "select_clusters", "select_groups",
]
