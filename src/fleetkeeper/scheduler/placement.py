"""A placement, read once: the decisions it implies and hashable keys for its parts.

A binding's ``spec.placement`` is a pydantic model; the scheduler asks the same
questions of it many times (which strategy? are spread constraints ignored? which
affinity applies?) and needs hashable keys for its parts to share filter verdicts
between bindings of the same policy. :func:`placement_info` answers all of that once per
distinct placement and memoises the answer by the placement's JSON — which is also the
text of the ``policy.karmada.io/applied-placement`` annotation the scheduler writes.

The strategy rules are Karmada's, including the quirks a port must keep:

* no ``replicaScheduling`` means Duplicated;
* Divided + Weighted with dynamic weight → DynamicWeight, otherwise StaticWeight (a
  missing weight preference or an empty static list included); Divided without a
  division preference (the webhook did not default it) is unsupported;
* spread constraints are ignored for Divided + Weighted when the weight preference is
  missing, or when it has static weights and no dynamic weight;
* Duplicated (or no ``replicaScheduling``) selects clusters without looking at capacity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from fleetkeeper.api.constants import (
    DIVISION_AGGREGATED,
    DIVISION_WEIGHTED,
    REPLICA_SCHEDULING_DIVIDED,
    REPLICA_SCHEDULING_DUPLICATED,
    SPREAD_BY_CLUSTER,
)
from fleetkeeper.api.placement import ClusterAffinity, ClusterAffinityTerm, Placement, SpreadConstraint

Strategy = Literal["Duplicated", "Aggregated", "StaticWeight", "DynamicWeight", ""]


@dataclass(frozen=True, slots=True, eq=False)
class PlacementInfo:
    """What the scheduler derives from one placement (immutable; shared between bindings)."""

    placement: Placement
    #: the placement serialised (the applied-placement annotation)
    json: str
    strategy: Strategy
    spread: tuple[SpreadConstraint, ...]
    #: the last constraint per ``spreadByField`` (later ones win, as in Karmada)
    spread_by_field: dict[str, SpreadConstraint]
    ignores_spread: bool
    ignores_available: bool
    topology_ignored: bool
    #: the JSON of ``clusterTolerations`` (an equivalence key)
    tolerations_key: str
    #: (observed term, workload?) → (affinities, key), filled on first use
    _affinity_cache: dict[tuple[str, bool], tuple[tuple[ClusterAffinity, ...] | None, str]] = field(
        default_factory=dict)

    @property
    def replica_scheduling_type(self) -> str:
        return self.placement.replica_scheduling_type()

    def term(self, observed: str) -> ClusterAffinityTerm | None:
        """The ``clusterAffinities`` term named ``observed`` (``None`` when absent)."""
        for term in self.placement.cluster_affinities or ():
            if term.affinity_name == observed:
                return term
        return None

    def affinities(self, observed: str, workload: bool) -> tuple[ClusterAffinity, ...] | None:
        """The affinities a cluster must match one of; ``None`` = no constraint.

        ``clusterAffinity`` alone; else the observed term's inline affinity, followed by
        its overflow affinities for workloads."""
        return self._affinity(observed, workload)[0]

    def affinity_key(self, observed: str, workload: bool) -> str:
        """A hashable key of :meth:`affinities` (the JSON of what is matched)."""
        return self._affinity(observed, workload)[1]

    def _affinity(self, observed: str, workload: bool) -> tuple[tuple[ClusterAffinity, ...] | None, str]:
        cached = self._affinity_cache.get((observed, workload))
        if cached is None:
            chosen = self._choose_affinities(observed, workload)
            key = "" if chosen is None else "[" + ",".join(
                a.model_dump_json(by_alias=True, exclude_none=True) for a in chosen) + "]"
            cached = self._affinity_cache[(observed, workload)] = (chosen, key)
        return cached

    def _choose_affinities(self, observed: str, workload: bool) -> tuple[ClusterAffinity, ...] | None:
        if self.placement.cluster_affinity is not None:
            return (self.placement.cluster_affinity,)
        term = self.term(observed)
        if term is None:
            return None
        inline = ClusterAffinity(label_selector=term.label_selector, field_selector=term.field_selector,
                                 cluster_names=term.cluster_names, exclude=term.exclude)
        if not workload:
            return (inline,)
        return (inline, *(ClusterAffinity(label_selector=o.label_selector, field_selector=o.field_selector,
                                          cluster_names=o.cluster_names, exclude=o.exclude)
                          for o in term.overflow_affinities or ()))

    def overflow_enabled(self, observed: str) -> bool:
        """Whether replicas are assigned tier by tier (the observed term has overflow groups)."""
        if self.placement.cluster_affinity is not None or self.placement.cluster_affinities is None:
            return False
        if not observed:
            return False
        term = self.term(observed)
        return term is not None and term.overflow_affinities is not None


def strategy_of(placement: Placement) -> Strategy:
    """Karmada's assignment strategy for a placement ("" when unsupported)."""
    rs = placement.replica_scheduling
    if rs is None or rs.replica_scheduling_type == REPLICA_SCHEDULING_DUPLICATED:
        return "Duplicated"
    if rs.replica_scheduling_type != REPLICA_SCHEDULING_DIVIDED:
        return ""
    if rs.replica_division_preference == DIVISION_AGGREGATED:
        return "Aggregated"
    if rs.replica_division_preference == DIVISION_WEIGHTED:
        wp = rs.weight_preference
        return "DynamicWeight" if wp is not None and wp.dynamic_weight else "StaticWeight"
    return ""


def ignores_spread(placement: Placement) -> bool:
    """Whether spread constraints are ignored (Divided + Weighted with static weights)."""
    rs = placement.replica_scheduling
    if rs is None or rs.replica_scheduling_type != REPLICA_SCHEDULING_DIVIDED:
        return False
    if rs.replica_division_preference != DIVISION_WEIGHTED:
        return False
    wp = rs.weight_preference
    return wp is None or (bool(wp.static_weight_list) and not wp.dynamic_weight)


def ignores_available(placement: Placement) -> bool:
    """Whether cluster selection ignores capacity (Duplicated or no replicaScheduling)."""
    rs = placement.replica_scheduling
    return rs is None or rs.replica_scheduling_type == REPLICA_SCHEDULING_DUPLICATED


def _topology_ignored(placement: Placement) -> bool:
    spread = placement.spread_constraints or []
    if not spread or (len(spread) == 1 and spread[0].spread_by_field == SPREAD_BY_CLUSTER):
        return True
    return ignores_spread(placement)


_BY_JSON: dict[str, PlacementInfo] = {}
_BY_ID: dict[int, tuple[Placement, PlacementInfo]] = {}
_CACHE_LIMIT = 16384


def placement_info(placement: Placement) -> PlacementInfo:
    """The (memoised) :class:`PlacementInfo` of a placement."""
    hit = _BY_ID.get(id(placement))
    if hit is not None and hit[0] is placement:
        return hit[1]
    text = placement.model_dump_json(by_alias=True, exclude_none=True)
    info = _BY_JSON.get(text)
    if info is None:
        info = _compile(placement, text)
        if len(_BY_JSON) >= _CACHE_LIMIT:
            _BY_JSON.clear()
        _BY_JSON[text] = info
    if len(_BY_ID) >= _CACHE_LIMIT:
        _BY_ID.clear()
    _BY_ID[id(placement)] = (placement, info)
    return info


def _compile(placement: Placement, text: str) -> PlacementInfo:
    spread = tuple(placement.spread_constraints or ())
    by_field: dict[str, SpreadConstraint] = {c.spread_by_field: c for c in spread if c.spread_by_field}
    tolerations = "[" + ",".join(t.model_dump_json(by_alias=True, exclude_none=True)
                                 for t in placement.cluster_tolerations or ()) + "]"
    return PlacementInfo(
        placement=placement,
        json=text,
        strategy=strategy_of(placement),
        spread=spread,
        spread_by_field=by_field,
        ignores_spread=ignores_spread(placement),
        ignores_available=ignores_available(placement),
        topology_ignored=_topology_ignored(placement),
        tolerations_key=tolerations,
    )


__all__ = [
    "PlacementInfo", "Strategy", "ignores_available", "ignores_spread", "placement_info", "strategy_of",
]
