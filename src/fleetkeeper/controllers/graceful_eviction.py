"""The graceful-eviction controller: ends eviction tasks when it is safe, and only then.

One reconciler for ResourceBindings and ClusterResourceBindings (the key's namespace
tells them apart). A reconcile reads the binding, asks
:func:`~fleetkeeper.controllers.eviction_rules.assess_tasks` what each task's verdict
is, and — only when something changed — writes the kept tasks (plus, for a cleared
task, the cluster put back into ``spec.clusters``) with optimistic concurrency; on a
conflict it re-reads and assesses again (:func:`~fleetkeeper.controllers.writes.write_planned`),
so a task another writer added meanwhile is never lost and values of one task never end
up in another.

**When it runs.** Every add or change of a binding that has eviction tasks (status
changes included: that is how it sees the replacement become Healthy), when a task's
timeout comes (``requeue_after``), and when the source cluster of a task changes — its
recovery may clear the task.

**What it will not do** (docs/architecture.md, Failover safety): drop a task while the workload has no
replacement scheduled *and* dispatched elsewhere — not for an empty schedule, not at
the timeout — unless the task's purge mode is ``Directly``. Such a task is *blocked*:
kept, with a timeline entry saying why (``eviction from member1 kept: no replacement
scheduled``), recorded once per task.

Dropping a task emits ``EvictWorkloadFromClusterSucceed`` on the binding and on its
template and a timeline entry with the reason (``eviction from member1 completed:
member2 healthy``); the binding controller then deletes the old Work.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.work import Binding, ResourceBinding, template_stub
from fleetkeeper.controllers import eviction_rules as rules
from fleetkeeper.controllers.writes import Step, write_planned
from fleetkeeper.runtime.bindings import BindingInformers, watch_bindings
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.handler import Enqueuer
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, concurrent_syncs

NAME = "graceful-eviction-controller"
#: index of the binding informers: source cluster of a task → bindings
BY_SOURCE = "graceful-eviction/task.fromCluster"
WRITE_ATTEMPTS = 5


_log = structlog.get_logger("fleetkeeper.graceful_eviction")


def _sources(binding: Binding) -> list[str]:
    return [t.from_cluster for t in binding.spec.graceful_eviction_tasks or ()]


class GracefulEvictionReconciler:
    """Assesses the eviction tasks of one binding per request."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster], bindings: BindingInformers) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._bindings = bindings
        self._recorder = ctx.recorder(NAME)
        bindings.add_handler(self._recorder.forgetting())

    def bindings_from(self, cluster: str) -> list[Request]:
        """Bindings with a task from ``cluster``."""
        return [Request.for_object(b) for b in self._bindings.by_index(BY_SOURCE, cluster)]

    async def reconcile(self, request: Request) -> Result:
        cached = self._bindings.get(request)
        if cached is None:
            return Result()
        try:
            outcome = await write_planned(self._ctx.client, cached, self._plan, attempts=WRITE_ATTEMPTS,
                                          missing="none")
        except errors.NotFound:
            return Result()
        if outcome is None:
            return Result()
        assessment, now = outcome.plan
        if outcome.stored is None:
            await self._explain(outcome.base, assessment)
        else:
            await self._record(outcome.stored, assessment)
        return Result(requeue_after=rules.next_retry(assessment.kept, now,
                                                     self._ctx.options.graceful_eviction_timeout))

    def _plan(self, current: Binding) -> Step[Binding, tuple[rules.Assessment, datetime]] | None:
        """The kept tasks (and the clusters put back) of one version, None when it has no task."""
        if current.metadata.deletion_timestamp is not None or not current.spec.graceful_eviction_tasks:
            return None
        now = self._ctx.clock.now()
        assessment = self._assess(current, now)
        if not assessment.changed:
            return Step(None, (assessment, now))
        spec = rules.apply_assessment(current.spec, assessment)
        return Step(current.model_copy(update={"spec": spec}), (assessment, now))

    def _assess(self, binding: Binding, now: datetime) -> rules.Assessment:
        try:
            tolerations = rules.applied_tolerations(binding.annotations()) or ()
        except ValueError:
            tolerations = ()
        recovered = [name for name in _sources(binding)
                     if rules.source_recovered(self._clusters.get(name), tolerations)]
        view = rules.view_of(binding.spec, binding.status, binding.metadata.generation)
        return rules.assess_tasks(binding.spec, view, recovered=recovered, now=now,
                                  default_timeout=self._ctx.options.graceful_eviction_timeout)

    # ---------------------------------------------------------------- recording
    async def _record(self, binding: Binding, assessment: rules.Assessment) -> None:
        for verdict in assessment.of("drop"):
            message = f"Evict from cluster {verdict.task.from_cluster} succeed."
            await self._recorder.event(binding, "Normal", constants.EVENT_EVICT_WORKLOAD_SUCCEED, message)
            await self._recorder.event(template_stub(binding), "Normal",
                                       constants.EVENT_EVICT_WORKLOAD_SUCCEED, message)
            await self._recorder.timeline(binding, tl.EVICTION_COMPLETED, verdict.message(),
                                          reason=verdict.task.reason)
        for verdict in assessment.of("clear"):
            await self._recorder.timeline(binding, tl.EVICTION_CLEARED, verdict.message(),
                                          reason=verdict.task.reason)
        await self._explain(binding, assessment)

    async def _explain(self, binding: Binding, assessment: rules.Assessment) -> None:
        """Say once per task why a task past its timeout is kept."""
        for verdict in assessment.of("block"):
            task = verdict.task
            if not self._recorder.first(binding, (tl.EVICTION_BLOCKED, task.from_cluster),
                                        str(task.creation_timestamp)):
                continue
            _log.info("eviction task kept past its timeout", binding=binding.key, reason=verdict.why)
            await self._recorder.timeline(binding, tl.EVICTION_BLOCKED, verdict.message(),
                                          reason=verdict.task.reason)


def _has_tasks(old: Binding | None, new: Binding | None) -> bool:
    return new is not None and bool(new.spec.graceful_eviction_tasks)


class _ClusterEvents:
    """A change of a cluster wakes the bindings with a task from it (recovery may clear them)."""

    def __init__(self, reconciler: GracefulEvictionReconciler, keys: Enqueuer) -> None:
        self._reconciler = reconciler
        self._keys = keys

    def on_add(self, obj: Cluster) -> None:
        self._wake(obj)

    def on_update(self, old: Cluster, new: Cluster) -> None:
        if old.spec.taints != new.spec.taints or old.status.conditions != new.status.conditions:
            self._wake(new)

    def on_delete(self, obj: Cluster) -> None:
        self._wake(obj)

    def _wake(self, cluster: Cluster) -> None:
        for request in self._reconciler.bindings_from(cluster.name):
            self._keys.enqueue(request)


def _new(deps: Deps) -> GracefulEvictionReconciler:
    clusters = deps.informers.informer_for(Cluster)
    bindings = BindingInformers(deps.informers)
    bindings.add_indexer(BY_SOURCE, _sources)
    reconciler = GracefulEvictionReconciler(deps.ctx, clusters, bindings)
    clusters.add_handler(_ClusterEvents(reconciler, deps.keys))
    return reconciler


#: ends eviction tasks safely (control plane only)
SPEC = ControllerSpec(
    NAME, reconciler=_new, kind=ResourceBinding, workers=concurrent_syncs, runs=Runs.PLANE,
    watches=watch_bindings(predicate=_has_tasks),
)


__all__ = ["BY_SOURCE", "NAME", "SPEC", "GracefulEvictionReconciler"]
