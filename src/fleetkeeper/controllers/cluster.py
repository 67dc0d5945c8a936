"""The cluster controller: execution spaces, system taints, heartbeats, cluster deletion.

Three duties, all control-plane only:

* **Lifecycle** (:class:`ClusterReconciler`, one reconcile per Cluster event, and when its
  execution namespace goes): make sure the execution namespace ``karmada-es-<name>``
  exists — again after somebody deleted it, once the old one is gone — keep the two system NoSchedule
  taints (``not-ready``/``unreachable``) in step with the Ready condition, and hold the
  finalizer ``karmada.io/cluster-controller``. Taints and finalizer go out in one
  update, computed on the object and rewritten from a fresh read on conflict.
* **Deletion**: the Works of the execution space are deleted (for a Pull cluster that is
  not Ready their execution finalizer is released first — nobody could clean the member
  anyway), then the namespace; the finalizer goes once no binding still schedules onto
  the cluster. Each wait is a 10 s requeue, as in Karmada.
* **Heartbeats** (:class:`HeartbeatMonitor`, every ``cluster_monitor_period``): a Pull
  cluster whose Ready condition and Lease have both been silent for the grace period is
  marked ``Ready=Unknown`` (the rules are :func:`cluster_rules.monitor`); the taint
  sync above then swaps ``not-ready`` for ``unreachable``.

Every taint change is an Event (``TaintClusterSucceed``, Karmada's message) and a
timeline entry per taint; a heartbeat loss is a timeline entry ``Ready=Unknown
(ClusterStatusUnknown)``.
"""

from __future__ import annotations

import contextlib

import structlog

from fleetkeeper import errors
from fleetkeeper.api import conditions, constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease
from fleetkeeper.api.core import Namespace, Taint
from fleetkeeper.api.work import ClusterResourceBinding, ResourceBinding, Work
from fleetkeeper.controllers import cluster_rules as rules
from fleetkeeper.controllers.writes import Step, write, write_planned
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.handler import deleted
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, concurrent_syncs

NAME = "cluster-controller"
#: the timeline reason of a taint changed before the cluster has any Ready condition
NO_READY_CONDITION = "NoReadyCondition"
#: Karmada's retry interval while a deleted cluster is being cleaned up
CLEANUP_RETRY = 10.0
#: a write re-reads and retries this often after a conflict before the key is retried with backoff
WRITE_ATTEMPTS = 5
#: heartbeat status writes: tries per cluster and the pause between them (Karmada: 5 × 20 ms)
MONITOR_TRIES = 5
MONITOR_RETRY_PAUSE = 0.02

_log = structlog.get_logger("fleetkeeper.cluster")


class ClusterReconciler:
    """Execution space, system taints, finalizer and deletion of one cluster."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster], namespaces: Informer[Namespace],
                 monitor: HeartbeatMonitor) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._namespaces = namespaces
        self._monitor = monitor
        self._recorder = ctx.recorder(NAME)

    async def reconcile(self, request: Request) -> Result:
        cluster = self._clusters.get(request.name)
        if cluster is None:
            self._monitor.forget(request.name)
            return Result()
        if cluster.metadata.deletion_timestamp is not None:
            return await self._remove(cluster)
        await self._ensure_execution_space(cluster)
        await self._sync(cluster)
        return Result()

    # ---------------------------------------------------------------- lifecycle
    async def _ensure_execution_space(self, cluster: Cluster) -> None:
        space = rules.execution_space(cluster.name)
        if self._namespaces.get(space.name) is not None:
            return
        try:
            await self._ctx.client.create(space)
        except errors.AlreadyExists:
            return
        except errors.ApiError as exc:
            await self._recorder.event(
                cluster, "Warning", constants.EVENT_CREATE_EXECUTION_SPACE_FAILED,
                f"Failed to create execution namespace for cluster {cluster.name}: {exc}")
            raise
        await self._recorder.event(cluster, "Normal", constants.EVENT_CREATE_EXECUTION_SPACE_SUCCEED,
                                   f"Created execution namespace({space.name}) for cluster({cluster.name}).")

    async def _sync(self, cluster: Cluster) -> None:
        """Taints by Ready and the finalizer, in one update (fresh read on conflict)."""
        async def failed(current: Cluster, taints: list[Taint] | None, exc: errors.ApiError) -> None:
            if taints is not None:
                await self._recorder.event(current, "Warning", constants.EVENT_TAINT_CLUSTER_FAILED,
                                           f"Taint cluster failed: {exc}")

        written = await write_planned(self._ctx.client, cluster, self._synced, attempts=WRITE_ATTEMPTS,
                                      missing="none", on_error=failed)
        if written is not None and written.stored is not None and written.plan is not None:
            await self._record_taints(written.stored, written.base)

    def _synced(self, current: Cluster) -> Step[Cluster, list[Taint] | None] | None:
        """The cluster with its system taints in step with Ready and the finalizer on, and the
        taints when they change; None when it is being deleted or already so."""
        if current.metadata.deletion_timestamp is not None:
            return None
        ready = conditions.get_condition(current.status.conditions, constants.COND_READY)
        taints = rules.sync_ready_taints(current.spec.taints, ready, self._ctx.clock.now())
        finalizers = list(current.metadata.finalizers or ())
        missing_finalizer = constants.CLUSTER_CONTROLLER_FINALIZER not in finalizers
        if taints is None and not missing_finalizer:
            return None
        desired = current.deep_copy()
        if taints is not None:
            desired.spec.taints = taints or None
        if missing_finalizer:
            desired.metadata.finalizers = [*finalizers, constants.CLUSTER_CONTROLLER_FINALIZER]
        return Step(desired, taints)

    async def _record_taints(self, written: Cluster, before: Cluster) -> None:
        added, removed = rules.taint_diff(before.spec.taints, written.spec.taints)
        await self._recorder.event(written, "Normal", constants.EVENT_TAINT_CLUSTER_SUCCEED,
                                   f"Taint cluster succeed: {rules.taints_message(written.spec.taints)}")
        ready = conditions.get_condition(written.status.conditions, constants.COND_READY)
        why = f"Ready={ready.status}" if ready is not None else "no Ready condition yet"
        # the reason is the Ready condition's (the controller is the entry's component)
        reason = (ready.reason or f"Ready{ready.status}") if ready is not None else NO_READY_CONDITION
        for taint in added:
            await self._recorder.timeline(written, tl.TAINT_ADDED,
                                          f"taint {rules.taint_text(taint)} added ({why})", reason=reason)
        for taint in removed:
            await self._recorder.timeline(written, tl.TAINT_REMOVED,
                                          f"taint {rules.taint_text(taint)} removed ({why})", reason=reason)

    # ---------------------------------------------------------------- deletion
    async def _remove(self, cluster: Cluster) -> Result:
        client = self._ctx.client
        namespace = constants.execution_namespace(cluster.name)
        works = (await client.list(Work, namespace)).items
        if works:
            await self._delete_works(cluster, works)
            return Result(requeue_after=CLEANUP_RETRY)
        try:
            space = await client.get(Namespace, namespace)
            if space.metadata.deletion_timestamp is not None:
                return Result(requeue_after=CLEANUP_RETRY)  # the namespace cleanup finalizes it
            await client.delete(Namespace, namespace)
        except errors.NotFound:
            pass
        except errors.ApiError as exc:
            await self._recorder.event(cluster, "Warning", constants.EVENT_REMOVE_EXECUTION_SPACE_FAILED,
                                       f"Failed to remove execution namespace {namespace}: {exc}")
            raise
        else:
            await self._recorder.event(
                cluster, "Normal", constants.EVENT_REMOVE_EXECUTION_SPACE_SUCCEED,
                f"Removed execution namespace({namespace}) for cluster({cluster.name}).")
            return Result(requeue_after=CLEANUP_RETRY)
        self._monitor.forget(cluster.name)
        if await self._still_scheduled(cluster.name):
            return Result(requeue_after=CLEANUP_RETRY)
        await self._drop_finalizer(cluster)
        return Result()

    async def _delete_works(self, cluster: Cluster, works: list[Work]) -> None:
        ready = conditions.is_condition_true(cluster.status.conditions, constants.COND_READY)
        release = cluster.spec.sync_mode == constants.SYNC_MODE_PULL and not ready
        finalizer = constants.EXECUTION_CONTROLLER_FINALIZER
        for work in works:
            if release and finalizer in (work.metadata.finalizers or ()):
                kept = [f for f in work.metadata.finalizers or () if f != finalizer]
                released = work.deep_copy()
                released.metadata.finalizers = kept or None
                try:
                    await self._ctx.client.update(released)
                except (errors.NotFound, errors.Conflict):
                    continue  # gone, or changed: the next round looks again
            if work.metadata.deletion_timestamp is None:
                with contextlib.suppress(errors.NotFound):
                    await self._ctx.client.delete(Work, work.name, work.namespace)

    async def _still_scheduled(self, name: str) -> bool:
        for model in (ResourceBinding, ClusterResourceBinding):
            for binding in (await self._ctx.client.list(model)).items:
                if any(target.name == name for target in binding.spec.clusters or ()):
                    return True
        return False

    async def _drop_finalizer(self, cluster: Cluster) -> None:
        def change(current: Cluster) -> Cluster | None:
            finalizers = [f for f in current.metadata.finalizers or ()
                          if f != constants.CLUSTER_CONTROLLER_FINALIZER]
            if finalizers == list(current.metadata.finalizers or ()):
                return None
            released = current.deep_copy()
            released.metadata.finalizers = finalizers or None
            return released

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, cluster, change, attempts=WRITE_ATTEMPTS)


class HeartbeatMonitor:
    """Marks silent Pull clusters ``Ready=Unknown`` (a leader-elected runnable)."""

    needs_leader_election = True
    name = "cluster-heartbeat-monitor"

    def __init__(self, ctx: Context, clusters: Informer[Cluster], leases: Informer[Lease]) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._leases = leases
        self._records: dict[str, rules.HealthRecord] = {}
        self._recorder = ctx.recorder(NAME)
        options = ctx.options
        self._graces = rules.Graces(options.cluster_monitor_grace_period,
                                    options.cluster_startup_grace_period,
                                    skew_window=options.cluster_monitor_period)

    def forget(self, name: str) -> None:
        self._records.pop(name, None)

    async def run(self) -> None:
        while True:
            await self.check_all()
            await self._ctx.clock.sleep(self._next_wake())

    def _next_wake(self) -> float:
        """Seconds until the next pass: the monitor period, or sooner when a silent Pull
        cluster's grace runs out before it (so Unknown lands exactly at the deadline)."""
        period = self._ctx.options.cluster_monitor_period
        now = self._ctx.clock.now()
        wake = period
        for cluster in self._clusters.list():
            record = self._records.get(cluster.name)
            due = None if record is None else rules.deadline(record, cluster, self._graces)
            if due is not None:
                wake = min(wake, max(0.0, (due - now).total_seconds()))
        return max(wake, 0.001)

    async def check_all(self) -> None:
        """One monitor pass over every cluster in the cache."""
        names = set()
        for cluster in self._clusters.list():
            names.add(cluster.name)
            try:
                await self._check(cluster)
            except errors.FleetkeeperError as exc:
                _log.warning("heartbeat check failed", cluster=cluster.name, error=str(exc))
        for gone in set(self._records) - names:
            del self._records[gone]

    async def _check(self, cluster: Cluster) -> None:
        lease = self._leases.get(f"{constants.LEASE_NAMESPACE}/{cluster.name}")
        renew = None if lease is None else lease.spec.renew_time

        def step(current: Cluster) -> Step[Cluster, rules.MonitorResult]:
            result = rules.monitor(self._records.get(cluster.name), current, renew, self._ctx.clock.now(),
                                   self._graces)
            self._records[cluster.name] = result.record
            if result.ready is None or result.written is None:
                return Step(None, result)
            status = current.status.model_copy(update={
                "conditions": conditions.set_condition(current.status.conditions, result.ready,
                                                       self._ctx.clock.now())})
            return Step(current.model_copy(update={"status": status}), result)

        try:
            outcome = await write_planned(self._ctx.client, cluster, step, subresource="status",
                                          attempts=MONITOR_TRIES, missing="none", pause=self._pause)
        except errors.Conflict:
            return  # the next pass tries again
        if outcome is None:
            self.forget(cluster.name)
            return
        result, written = outcome.plan, outcome.stored
        if written is None or result.ready is None or result.written is None:
            return
        self._records[cluster.name] = result.written
        reason = result.ready.reason
        await self._recorder.timeline(written, tl.CONDITION_CHANGED, f"Ready=Unknown ({reason})",
                                      reason=reason)
        await self._recorder.event(written, "Warning", result.ready.reason, result.ready.message)

    async def _pause(self) -> None:
        await self._ctx.clock.sleep(MONITOR_RETRY_PAUSE)


def _cluster_of_space(namespace: Namespace) -> list[Request]:
    cluster = constants.cluster_of_space(namespace.name)
    return [Request("", cluster)] if cluster else []


def _new(deps: Deps) -> ClusterReconciler:
    clusters = deps.informers.informer_for(Cluster)
    namespaces = deps.informers.informer_for(Namespace, label_selector=constants.KARMADA_SYSTEM_SELECTOR)
    leases = deps.informers.informer_for(Lease, constants.LEASE_NAMESPACE)
    monitor = HeartbeatMonitor(deps.ctx, clusters, leases)
    deps.add(monitor)
    return ClusterReconciler(deps.ctx, clusters, namespaces, monitor)


#: cluster lifecycle, system taints and heartbeats (control plane only; exempt from turns:
#: failure detection never waits behind a rescheduling)
SPEC = ControllerSpec(
    NAME, reconciler=_new, kind=Cluster, tier=Tier.EXEMPT, workers=concurrent_syncs, runs=Runs.PLANE,
    watches=(
        Watch(Cluster),
        # the execution namespaces carry the system label; the controller watches only those
        Watch(Namespace, _cluster_of_space, predicate=deleted,  # gone: make a new one
              label_selector=constants.KARMADA_SYSTEM_SELECTOR),
    ),
)


__all__ = ["CLEANUP_RETRY", "NAME", "SPEC", "ClusterReconciler", "HeartbeatMonitor"]
