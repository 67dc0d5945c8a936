"""The scheduling controller: one reconciler for ResourceBindings and ClusterResourceBindings.

Both kinds share spec and status, so one :class:`SchedulingReconciler` serves both; the
request's namespace tells them apart (``ns/name`` is a ResourceBinding, a bare ``name``
a ClusterResourceBinding), exactly like Karmada's queue keys.

**What wakes a binding** (Karmada's event handlers):

* a binding is added, or its ``metadata.generation`` changes — if it is ours: the
  scheduler name matches, scheduling is not suspended, and it carries a PP/CPP
  permanent-id label or ``binding.karmada.io/managed-by``;
* a cluster starts deleting, or its labels or spec (taints…) change — every binding whose
  current affinity matches the cluster (old or new) is woken.

**What it does** (level-triggered, Karmada's ``doSchedule``): read the binding, decide
whether a trigger fires (:mod:`~fleetkeeper.scheduler.triggers`), run the core
(:class:`~fleetkeeper.scheduler.core.Scheduler`), then compute the desired object and
write only what changed: ``spec.clusters`` with the applied-placement annotation (main
resource, optimistic concurrency), then the ``Scheduled`` condition,
``schedulerObservedGeneration`` and ``lastScheduledTime`` (``/status``). Events tell
the story on the binding and on its template (a success is announced when the result or
the condition changed, not on every pass that changes nothing), and every new result —
or new failure — goes on the failover timeline.

**Retries without spinning.** A plain failure is raised: the controller retries with
backoff. A binding no cluster can take (NoClusterFit) or that does not fit the capacity
(Unschedulable) is *parked* instead: it is woken again when a cluster changes in a way
the scheduler can see (added, deleted, labels, spec, APIs, capacity), and Unschedulable
ones also after five minutes, like Karmada's unschedulable queue — never in a loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
from fleetkeeper.api.meta import Condition, ObjectMeta, Unstructured
from fleetkeeper.api.work import ClusterResourceBinding, ResourceBinding, TargetCluster
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import Clock
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.controller import Controller
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.recorder import EventType, Recorder
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.framework import FitError, next_block_expiry
from fleetkeeper.scheduler.placement import placement_info
from fleetkeeper.scheduler.snapshot import Snapshot, SnapshotBuilder
from fleetkeeper.scheduler.triggers import affinity_index, schedule_trigger, verdict

Binding = ResourceBinding | ClusterResourceBinding

#: Karmada flushes unschedulable bindings back into the queue after five minutes
UNSCHEDULABLE_RETRY_SECONDS = 300.0
CONTROLLER_NAME = "scheduler"


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


def request_of(binding: Binding) -> Request:
    return Request(binding.metadata.namespace or "", binding.name)


def result_text(clusters: list[tuple[str, int]]) -> str:
    """``member1:1, member2:2`` — a schedule result as messages print it."""
    return ", ".join(f"{name}:{replicas}" for name, replicas in clusters)


def describe(binding: Binding) -> str:
    """``ResourceBinding(ns/name)`` or ``ClusterResourceBinding(name)``."""
    if isinstance(binding, ResourceBinding):
        return f"ResourceBinding({binding.namespace}/{binding.name})"
    return f"ClusterResourceBinding({binding.name})"


class SchedulingReconciler:
    """Schedules one binding per request (either kind); see the module notes."""

    def __init__(self, client: Client, clusters: Informer[Cluster], *, clock: Clock,
                 scheduler: Scheduler | None = None, scheduler_name: str = DEFAULT_SCHEDULER_NAME,
                 logger: FilteringBoundLogger | None = None) -> None:
        self._client = client
        self._clusters = clusters
        self._clock = clock
        self._scheduler = scheduler or Scheduler()
        self.scheduler_name = scheduler_name
        self._recorder = Recorder(client, clock, scheduler_name)
        self._log: FilteringBoundLogger = logger or structlog.get_logger("fleetkeeper.scheduler")
        self._builder = SnapshotBuilder()
        self._snapshot: Snapshot | None = None
        #: bindings waiting for a cluster change (NoClusterFit / Unschedulable)
        self.parked: set[Request] = set()

    # ---------------------------------------------------------------- snapshot
    def invalidate(self) -> None:
        """Clusters changed: the next attempt builds a fresh snapshot."""
        self._snapshot = None

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = self._builder.build(self._clusters.list())
        return self._snapshot

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        model: type[Binding] = ResourceBinding if request.namespace else ClusterResourceBinding
        try:
            binding = await self._client.get(model, request.name, request.namespace)
        except errors.NotFound:
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
        outcome = self._scheduler.schedule_binding(binding.spec, binding.status, snapshot, now,
                                                   describe=describe(binding))
        for message in outcome.term_failures:
            await self._event(binding, "Warning", EVENT_SCHEDULE_BINDING_FAILED, message)
        written = binding
        if outcome.clusters is not None:
            written = await self._write_result(binding, applied, outcome.clusters)
        error = outcome.error
        condition_changed = await self._write_status(written, now, error, outcome.affinity_name)
        if error is None:
            moved = written is not binding
            await self._succeeded(binding, request, outcome.clusters or [], trigger, moved=moved,
                                  announce=moved or condition_changed)
            return Result()
        await self._event(binding, "Warning", EVENT_SCHEDULE_BINDING_FAILED, str(error))
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
    async def _write_result(self, binding: Binding, applied: str, clusters: list[tuple[str, int]]) -> Binding:
        desired = [TargetCluster(name=name, replicas=replicas) for name, replicas in clusters] or None
        current = binding.spec.clusters or None
        if binding.annotations().get(APPLIED_PLACEMENT_ANNOTATION) == applied and current == desired:
            return binding
        updated = binding.deep_copy()
        updated.metadata.annotations = {**binding.annotations(), APPLIED_PLACEMENT_ANNOTATION: applied}
        updated.spec.clusters = desired
        return await self._client.update(updated)

    async def _write_status(self, binding: Binding, now: datetime, error: ScheduleError | None,
                            affinity_name: str | None) -> bool:
        """Write the ``Scheduled`` condition (and on success the observed generation); whether it changed."""
        v = verdict(error)
        status = binding.status.model_copy(deep=True)
        condition = Condition(type=v.type, status=v.status, reason=v.reason, message=v.message)
        status.conditions = rules.set_condition(status.conditions, condition, now)
        if v.status == "True":
            status.scheduler_observed_generation = binding.metadata.generation or 0
            status.last_scheduled_time = now
        if affinity_name is not None:
            status.scheduler_observed_affinity_name = affinity_name
        if status == binding.status:
            return False
        await self._client.update_status(binding.model_copy(update={"status": status}))
        old = rules.get_condition(binding.status.conditions, v.type)
        return old is None or (old.status, old.reason, old.message) != (v.status, v.reason, v.message)

    async def _observe_generation(self, binding: Binding) -> None:
        generation = binding.metadata.generation or 0
        if binding.status.scheduler_observed_generation == generation:
            return
        status = binding.status.model_copy(update={"scheduler_observed_generation": generation})
        await self._client.update_status(binding.model_copy(update={"status": status}))

    async def _event(self, binding: Binding, event_type: EventType, reason: str, message: str) -> None:
        """Record an event on the binding and on the resource template it stands for."""
        resource = binding.spec.resource
        template = Unstructured.for_kind(resource.api_version, resource.kind)(
            metadata=ObjectMeta(name=resource.name, namespace=resource.namespace, uid=resource.uid))
        await self._recorder.event(binding, event_type, reason, message)
        await self._recorder.event(template, event_type, reason, message)

    # ---------------------------------------------------------------- event handling
    def binding_changed(self, old: Binding | None, new: Binding | None) -> bool:
        """Predicate for binding events: ours, and added or with a new generation."""
        if new is None:
            return False
        if not is_ours(new, self.scheduler_name):
            return False
        return old is None or old.metadata.generation != new.metadata.generation

    def bindings_for(self, cluster: Cluster, bindings: Iterable[Binding]) -> list[Request]:
        """The bindings a change of ``cluster`` concerns (Karmada's cluster fan-out)."""
        out = []
        for binding in bindings:
            placement = binding.spec.placement
            if placement is None or not is_ours(binding, self.scheduler_name):
                continue
            affinity = placement.cluster_affinity
            if placement.cluster_affinities is not None:
                if binding.status.scheduler_observed_generation != (binding.metadata.generation or 0):
                    out.append(request_of(binding))
                    continue
                terms = placement.cluster_affinities
                observed = binding.status.scheduler_observed_affinity_name or ""
                affinity = terms[affinity_index(terms, observed)] if terms else None
            if affinity is None or rules.cluster_matches(affinity, cluster):
                out.append(request_of(binding))
        return out


class ClusterEvents:
    """Turns cluster changes into binding keys (an informer handler)."""

    def __init__(self, reconciler: SchedulingReconciler, controller: Controller,
                 bindings: Sequence[Informer[ResourceBinding] | Informer[ClusterResourceBinding]]) -> None:
        self._reconciler = reconciler
        self._controller = controller
        self._bindings = bindings

    def on_add(self, obj: Cluster) -> None:
        self._reconciler.invalidate()
        self._wake_parked()

    def on_update(self, old: Cluster, new: Cluster) -> None:
        self._reconciler.invalidate()
        if new.metadata.deletion_timestamp is not None and old.metadata.deletion_timestamp is None:
            self._fan_out(new)
        elif old.labels() != new.labels() or old.metadata.generation != new.metadata.generation:
            self._fan_out(old)
            self._fan_out(new)
        if _visible_change(old, new):
            self._wake_parked()

    def on_delete(self, obj: Cluster) -> None:
        self._reconciler.invalidate()
        self._wake_parked()

    def _fan_out(self, cluster: Cluster) -> None:
        for informer in self._bindings:
            for request in self._reconciler.bindings_for(cluster, informer.list()):
                self._controller.enqueue(request)

    def _wake_parked(self) -> None:
        for request in sorted(self._reconciler.parked):
            self._controller.enqueue(request)


def _visible_change(old: Cluster, new: Cluster) -> bool:
    """Whether the scheduler can see the change (labels, spec, deletion, APIs, capacity)."""
    return (old.labels() != new.labels() or old.spec != new.spec
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
            or old.status.api_enablements != new.status.api_enablements
            or old.status.resource_summary != new.status.resource_summary)


def new_controller(client: Client, informers: InformerFactory, *, clock: Clock,
                   scheduler: Scheduler | None = None,
                   scheduler_name: str = DEFAULT_SCHEDULER_NAME, workers: int = 1,
                   logger: FilteringBoundLogger | None = None) -> Controller:
    """The scheduling controller, wired to shared informers of bindings and clusters."""
    clusters = informers.informer_for(Cluster)
    rbs = informers.informer_for(ResourceBinding)
    crbs = informers.informer_for(ClusterResourceBinding)
    reconciler = SchedulingReconciler(client, clusters, clock=clock, scheduler=scheduler,
                                      scheduler_name=scheduler_name, logger=logger)
    controller = Controller(CONTROLLER_NAME, reconciler, clock=clock, workers=workers, logger=logger)
    controller.watch(rbs, predicate=reconciler.binding_changed)
    controller.watch(crbs, predicate=reconciler.binding_changed)
    clusters.add_handler(ClusterEvents(reconciler, controller, (rbs, crbs)))
    return controller


__all__ = [
    "CONTROLLER_NAME", "UNSCHEDULABLE_RETRY_SECONDS", "ClusterEvents", "SchedulingReconciler", "describe",
    "is_ours", "new_controller", "request_of",
]
