"""Cluster changes → the bindings they concern (Karmada's cluster fan-out), kept cheap.

When a cluster's labels or spec change (a taint, a deletion), Karmada's scheduler
re-queues every binding whose affinity selects it. With many bindings that walk is long:
inside the Cluster informer's handler it would hold up every other informer and
controller, and the scheduler would re-read every binding only to find most had nothing
to do. Here:

* **an index** (:data:`BY_CLUSTER`) over the binding informers gives, per cluster name,
  the bindings whose affinity names it or that are placed on it; bindings whose
  affinity selects by labels or fields (or that have none) sit under :data:`ANY` and
  are looked at for every cluster;
* **a queue** — the handler only queues the cluster's name; a small controller does the
  walk, yielding to the event loop every :data:`CHUNK` bindings, so evictions and
  writes go on meanwhile;
* **only what would move** — a binding is queued when its affinity selects the cluster
  (or it is placed there) *and* one of the scheduler's triggers fires for it
  (:func:`~fleetkeeper.scheduler.triggers.schedule_trigger`), or it is parked waiting for
  a cluster change. The reconcile would check the same triggers and stop; a binding
  whose own spec changes meanwhile is queued by its own event anyway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from fleetkeeper.api import rules
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.constants import APPLIED_PLACEMENT_ANNOTATION
from fleetkeeper.api.placement import ClusterAffinity
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.scheduler.triggers import affinity_index, schedule_trigger

BindingInformer = Informer[ResourceBinding] | Informer[ClusterResourceBinding]

#: index of the binding informers: cluster name → bindings a change of that cluster concerns
BY_CLUSTER = "scheduler/clusters"
#: the index value of bindings that concern every cluster
ANY = "*"
#: the fan-out yields to the event loop after this many bindings
CHUNK = 128


class Target(Protocol):
    """What the fan-out needs of the scheduler."""

    parked: set[Request]

    def enqueue(self, request: Request) -> None: ...

    def is_ours(self, binding: Binding) -> bool: ...


def _affinities(binding: Binding) -> list[ClusterAffinity | None]:
    placement = binding.spec.placement
    if placement is None:
        return []
    if placement.cluster_affinities is None:
        return [placement.cluster_affinity]
    out: list[ClusterAffinity | None] = []
    for term in placement.cluster_affinities:
        out.append(term)
        out.extend(term.overflow_affinities or ())
    return out


def index_values(binding: Binding) -> list[str]:
    """:data:`BY_CLUSTER` values: the clusters named by the affinities (or :data:`ANY`) and placed on."""
    names = {t.name for t in binding.spec.clusters or ()}
    for affinity in _affinities(binding):
        if affinity is None or not affinity.cluster_names:
            names.add(ANY)
        else:
            names.update(affinity.cluster_names)
    return sorted(names)


def concerns(binding: Binding, cluster: Cluster) -> bool:
    """Whether the binding's affinity selects ``cluster`` (Karmada's ``enqueueAffectedBindings``):
    its observed term of ``clusterAffinities`` (every term while a new generation is unobserved)."""
    placement = binding.spec.placement
    if placement is None:
        return False
    affinity = placement.cluster_affinity
    if placement.cluster_affinities is not None:
        if binding.status.scheduler_observed_generation != (binding.metadata.generation or 0):
            return True
        terms = placement.cluster_affinities
        observed = binding.status.scheduler_observed_affinity_name or ""
        affinity = terms[affinity_index(terms, observed)] if terms else None
    return affinity is None or rules.cluster_matches(affinity, cluster)


def would_schedule(binding: Binding, deleting: Sequence[str]) -> bool:
    """Whether a trigger fires for the binding as the cache holds it."""
    annotation = binding.annotations().get(APPLIED_PLACEMENT_ANNOTATION, "")
    return schedule_trigger(binding.spec, binding.status, annotation, deleting) is not None


class ClusterFanOut:
    """Reconciles one cluster name into the binding keys its change concerns."""

    def __init__(self, target: Target, clusters: Informer[Cluster],
                 bindings: Sequence[BindingInformer]) -> None:
        self._target = target
        self._clusters = clusters
        self._bindings = bindings

    def candidates(self, name: str) -> Iterator[Binding]:
        """The bindings indexed under ``name`` or :data:`ANY`, in key order per informer."""
        for informer in self._bindings:
            found: dict[str, Binding] = {}
            for value in (name, ANY):
                for binding in informer.by_index(BY_CLUSTER, value):
                    found[binding.key] = binding
            for key in sorted(found):
                yield found[key]

    async def reconcile(self, request: Request) -> Result:
        cluster = self._clusters.get(request.name)
        if cluster is None:
            return Result()  # a deleted cluster wakes the parked bindings (see ClusterEvents)
        deleting = [c.name for c in self._clusters.list() if c.metadata.deletion_timestamp is not None]
        for count, binding in enumerate(self.candidates(cluster.name), start=1):
            if self.wanted(binding, cluster, deleting):
                self._target.enqueue(Request.for_object(binding))
            if count % CHUNK == 0:
                await asyncio.sleep(0)
        return Result()

    def wanted(self, binding: Binding, cluster: Cluster, deleting: Sequence[str]) -> bool:
        placed = any(t.name == cluster.name for t in binding.spec.clusters or ())
        if not self._target.is_ours(binding) or not (placed or concerns(binding, cluster)):
            return False
        return Request.for_object(binding) in self._target.parked or would_schedule(binding, deleting)


class ClusterEvents:
    """The Cluster informer's handler: a fresh snapshot next time, fan-outs, parked wake-ups."""

    def __init__(self, invalidate: Callable[[Cluster | None], None], fan_out: Callable[[Request], None],
                 parked: Callable[[], Iterable[Request]], wake: Callable[[Request], None]) -> None:
        self._invalidate = invalidate
        self._fan_out = fan_out
        self._parked = parked
        self._wake = wake

    def on_add(self, obj: Cluster) -> None:
        self._invalidate(obj)
        self._wake_parked()

    def on_update(self, old: Cluster, new: Cluster) -> None:
        self._invalidate(new)
        deleting = new.metadata.deletion_timestamp is not None and old.metadata.deletion_timestamp is None
        if deleting or old.labels() != new.labels() or old.metadata.generation != new.metadata.generation:
            self._fan_out(Request.for_object(new))
        if _visible_change(old, new):
            self._wake_parked()

    def on_delete(self, obj: Cluster) -> None:
        self._invalidate(None)
        self._wake_parked()

    def _wake_parked(self) -> None:
        for request in sorted(self._parked()):
            self._wake(request)


def _visible_change(old: Cluster, new: Cluster) -> bool:
    """Whether the scheduler can see the change (labels, spec, deletion, APIs, capacity)."""
    return (old.labels() != new.labels() or old.spec != new.spec
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
            or old.status.api_enablements != new.status.api_enablements
            or old.status.resource_summary != new.status.resource_summary)


__all__ = ["ANY", "BY_CLUSTER", "CHUNK", "ClusterEvents", "ClusterFanOut", "concerns", "index_values",
           "would_schedule"]
