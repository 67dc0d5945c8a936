"""What the scheduler knows about clusters: facts parsed once, and a snapshot of them.

A scheduling run reads the same few things about every cluster — labels, topology,
taints, enabled APIs, capacity — for every binding. Reading them from the pydantic
``Cluster`` each time would dominate the run, so each cluster is turned into a frozen
:class:`ClusterFacts` once per cluster *version* (its ``resourceVersion``); a
:class:`SnapshotBuilder` keeps the facts of unchanged clusters from one snapshot to
the next.

A :class:`Snapshot` is an immutable view of all clusters at one moment, plus a memo
table: anything computed from the snapshot and a hashable key (a filter verdict for an
equivalence class of bindings, the capacity left for a kind of replica, the candidate
order) is computed once per snapshot and shared by every binding that asks again. No
entry outlives the cluster state it was computed from.

The memo is split by what an entry reads. Filters and scores read only a cluster's
*topology* — name, labels, spec (taints, provider, region, zones …), enabled APIs and
whether it is being deleted; capacity estimates also read its resource summary. While
pods move, clusters report new summaries every status period, and a new snapshot with an
empty memo would make every binding re-run every filter on every cluster. The builder
therefore hands a new snapshot the previous one's topology entries when no
cluster's topology changed (and all of its entries when nothing the scheduler reads
changed at all); entries that read capacity ask for the capacity memo (the default).

Memo tables a new snapshot does not keep are *retired*, not dropped: freeing tens of
thousands of entries at once stalls the loop, and the first build after a cluster's taint
changes topology — on the failover's critical path, just before the first rescheduling.
Each build frees :data:`RETIRE_STEP` retired entries instead.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.constants import EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE
from fleetkeeper.api.core import Taint
from fleetkeeper.scheduler.estimator import Capacity, capacity_of

T = TypeVar("T")

#: memo entries per snapshot before the table is cleared (bounds memory; entries are small:
#: sparse verdict and score maps, and candidate lists only for bindings that share them)
MEMO_LIMIT = 50_000
#: retired memo entries freed per build (see the module notes)
RETIRE_STEP = 512


@dataclass(frozen=True, slots=True, eq=False)
class ClusterFacts:
    """Everything the scheduler reads about one cluster, parsed once."""

    name: str
    cluster: Cluster | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    zone: str = ""
    zones: tuple[str, ...] = ()
    #: the ``NoSchedule`` and ``NoExecute`` taints, in the cluster's order
    taints: tuple[Taint, ...] = ()
    #: ``(groupVersion, kind)`` of every enabled API
    apis: frozenset[tuple[str, str]] = frozenset()
    deleting: bool = False
    capacity: Capacity | None = None
    version: str = ""
    #: everything filters and scores may read (labels, spec, APIs, deletion), as one comparable value
    topology: str = ""


def facts_of(cluster: Cluster) -> ClusterFacts:
    """Parse one cluster's facts."""
    spec, status = cluster.spec, cluster.status
    apis = frozenset(
        (enablement.group_version, resource.kind)
        for enablement in status.api_enablements or []
        for resource in enablement.resources or []
    )
    taints = tuple(t for t in spec.taints or [] if t.effect in (EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE))
    return ClusterFacts(
        name=cluster.name,
        cluster=cluster,
        labels=dict(cluster.labels()),
        provider=spec.provider or "",
        region=spec.region or "",
        zone=spec.zone or "",
        zones=tuple(spec.zones or ()),
        taints=taints,
        apis=apis,
        deleting=cluster.metadata.deletion_timestamp is not None,
        capacity=capacity_of(cluster),
        version=cluster.metadata.resource_version or "",
        topology=_topology(cluster, apis),
    )


def _topology(cluster: Cluster, apis: frozenset[tuple[str, str]]) -> str:
    parts = [cluster.name, cluster.labels(), cluster.spec.to_dict(), sorted(apis),
             cluster.metadata.deletion_timestamp is not None]
    return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS).decode()


class Snapshot:
    """All clusters at one moment (ordered by name) and the memo of what was derived."""

    def __init__(self, clusters: Iterable[ClusterFacts], *,
                 memos: tuple[dict[Hashable, Any], dict[Hashable, Any]] | None = None) -> None:
        self.clusters: tuple[ClusterFacts, ...] = tuple(sorted(clusters, key=lambda c: c.name))
        #: clusters that are not being deleted: the only ones scheduling considers
        self.live: tuple[ClusterFacts, ...] = tuple(c for c in self.clusters if not c.deleting)
        self.by_name: dict[str, ClusterFacts] = {c.name: c for c in self.clusters}
        self.deleting: frozenset[str] = frozenset(c.name for c in self.clusters if c.deleting)
        self.tainted: frozenset[str] = frozenset(c.name for c in self.clusters if c.taints)
        #: (entries that read topology only, entries that may read capacity too)
        self.memos: tuple[dict[Hashable, Any], dict[Hashable, Any]] = memos or ({}, {})

    def __len__(self) -> int:
        return len(self.clusters)

    def memo(self, key: Hashable, compute: Callable[[], T], *, topology_only: bool = False) -> T:
        """The value derived for ``key`` from this snapshot, computed on first use.

        ``topology_only``: the value reads nothing of the clusters' capacity, so it may be
        kept by the next snapshot when only capacities changed (see the module notes)."""
        table = self.memos[0] if topology_only else self.memos[1]
        try:
            return table[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        if len(table) >= MEMO_LIMIT:
            table.clear()
        value = compute()
        table[key] = value
        return value


class SnapshotBuilder:
    """Builds snapshots, re-parsing only the clusters whose version changed."""

    def __init__(self) -> None:
        self._facts: dict[str, ClusterFacts] = {}
        #: facts parsed ahead of the next build (:meth:`prepare`), by cluster name
        self._ready: dict[str, ClusterFacts] = {}
        self._last: Snapshot | None = None
        #: memo tables no snapshot uses any more, freed a step per build
        self._retired: list[dict[Hashable, Any]] = []

    def prepare(self, cluster: Cluster) -> None:
        """Parse a new version of a cluster now, so the next build only assembles.

        Called for every Cluster event: clusters report status all the time, and a
        build after a quiet spell would otherwise re-parse every cluster at once — on the
        failover's critical path, the first scheduling after a taint."""
        version = cluster.metadata.resource_version or ""
        known = self._ready.get(cluster.name) or self._facts.get(cluster.name)
        if not version or known is None or known.version != version:
            self._ready[cluster.name] = facts_of(cluster)

    def build(self, clusters: Iterable[Cluster]) -> Snapshot:
        facts: dict[str, ClusterFacts] = {}
        for cluster in clusters:
            version = cluster.metadata.resource_version or ""
            known = next((f for f in (self._ready.get(cluster.name), self._facts.get(cluster.name))
                          if f is not None and version and f.version == version), None)
            facts[cluster.name] = known if known is not None else facts_of(cluster)
        self._ready.clear()
        before, self._facts = self._facts, facts
        last = self._last
        memos = self._carried(before, facts)
        self._retire_step()
        if last is not None:
            kept = memos or ()
            self._retired.extend(t for t in last.memos if t and not any(t is k for k in kept))
        self._last = Snapshot(facts.values(), memos=memos)
        return self._last

    def _retire_step(self) -> None:
        """Free up to :data:`RETIRE_STEP` retired memo entries."""
        budget = RETIRE_STEP
        while self._retired and budget:
            table = self._retired[-1]
            step = min(budget, len(table))
            for _ in range(step):
                table.popitem()
            budget -= step
            if not table:
                self._retired.pop()

    def _carried(self, before: Mapping[str, ClusterFacts], after: Mapping[str, ClusterFacts]
                 ) -> tuple[dict[Hashable, Any], dict[Hashable, Any]] | None:
        """The memo tables the new snapshot may keep from the previous one (see the module notes)."""
        if self._last is None or before.keys() != after.keys():
            return None
        if any(before[name].topology != after[name].topology for name in after):
            return None
        topology, capacity = self._last.memos
        if all(before[name].capacity == after[name].capacity for name in after):
            return topology, capacity
        return topology, {}


def snapshot_of(clusters: Iterable[Cluster]) -> Snapshot:
    """A one-off snapshot (the CLI and tests)."""
    return Snapshot(facts_of(c) for c in clusters)


__all__ = ["MEMO_LIMIT", "RETIRE_STEP", "ClusterFacts", "Snapshot", "SnapshotBuilder", "facts_of",
           "snapshot_of"]
