"""The taint-manager: bindings leave clusters whose NoExecute taints they do not tolerate.

Two queues, as in Karmada, over one state:

* **cluster fan-out** — a cluster with NoExecute taints is looked at once per change:
  the bindings scheduled onto it are found through an informer *index* (cluster name →
  bindings, over ``spec.clusters``), never by listing the store, and each is queued
  for eviction now, queued for the instant its toleration runs out (``timeAdded +
  tolerationSeconds``), or — tolerated forever — not queued at all. The fan-out yields
  to the event loop as it goes, so the first evictions start while it is still walking
  ten thousand bindings.
* **eviction** — one reconcile per binding (ResourceBinding or ClusterResourceBinding,
  told apart by the key's namespace) decides all of its target clusters at once with
  :func:`~fleetkeeper.controllers.taint_manager_rules.plan`, removes the clusters to
  evict from ``spec.clusters`` and appends one graceful-eviction task each (reason
  ``TaintUntolerated``, producer ``TaintManager``, the replicas the cluster had, the
  binding's purge mode), in one write with optimistic concurrency — on a conflict it
  re-reads and decides again. The scheduler then reschedules (the task keeps the
  cluster out), and the graceful-eviction controller ends the task.

Bindings are also watched directly: a binding scheduled onto an already tainted
cluster, or whose applied tolerations change, is decided as it changes.

**Circuit breaker.** While more than ``eviction_circuit_breaker_threshold`` of the
clusters are not Ready, no binding is evicted: each tainted cluster gets a Warning
Event and a timeline entry saying why; when enough clusters are Ready again the tainted
ones are fanned out afresh (and whatever recovered meanwhile has nothing to move).

**Pacing.** With ``resource_eviction_rate`` > 0 there are three workers, each pausing
``1/rate`` seconds after an eviction (Karmada's throttle); at 0 (fleetkeeper's default)
evictions are unthrottled and run on :data:`WORKERS` workers.

**State preservation** (``failover.cluster.statePreservation``): each task carries the
``preservedLabelState`` read from the cluster's reported status (see
:func:`~fleetkeeper.controllers.taint_manager_rules.evict_clusters`); while there is none to
read, that eviction waits (said once) and is retried with backoff.

Every eviction is a timeline entry ``evicted from member1 (TaintUntolerated,
Gracefully)``; a failed write is an ``EvictWorkloadFromClusterFailed`` Event on the
binding and its template, and a retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Toleration
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding, template_stub
from fleetkeeper.controllers import eviction_rules as evictions
from fleetkeeper.controllers import state_preservation as state
from fleetkeeper.controllers import taint_manager_rules as rules
from fleetkeeper.controllers.eviction_metrics import EvictionMetrics, Metered
from fleetkeeper.controllers.writes import Step, write_planned
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Controller, Keys
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import FuncReconciler, Request, Result
from fleetkeeper.runtime.recorder import Forgetting
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, concurrent_syncs

NAME = "taint-manager"
#: index of the binding informers: target cluster name → bindings
BY_CLUSTER = "taint-manager/spec.clusters"
#: eviction workers when unthrottled (few: evictions go first anyway, and fewer busy workers keep
#: the event loop's turns short — see the scheduler's ``WORKERS``), and when paced (Karmada's three)
WORKERS = 2
PACED_WORKERS = 3
#: the fan-out yields to the event loop after this many bindings
FANOUT_CHUNK = 16
WRITE_ATTEMPTS = 5
#: what the recorder tells once: a tainted cluster's evictions paused by the circuit breaker
#: (until it closes), a binding's eviction waiting for dispatching to resume (per hold)
PAUSED = "EvictionPaused"
HELD = "DispatchingSuspended"
#: the recorder's topic (with the cluster) of an eviction waiting for state to preserve
PRESERVATION = "StatePreservationFailed"

B = TypeVar("B", ResourceBinding, ClusterResourceBinding)

_log = structlog.get_logger("fleetkeeper.taint_manager")


class StatePreservationPending(errors.FleetkeeperError):
    """An eviction waits for state to preserve from the failed cluster (retried with backoff)."""


@dataclass(frozen=True, slots=True)
class _Evicting:
    """What one eviction write does: the clusters evicted, the purge mode, and the clusters
    whose eviction waits for state to preserve (→ why)."""

    clusters: list[str]
    mode: str
    waiting: dict[str, str]


def _cached(informer: Informer[B], keys: list[str]) -> Iterator[B]:
    for key in keys:
        obj = informer.get(key)
        if obj is not None:
            yield obj


def _targets(binding: Binding) -> list[str]:
    return [t.name for t in binding.spec.clusters or ()]


def _tolerated(cluster: str) -> tuple[str, str]:
    """The topic of a binding staying on ``cluster`` despite its NoExecute taints (told once
    while the cluster keeps them)."""
    return (tl.EVICTION_TOLERATED, cluster)


class TaintManager:
    """The fan-out and eviction reconcilers and the circuit breaker they share."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster], bindings: BindingInformers) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._bindings = bindings
        self._recorder = ctx.recorder(NAME)
        self.breaker = rules.breaker((), ctx.options.eviction_circuit_breaker_threshold)
        #: the two queues (see the module notes): tainted clusters, bindings to evict (highest
        #: ``schedulePriority`` first)
        self.fanout = Keys(NAME, clock=ctx.clock)
        self.evictions = Keys(f"{NAME}-eviction", clock=ctx.clock, priority=self.priority_of)
        #: Karmada's eviction metrics of that queue (:mod:`~fleetkeeper.controllers.eviction_metrics`)
        self.metrics = EvictionMetrics()

    def forgetting(self) -> Forgetting:
        """What forgets the said-once topics of a deleted cluster or binding."""
        return self._recorder.forgetting()

    @property
    def enabled(self) -> bool:
        return self._ctx.options.enable_no_execute_taint_eviction

    # ---------------------------------------------------------------- lookups
    def binding(self, request: Request) -> Binding | None:
        return self._bindings.get(request)

    def bindings_on(self, cluster: str) -> Iterator[Binding]:
        """The bindings placed on ``cluster``, in key order. The keys are taken at the first
        step and each binding is read from the cache when its turn comes, so the first comes
        without a list of all of them being built; one gone meanwhile is skipped."""
        rbs, crbs = self._bindings.pair
        rb_keys, crb_keys = rbs.index_keys(BY_CLUSTER, cluster), crbs.index_keys(BY_CLUSTER, cluster)
        yield from _cached(rbs, rb_keys)
        yield from _cached(crbs, crb_keys)

    def tolerations(self, binding: Binding) -> tuple[Toleration, ...] | None:
        """The applied tolerations, ``None`` when never scheduled or undecodable (logged)."""
        try:
            return evictions.applied_tolerations(binding.annotations())
        except ValueError as exc:
            _log.warning("binding not considered for eviction", binding=str(Request.for_object(binding)),
                         error=str(exc))
            return None

    def _queue(self, binding: Binding, decision: rules.Decision, cluster: str) -> None:
        if decision.action == "now":
            self.evictions.enqueue(Request.for_object(binding))
        elif decision.action == "later":
            self.evictions.enqueue_after(Request.for_object(binding), decision.delay)
        else:
            return
        self.metrics.queued(binding, cluster)

    # ---------------------------------------------------------------- events
    def cluster_changed(self, cluster: Cluster | None) -> None:
        """A cluster event: refresh the breaker, fan the cluster out if it carries NoExecute taints."""
        before = self.breaker.open
        threshold = self._ctx.options.eviction_circuit_breaker_threshold
        self.breaker = rules.breaker(self._clusters.list(), threshold)
        if self.breaker.open != before:
            for other in self._clusters.list():
                if rules.no_execute_taints(other) or self._recorder.said(other, PAUSED):
                    self.fanout.enqueue(Request.for_object(other))
        if cluster is not None and rules.no_execute_taints(cluster):
            self.fanout.enqueue(Request.for_object(cluster))
        elif cluster is not None:
            self._recorder.clear_topic(_tolerated(cluster.name))  # a taint that comes back is told again

    def binding_changed(self, binding: Binding | None) -> None:
        """A binding event: decide it now if one of its clusters is tainted NoExecute."""
        if binding is None or not self.enabled or binding.metadata.deletion_timestamp is not None:
            return
        clusters = [c for c in map(self._clusters.get, _targets(binding)) if c is not None]
        found = [(c.name, t) for c, t in ((c, rules.no_execute_taints(c)) for c in clusters) if t]
        if not found:
            return
        tolerations = self.tolerations(binding)
        now = self._ctx.clock.now()
        for cluster, taints in found:
            self._queue(binding, rules.decide(taints, tolerations, now), cluster)

    # ---------------------------------------------------------------- fan-out
    async def fan_out(self, request: Request) -> Result:
        """Queue every binding on one tainted cluster (or record why not)."""
        cluster = self._clusters.get(request.name)
        if cluster is None:
            self._recorder.clear_topic(_tolerated(request.name))
            return Result()
        taints = rules.no_execute_taints(cluster)
        if self.breaker.open:
            if taints and self.enabled:
                message = self.breaker.message()
                await self._recorder.once(cluster, PAUSED, event=("Warning", "EvictionPaused", message),
                                          timeline=(tl.EVICTION_BLOCKED, message, "CircuitBreaker"))
            return Result()
        if self._recorder.clear(cluster, PAUSED):
            breaker = self.breaker
            resumed = (f"evictions resumed: {breaker.not_ready} of {breaker.total} clusters are not Ready "
                       "or failing their probes")
            await self._recorder.timeline(cluster, tl.EVICTION_RESUMED, resumed, reason="CircuitBreaker")
        if not taints or not self.enabled:
            return Result()
        now = self._ctx.clock.now()
        for count, binding in enumerate(self.bindings_on(cluster.name), start=1):
            decision = rules.decide(taints, self.tolerations(binding), now)
            self._queue(binding, decision, cluster.name)
            if decision.action == "later" or decision is rules.TOLERATED_FOREVER:
                await self._tell_tolerated(binding, cluster, decision)
            if count % FANOUT_CHUNK == 0:
                await asyncio.sleep(0)
        return Result()

    async def _tell_tolerated(self, binding: Binding, cluster: Cluster, decision: rules.Decision) -> None:
        """Say once, while the cluster keeps its NoExecute taints, that a binding stays on it."""
        if not self._recorder.first(binding, _tolerated(cluster.name)):
            return
        taint = ", ".join(f"{t.key}:{t.effect}" for t in rules.no_execute_taints(cluster))
        if decision.action == "later":
            text = (f"{cluster.name}'s taint {taint} is tolerated for {decision.delay:g}s more: "
                    "evicted then unless the taint is gone")
        else:
            text = f"{cluster.name}'s taint {taint} is tolerated forever: never evicted from it"
        await self._recorder.timeline(binding, tl.EVICTION_TOLERATED, text, reason="Tolerated")

    # ---------------------------------------------------------------- eviction
    def priority_of(self, request: Request) -> int:
        """A binding's ``schedulePriority``: the evictions of a failed cluster go highest first,
        so the scheduler — which orders its queue the same way — moves them first."""
        binding = self.binding(request)
        return binding.spec.schedule_priority_value() if binding is not None else 0

    async def evict(self, request: Request) -> Result:
        """Evict one binding from every cluster it must leave now."""
        binding = self.binding(request)
        if binding is None or binding.metadata.deletion_timestamp is not None or not self.enabled:
            return Result()
        if self.breaker.open:
            return Result()  # the breaker closing fans the tainted clusters out again
        now = self._ctx.clock.now()
        outcome = rules.plan(_targets(binding), self._clusters.get, self.tolerations(binding), now)
        if outcome.evict and rules.dispatch_held(binding.spec.suspension):
            names = ", ".join(outcome.evict)
            await self._recorder.once(binding, HELD, timeline=(
                tl.EVICTION_BLOCKED, f"eviction from {names} waits: dispatching is suspended",
                "DispatchingSuspended"))
            return Result()  # resuming dispatch updates the binding, which wakes it again
        self._recorder.clear(binding, HELD)
        if outcome.evict:
            evicted, waiting = await self._write(binding, now)
            pause = rules.pacing_delay(self._ctx.options.resource_eviction_rate)
            if evicted and pause:
                await self._ctx.clock.sleep(pause)
            if waiting:
                names = ", ".join(sorted(waiting))
                raise StatePreservationPending(f"binding {request}: eviction from {names} waits for state "
                                               "to preserve; retrying")
        return Result(requeue_after=outcome.retry_after)

    async def _write(self, binding: Binding, now: datetime) -> tuple[list[str], dict[str, str]]:
        """Remove the clusters to evict and add their tasks, conflict-safe; the clusters evicted
        and those whose eviction waits for state to preserve (→ why)."""
        waiting: dict[str, str] = {}

        def step(current: Binding) -> Step[Binding, _Evicting] | None:
            planned = self._eviction(current, now)
            waiting.clear()
            waiting.update(planned.plan.waiting if planned is not None else {})
            return planned if planned is not None and planned.plan.clusters else None

        async def failed(current: Binding, planned: _Evicting, exc: errors.ApiError) -> None:
            if not isinstance(exc, errors.NotFound):
                for name in planned.clusters:
                    await self._failed(current, name)

        try:
            written = await write_planned(self._ctx.client, binding, step, attempts=WRITE_ATTEMPTS,
                                          missing="none", on_error=failed)
        except errors.NotFound:
            return [], {}
        await self._tell_waiting(binding, waiting)
        if written is None:
            return [], waiting
        evicted, reason = written.plan.clusters, constants.EVICTION_REASON_TAINT_UNTOLERATED
        for name in evicted:
            text = rules.eviction_text(name, reason, written.plan.mode)
            await self._recorder.timeline(written.base, tl.EVICTION_STARTED, text, reason=reason)
        return evicted, waiting

    def _eviction(self, current: Binding, now: datetime) -> Step[Binding, _Evicting] | None:
        """The binding without the clusters to evict and with their tasks, and what it does;
        None when nothing is to be evicted."""
        if current.metadata.deletion_timestamp is not None:
            return None
        outcome = rules.plan(_targets(current), self._clusters.get, self.tolerations(current), now)
        if not outcome.evict:
            return None
        default_mode = self._ctx.options.no_execute_taint_eviction_purge_mode
        mode = rules.purge_mode(current.spec.failover, default_mode)
        options = evictions.TaskOptions(producer=constants.PRODUCER_TAINT_MANAGER,
                                        reason=constants.EVICTION_REASON_TAINT_UNTOLERATED,
                                        purge_mode=mode, creation_timestamp=now)
        spec, evicted, waiting = rules.evict_clusters(current.spec, current.status, outcome.evict, options)
        return Step(current.model_copy(update={"spec": spec}), _Evicting(evicted, mode, waiting))

    async def _tell_waiting(self, binding: Binding, waiting: dict[str, str]) -> None:
        """Say once per cluster and reason that an eviction waits for state to preserve (each
        retry fails the same way until the cluster reports it); forget it once it does not."""
        if not waiting and not state.cluster_rules(binding.spec):
            return
        for name in _targets(binding):
            reason = waiting.get(name)
            if reason is None:
                self._recorder.clear(binding, (PRESERVATION, name))
                continue
            message = f"eviction from {name} waits: state preservation failed: {reason}"
            if await self._recorder.once(binding, (PRESERVATION, name), value=reason,
                                         timeline=(tl.EVICTION_BLOCKED, message, PRESERVATION)):
                await self._failed(binding, name, reason)

    async def _failed(self, binding: Binding, cluster: str, why: str = "") -> None:
        message = f"Evict from cluster {cluster} failed" + (f": {why}" if why else ".")
        await self._recorder.event(binding, "Warning", constants.EVENT_EVICT_WORKLOAD_FAILED, message)
        await self._recorder.event(template_stub(binding), "Warning", constants.EVENT_EVICT_WORKLOAD_FAILED,
                                   message)


class _ClusterEvents:
    def __init__(self, manager: TaintManager) -> None:
        self._manager = manager

    def on_add(self, obj: Cluster) -> None:
        self._manager.cluster_changed(obj)

    def on_update(self, old: Cluster, new: Cluster) -> None:
        self._manager.cluster_changed(new)

    def on_delete(self, obj: Cluster) -> None:
        self._manager.cluster_changed(None)


class _BindingEvents:
    def __init__(self, manager: TaintManager) -> None:
        self._manager = manager

    def on_add(self, obj: Binding) -> None:
        self._manager.binding_changed(obj)

    def on_update(self, old: Binding, new: Binding) -> None:
        if old.spec.clusters != new.spec.clusters or old.spec.suspension != new.spec.suspension or \
                old.annotations().get(
                constants.APPLIED_PLACEMENT_ANNOTATION) != new.annotations().get(
                constants.APPLIED_PLACEMENT_ANNOTATION):
            self._manager.binding_changed(new)
        elif state.cluster_rules(new.spec) and old.status.aggregated_status != new.status.aggregated_status:
            self._manager.binding_changed(new)  # an eviction waiting for state to preserve may go now

    def on_delete(self, obj: Binding) -> None:
        """A deleted binding has nothing left to evict."""


def _new(deps: Deps) -> Controller:
    """The eviction controller (the fan-out's runs alongside), over one :class:`TaintManager`."""
    clusters = deps.informers.informer_for(Cluster)
    bindings = BindingInformers(deps.informers)
    bindings.add_indexer(BY_CLUSTER, _targets)
    manager = TaintManager(deps.ctx, clusters, bindings)
    paced = deps.ctx.options.resource_eviction_rate > 0
    evict = Metered(FuncReconciler(manager.evict), manager.metrics, deps.ctx.clock)
    evictions = deps.controller(f"{NAME}-eviction", evict, keys=manager.evictions,
                                workers=PACED_WORKERS if paced else WORKERS, tier=Tier.CRITICAL)
    deps.add(deps.controller(NAME, FuncReconciler(manager.fan_out), keys=manager.fanout,
                             workers=concurrent_syncs(deps.ctx.options), tier=Tier.CRITICAL))
    clusters.add_handler(_ClusterEvents(manager))
    bindings.add_handler(_BindingEvents(manager))
    clusters.add_handler(manager.forgetting())
    bindings.add_handler(manager.forgetting())
    return evictions


#: NoExecute eviction (control plane only): two critical queues over one state
SPEC = ControllerSpec(NAME, runnable=_new, kind=ResourceBinding, runs=Runs.PLANE)


__all__ = [
    "BY_CLUSTER", "NAME", "PRESERVATION", "SPEC", "WORKERS", "StatePreservationPending", "TaintManager",
]
