"""Karmada's eviction metrics for the taint manager's eviction queue.

Karmada's taint manager has two eviction queues, ``binding-eviction`` and
``cluster-binding-eviction``; fleetkeeper's has one for both kinds, so a key is counted
under the name of its kind (a namespaced key is a ResourceBinding). What is pending is
remembered per key — the cluster that queued it and its workload's kind — so a key
queued twice before it is processed counts once, like the queue itself:

* ``eviction_queue_depth{name}`` — keys queued and not yet processed successfully;
* ``eviction_kind_total{member_cluster, resource_kind}`` — the same, by cluster and kind;
* ``eviction_processing_latency_seconds{name}`` and ``eviction_processing_total{name, result}``
  — every processing of a key, timed on the injected clock.
"""

from __future__ import annotations

from fleetkeeper.api.work import Binding
from fleetkeeper.clock import Clock
from fleetkeeper.runtime import karmada_metrics as km
from fleetkeeper.runtime.reconcile import Reconciler, Request, Result

BINDINGS, CLUSTER_BINDINGS = "binding-eviction", "cluster-binding-eviction"


def queue_name(request: Request) -> str:
    """The Karmada eviction queue a key belongs to."""
    return BINDINGS if request.namespace else CLUSTER_BINDINGS


class EvictionMetrics:
    """The pending keys of one eviction queue and the gauges they make."""

    def __init__(self) -> None:
        self._pending: dict[Request, tuple[str, str]] = {}

    def queued(self, binding: Binding, cluster: str) -> None:
        """``binding`` was queued for eviction because of ``cluster``."""
        request = Request.for_object(binding)
        if request in self._pending:
            return
        kind = binding.spec.resource.kind
        self._pending[request] = (cluster, kind)
        km.child(km.EVICTION_KIND, cluster, kind).inc()
        km.child(km.EVICTION_QUEUE_DEPTH, queue_name(request)).inc()

    def processed(self, request: Request, seconds: float, *, failed: bool) -> None:
        """One processing of ``request``; a success ends its pending eviction."""
        name = queue_name(request)
        km.child(km.EVICTION_SECONDS, name).observe(seconds)
        km.child(km.EVICTION_TOTAL, name, km.result_of(failed)).inc()
        if failed:
            return
        found = self._pending.pop(request, None)
        if found is not None:
            km.child(km.EVICTION_KIND, *found).dec()
            km.child(km.EVICTION_QUEUE_DEPTH, name).dec()


class Metered:
    """A reconciler whose every reconcile is reported to :class:`EvictionMetrics`."""

    def __init__(self, inner: Reconciler, metrics: EvictionMetrics, clock: Clock) -> None:
        self._inner = inner
        self._metrics = metrics
        self._clock = clock

    async def reconcile(self, request: Request) -> Result:
        started, done = self._clock.monotonic(), False
        try:
            result = await self._inner.reconcile(request)
            done = True
        finally:
            self._metrics.processed(request, self._clock.monotonic() - started, failed=not done)
        return result


__all__ = ["BINDINGS", "CLUSTER_BINDINGS", "EvictionMetrics", "Metered", "queue_name"]
