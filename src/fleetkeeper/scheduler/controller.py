"""The scheduling controller: one reconciler for ResourceBindings and ClusterResourceBindings.

Both kinds share spec and status, so one :class:`SchedulingReconciler` serves both; the
request's namespace tells them apart (``ns/name`` is a ResourceBinding, a bare ``name``
a ClusterResourceBinding), exactly like Karmada's queue keys.

**What wakes a binding** (Karmada's event handlers):

* a binding is added, or its ``metadata.generation`` changes — if it is ours: the
  scheduler name matches, scheduling is not suspended, and it carries a PP/CPP
  permanent-id label or ``binding.karmada.io/managed-by`` — except the scheduler's own
  result coming back (a generation it has already observed: see ``binding_changed``);
* a cluster starts deleting, or its labels or spec (taints…) change — the bindings whose
  affinity selects it or that are placed on it, when a trigger fires for them or they are
  parked (:mod:`~fleetkeeper.scheduler.fanout`: an index and a queue of its own, off the
  informer's task).

**What it does** (level-triggered, Karmada's ``doSchedule``): skip a binding the shared
cache shows scheduled, observed and without a trigger (the cache is at least as new as
the event that queued it); otherwise take that cached version (without caches: read it), decide
whether a trigger fires (:mod:`~fleetkeeper.scheduler.triggers`), run the core
(:class:`~fleetkeeper.scheduler.core.Scheduler`), then compute the desired object and
write only what changed: ``spec.clusters`` with the applied-placement annotation (main
resource, optimistic concurrency), then the ``Scheduled`` condition,
``schedulerObservedGeneration`` and ``lastScheduledTime`` (``/status``), both in one
store transaction. Events tell the story on the binding and on its template (a success
is announced when the result or the condition changed, not on every pass that changes
nothing), and every new result — or new failure — goes on the failover timeline.

**Retries without spinning.** A plain failure is raised: the controller retries with
backoff. A binding no cluster can take (NoClusterFit) or that does not fit the capacity
(Unschedulable) is *parked* instead: it is woken again when a cluster changes in a way
the scheduler can see (added, deleted, labels, spec, APIs, capacity), and Unschedulable
ones also after five minutes, like Karmada's unschedulable queue — never in a loop.

Every run counts as a ``karmada_scheduler_schedule_attempts_total`` with its duration on
the injected clock, and every binding queued counts with why
(:mod:`~fleetkeeper.scheduler.metrics`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime

import structlog
from structlog.typing import FilteringBoundLogger

from fleetkeeper import errors
from fleetkeeper.api import rules
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.constants import (
    APPLIED_PLACEMENT_ANNOTATION,
    BINDING_MANAGED_BY_LABEL,
    CPP_PERMANENT_ID_LABEL,
    DEFAULT_SCHEDULER_NAME,
    EVENT_SCHEDULE_BINDING_FAILED,
    EVENT_SCHEDULE_BINDING_SUCCEED,
    MSG_BINDING_SCHEDULED,
    PP_PERMANENT_ID_LABEL,
)
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.work import (
    Binding,
    ResourceBinding,
    ResourceBindingStatus,
    TargetCluster,
    binding_model,
    template_stub,
)
from fleetkeeper.client.interface import Client, batch
from fleetkeeper.clock import Clock
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.controller import Controller
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.recorder import EventType, Recorder, Sink
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs
from fleetkeeper.scheduler import fanout, metrics
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.framework import FitError, next_block_expiry
from fleetkeeper.scheduler.placement import placement_info
from fleetkeeper.scheduler.snapshot import Snapshot, SnapshotBuilder
from fleetkeeper.scheduler.triggers import schedule_trigger, verdict

#: Karmada flushes unschedulable bindings back into the queue after five minutes
UNSCHEDULABLE_RETRY_SECONDS = 300.0
CONTROLLER_NAME = "scheduler"
#: scheduler workers. Scheduling is on the failover's critical path and goes first anyway
#: (:mod:`~fleetkeeper.runtime.turns`); in one event loop every busy worker adds its reconcile to
#: each loop turn, and each hop of a decision (write → informer → queue → worker) waits one
#: turn, so a few workers make the first decisions sooner and the last ones no later than many
#: would (README, Benchmarks). The floor is ``concurrent_syncs`` (5 by default): a scheduler
#: talking to a remote API server waits on the network, and more workers then overlap the waits.
WORKERS = 4


def is_ours(binding: Binding, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> bool:
    """Karmada's binding event filter: our scheduler name, not suspended, claimed by a policy."""
    spec = binding.spec
    if (spec.scheduler_name or DEFAULT_SCHEDULER_NAME) != scheduler_name:
        return False
    if spec.suspension is not None and spec.suspension.scheduling:
        return False
    labels = binding.labels()
    return any(labels.get(key) for key in (PP_PERMANENT_ID_LABEL, CPP_PERMANENT_ID_LABEL,
                                           BINDING_MANAGED_BY_LABEL))


def result_text(clusters: list[tuple[str, int]]) -> str:
    """``member1:1, member2:2`` — a schedule result as messages print it."""
    return ", ".join(f"{name}:{replicas}" for name, replicas in clusters)


def describe(binding: Binding) -> str:
    """``ResourceBinding(ns/name)`` or ``ClusterResourceBinding(name)``."""
    if isinstance(binding, ResourceBinding):
        return f"ResourceBinding({binding.namespace}/{binding.name})"
    return f"ClusterResourceBinding({binding.name})"


def _by_name(targets: list[TargetCluster]) -> list[tuple[str, int]]:
    return sorted((t.name, t.replicas) for t in targets)


class SchedulingReconciler:
    """Schedules one binding per request (either kind); see the module notes."""

    def __init__(self, client: Client, clusters: Informer[Cluster], *, clock: Clock,
                 scheduler: Scheduler | None = None, scheduler_name: str = DEFAULT_SCHEDULER_NAME,
                 logger: FilteringBoundLogger | None = None,
                 bindings: BindingInformers | None = None,
                 sink: Sink | None = None) -> None:
        self._client = client
        self._clusters = clusters
        #: caches of both kinds: a binding they show settled is not read again (see ``_settled``)
        self._bindings = bindings
        self._clock = clock
        self._scheduler = scheduler or Scheduler(timer=clock.monotonic)
        self.scheduler_name = scheduler_name
        #: ``sink``: the plane's, so its records keep their order with the others' (a scheduler
        #: of its own writes through one of its own)
        self._recorder = Recorder(sink if sink is not None else Sink(client), clock, scheduler_name)
        self._log: FilteringBoundLogger = logger or structlog.get_logger("fleetkeeper.scheduler")
        self._builder = SnapshotBuilder()
        self._snapshot: Snapshot | None = None
        #: bindings waiting for a cluster change (NoClusterFit / Unschedulable)
        self.parked: set[Request] = set()

    # ---------------------------------------------------------------- snapshot
    def invalidate(self, cluster: Cluster | None = None) -> None:
        """Clusters changed (``cluster``'s new version, if any): the next attempt builds a
        fresh snapshot, from facts parsed now."""
        self._snapshot = None
        if cluster is not None:
            self._builder.prepare(cluster)

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = self._builder.build(self._clusters.list())
        return self._snapshot

    # ---------------------------------------------------------------- reconcile
    def _cached(self, request: Request) -> Binding | None:
        assert self._bindings is not None
        return self._bindings.get(request)

    def priority_of(self, request: Request) -> int:
        """The binding's ``schedulePriority`` (0 when it has none or is not cached): the
        queue hands out higher priorities first, as Karmada's scheduling queue does."""
        binding = self._cached(request) if self._bindings is not None else None
        return binding.spec.schedule_priority_value() if binding is not None else 0

    async def _read(self, request: Request) -> Binding | None:
        """The binding as the shared cache has it, None when gone (Karmada's scheduler reads
        its lister too: the cache holds at least the version whose event queued the
        request, and a write from an older one fails its resourceVersion check and is
        retried); without caches, from the store."""
        if self._bindings is not None:
            return self._cached(request)
        try:
            return await self._client.get(binding_model(request.namespace), request.name, request.namespace)
        except errors.NotFound:
            return None

    def _settled(self, request: Request) -> bool:
        """The cached binding is ours, scheduled, observed, and no trigger fires: nothing to do.

        The cache holds at least the version whose event queued the request, so a binding
        that looks settled there needs no read; any later change queues it again."""
        if self._bindings is None:
            return False
        cached = self._cached(request)
        if cached is None or not is_ours(cached, self.scheduler_name) or cached.spec.placement is None:
            return False
        if cached.metadata.deletion_timestamp is not None or request in self.parked:
            return False
        if cached.status.scheduler_observed_generation != (cached.metadata.generation or 0):
            return False
        annotation = cached.annotations().get(APPLIED_PLACEMENT_ANNOTATION, "")
        return schedule_trigger(cached.spec, cached.status, annotation, self.snapshot().deleting) is None

    async def reconcile(self, request: Request) -> Result:
        if self._settled(request):
            return Result()
        binding = await self._read(request)
        if binding is None:
            self.parked.discard(request)
            return Result()
        if not is_ours(binding, self.scheduler_name):
            self.parked.discard(request)
            return Result()
        if binding.metadata.deletion_timestamp is not None:
            kind = "resourceBinding" if request.namespace else "clusterResourceBinding"
            await self._event(binding, "Warning", EVENT_SCHEDULE_BINDING_FAILED,
                              f"skip schedule deleting {kind}: {request}")
            return Result()
        if binding.spec.placement is None:
            raise errors.TerminalError(f"{describe(binding)} has no placement to schedule with")
        snapshot = self.snapshot()
        annotation = binding.annotations().get(APPLIED_PLACEMENT_ANNOTATION, "")
        trigger = schedule_trigger(binding.spec, binding.status, annotation, snapshot.deleting)
        if trigger is None:
            await self._observe_generation(binding)
            return Result()
        self._log.debug("scheduling", binding=str(request), trigger=trigger)
        return await self._schedule(binding, request, snapshot, trigger, self._clock.now())

    async def _schedule(self, binding: Binding, request: Request, snapshot: Snapshot, trigger: str,
                        now: datetime) -> Result:
        assert binding.spec.placement is not None
        applied = placement_info(binding.spec.placement).json
        started = self._clock.monotonic()
        outcome = self._scheduler.schedule_binding(binding.spec, binding.status, snapshot, now,
                                                   describe=describe(binding))
        metrics.attempt(trigger, self._clock.monotonic() - started, failed=outcome.error is not None)
        for message in outcome.term_failures:
            await self._event(binding, "Warning", EVENT_SCHEDULE_BINDING_FAILED, message)
        written = binding
        error = outcome.error
        together = getattr(self._client, "update_with_status", None)
        if outcome.clusters is not None and together is not None:
            # the result and its condition: one change (the local client)
            written, condition_changed = await self._write_both(
                binding, applied, outcome.clusters, now, error, outcome.affinity_name, together)
        else:
            async with batch(self._client):  # the result and its condition: one transaction
                if outcome.clusters is not None:
                    written = await self._write_result(binding, applied, outcome.clusters)
                condition_changed = await self._write_status(written, now, error, outcome.affinity_name)
        if error is None:
            moved = written is not binding and written.spec.clusters != binding.spec.clusters
            await self._succeeded(binding, request, outcome.clusters or [], trigger, moved=moved,
                                  announce=moved or condition_changed)
            return Result()
        await self._event(binding, "Warning", EVENT_SCHEDULE_BINDING_FAILED, str(error))
        metrics.incoming(metrics.ATTEMPT_FAILURE)  # back in a queue: with backoff, or parked
        v = verdict(error)
        if condition_changed:
            await self._recorder.timeline(binding, tl.SCHEDULE_FAILED, str(error), reason=v.reason)
        if v.retry:
            self.parked.discard(request)
            raise error
        self.parked.add(request)
        expiry = next_block_expiry(binding.spec, now)
        if isinstance(error, FitError):
            self._log.info("no cluster fits", binding=str(request), reasons=error.cluster_reasons())
            # cluster changes wake it; so does the end of an eviction-history block
            return Result(requeue_after=(expiry - now).total_seconds() if expiry else None)
        self._log.info("unschedulable", binding=str(request), error=str(error))
        if isinstance(error, UnschedulableError):
            return Result(requeue_after=UNSCHEDULABLE_RETRY_SECONDS)
        return Result()

    async def _succeeded(self, binding: Binding, request: Request, clusters: list[tuple[str, int]],
                         trigger: str, *, moved: bool, announce: bool) -> None:
        """Success: unpark; an event when something changed, a timeline entry when the result moved."""
        self.parked.discard(request)
        if announce:
            colon = ":" if isinstance(binding, ResourceBinding) else ""
            text = f"{MSG_BINDING_SCHEDULED} Result{colon} {{{result_text(clusters)}}}"
            await self._event(binding, "Normal", EVENT_SCHEDULE_BINDING_SUCCEED, text)
        if moved:
            before = result_text([(t.name, t.replicas) for t in binding.spec.clusters or ()])
            await self._recorder.timeline(binding, tl.SCHEDULED,
                                          f"scheduled to {{{result_text(clusters)}}} (was {{{before}}})",
                                          reason=trigger)

    # ---------------------------------------------------------------- writes
    @staticmethod
    def _result(binding: Binding, applied: str, clusters: list[tuple[str, int]]) -> Binding | None:
        """The binding with the result and the applied placement; None when it already says so."""
        desired = [TargetCluster(name=name, replicas=replicas) for name, replicas in clusters] or None
        current = binding.spec.clusters or None
        if current is not None and desired is not None and _by_name(current) == _by_name(desired):
            desired = current  # the same result in another order changes nothing
        if binding.annotations().get(APPLIED_PLACEMENT_ANNOTATION) == applied and current == desired:
            return None
        # shallow copies: the cached binding is only read, and the client encodes before it returns
        meta = binding.metadata.model_copy(
            update={"annotations": {**binding.annotations(), APPLIED_PLACEMENT_ANNOTATION: applied}})
        return binding.model_copy(update={"metadata": meta,
                                          "spec": binding.spec.model_copy(update={"clusters": desired})})

    async def _write_result(self, binding: Binding, applied: str, clusters: list[tuple[str, int]]) -> Binding:
        updated = self._result(binding, applied, clusters)
        return binding if updated is None else await self._client.update(updated)

    async def _write_both(self, binding: Binding, applied: str, clusters: list[tuple[str, int]],
                          now: datetime, error: ScheduleError | None, affinity_name: str | None,
                          together: Callable[[Binding], Awaitable[Binding]]) -> tuple[Binding, bool]:
        """The result and its ``Scheduled`` condition as one change; (the stored binding,
        whether the condition changed)."""
        updated = self._result(binding, applied, clusters)
        if updated is None:
            return binding, await self._write_status(binding, now, error, affinity_name)
        # the store bumps the generation exactly when the spec changes: here, its clusters
        generation = (binding.metadata.generation or 0) + (updated.spec.clusters != binding.spec.clusters)
        status, changed = self._status(binding, generation, now, error, affinity_name)
        if status is not None:
            updated = updated.model_copy(update={"status": status})
        return await together(updated), changed

    @staticmethod
    def _status(binding: Binding, generation: int, now: datetime, error: ScheduleError | None,
                affinity_name: str | None) -> tuple[ResourceBindingStatus | None, bool]:
        """The status with the ``Scheduled`` condition (and on success the observed
        generation), None when it already says so; whether the condition changed."""
        v = verdict(error)
        condition = Condition(type=v.type, status=v.status, reason=v.reason, message=v.message)
        conditions = rules.set_condition(binding.status.conditions, condition, now)
        changes: dict[str, object] = {"conditions": conditions}
        if v.status == "True":
            changes["scheduler_observed_generation"] = generation
            changes["last_scheduled_time"] = now
        if affinity_name is not None:
            changes["scheduler_observed_affinity_name"] = affinity_name
        if all(getattr(binding.status, name) == value for name, value in changes.items()):
            return None, False
        old = rules.get_condition(binding.status.conditions, v.type)
        changed = old is None or (old.status, old.reason, old.message) != (v.status, v.reason, v.message)
        return binding.status.model_copy(update=changes), changed

    async def _write_status(self, binding: Binding, now: datetime, error: ScheduleError | None,
                            affinity_name: str | None) -> bool:
        """Write the ``Scheduled`` condition (and on success the observed generation); whether it changed."""
        status, changed = self._status(binding, binding.metadata.generation or 0, now, error, affinity_name)
        if status is not None:
            await self._client.update_status(binding.model_copy(update={"status": status}))
        return changed

    async def _observe_generation(self, binding: Binding) -> None:
        generation = binding.metadata.generation or 0
        if binding.status.scheduler_observed_generation == generation:
            return
        status = binding.status.model_copy(update={"scheduler_observed_generation": generation})
        await self._client.update_status(binding.model_copy(update={"status": status}))

    async def _event(self, binding: Binding, event_type: EventType, reason: str, message: str) -> None:
        """Record an event on the binding and on the resource template it stands for."""
        await self._recorder.event(binding, event_type, reason, message)
        await self._recorder.event(template_stub(binding), event_type, reason, message)

    # ---------------------------------------------------------------- event handling
    def binding_changed(self, old: Binding | None, new: Binding | None) -> bool:
        """Predicate for binding events: ours, and added or with a new generation that this
        scheduler has not observed yet.

        Only the scheduler observes a generation, and it does so in the very change that
        writes its result: an update whose generation is already observed is that result
        coming back, and scheduling it again would compute the same (Karmada's scheduler
        does, for Duplicated bindings; later cluster changes reach it through the cluster
        fan-out). A binding that is parked or being deleted is still woken."""
        if new is None:
            return False
        if not is_ours(new, self.scheduler_name):
            return False
        if old is None:
            metrics.incoming(metrics.BINDING_ADD)
            return True
        generation = new.metadata.generation or 0
        if old.metadata.generation == generation:
            return False
        woken = (new.status.scheduler_observed_generation != generation
                 or new.metadata.deletion_timestamp is not None or Request.for_object(new) in self.parked)
        if woken:
            metrics.incoming(metrics.BINDING_UPDATE)
        return woken

    def bindings_for(self, cluster: Cluster, bindings: Iterable[Binding]) -> list[Request]:
        """The bindings a change of ``cluster`` concerns (Karmada's cluster fan-out)."""
        return [Request.for_object(b) for b in bindings if self.owns(b) and fanout.concerns(b, cluster)]

    def owns(self, binding: Binding) -> bool:
        """Whether this scheduler schedules the binding (:func:`is_ours`)."""
        return is_ours(binding, self.scheduler_name)


class SchedulerController:
    """The scheduler's two queues as one runnable: bindings to schedule, clusters to fan out
    (:mod:`~fleetkeeper.scheduler.fanout`)."""

    needs_leader_election = True

    def __init__(self, bindings: Controller, clusters: Controller,
                 parked: set[Request] | None = None) -> None:
        self.name = CONTROLLER_NAME
        self.bindings = bindings
        self.clusters = clusters
        self._parked = parked if parked is not None else set()
        metrics.SCHEDULERS.add(self)
        #: scheduling is on the failover's critical path (:mod:`~fleetkeeper.runtime.turns`); the
        #: cluster fan-out is a sweep that mostly finds nothing to do, so it waits its turn
        self.controllers = (bindings, clusters)

    def pending(self) -> tuple[int, int, int]:
        """Bindings ready to be scheduled, waiting to be retried, and parked until a cluster changes."""
        queue = self.bindings.queue
        return len(queue), queue.parked, len(self._parked)

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.bindings.run(), name=self.bindings.name)
            group.create_task(self.clusters.run(), name=self.clusters.name)


class _FanOutTarget:
    def __init__(self, reconciler: SchedulingReconciler, controller: Controller) -> None:
        self.parked = reconciler.parked
        self.is_ours = reconciler.owns
        self._enqueue = controller.enqueue

    def enqueue(self, request: Request) -> None:
        metrics.incoming(metrics.CLUSTER_CHANGED)
        self._enqueue(request)


def new_controller(client: Client, informers: InformerFactory, *, clock: Clock,
                   scheduler: Scheduler | None = None,
                   scheduler_name: str = DEFAULT_SCHEDULER_NAME, workers: int = 1,
                   logger: FilteringBoundLogger | None = None,
                   sink: Sink | None = None) -> SchedulerController:
    """The scheduling controller, wired to shared informers of bindings and clusters."""
    clusters = informers.informer_for(Cluster)
    bindings = BindingInformers(informers)
    rbs, crbs = bindings.pair
    reconciler = SchedulingReconciler(client, clusters, clock=clock, scheduler=scheduler,
                                      scheduler_name=scheduler_name, logger=logger, bindings=bindings,
                                      sink=sink)
    controller = Controller(CONTROLLER_NAME, reconciler, clock=clock, workers=workers, logger=logger,
                            critical=True, priority=reconciler.priority_of)
    controller.watch(rbs, predicate=reconciler.binding_changed)
    controller.watch(crbs, predicate=reconciler.binding_changed)
    bindings.add_indexer(fanout.BY_CLUSTER, fanout.index_values)
    fan_out = fanout.ClusterFanOut(_FanOutTarget(reconciler, controller), clusters, bindings.pair)
    cluster_queue = Controller(f"{CONTROLLER_NAME}-cluster-fanout", fan_out, clock=clock, logger=logger)
    parked = reconciler.parked
    clusters.add_handler(fanout.ClusterEvents(reconciler.invalidate, cluster_queue.enqueue, lambda: parked,
                                              controller.enqueue))
    return SchedulerController(controller, cluster_queue, parked)


def _new(deps: Deps) -> SchedulerController:
    ctx = deps.ctx
    return new_controller(ctx.client, deps.informers, clock=ctx.clock,
                          scheduler_name=ctx.options.scheduler_name,
                          workers=max(WORKERS, ctx.options.concurrent_syncs), sink=ctx.sink)


#: the scheduler (control plane only): bindings to schedule, clusters to fan out
SPEC = ControllerSpec(CONTROLLER_NAME, runnable=_new, kind=ResourceBinding, runs=Runs.PLANE)


__all__ = [
    "CONTROLLER_NAME", "SPEC", "UNSCHEDULABLE_RETRY_SECONDS", "WORKERS", "SchedulerController",
    "SchedulingReconciler", "describe", "is_ours", "new_controller",
]
