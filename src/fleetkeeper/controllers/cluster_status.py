"""The cluster-status controller: probe each member, write ``Ready`` and what was collected.

One reconcile per cluster, each on its own schedule: the reconcile probes the member
(``/readyz``, ``/healthz`` when that is missing), passes the verdict through the
threshold state machine of :mod:`~fleetkeeper.controllers.cluster_status_rules`,
collects version, APIs and capacity from a healthy member, writes the status only when
it changed, and asks to be called again ``cluster_status_update_frequency`` seconds
after it *started* — so a cluster is probed on a steady cadence whatever its probe
costs.

**A black hole stalls nobody else.** Every call to a member is bounded by
``cluster_probe_timeout`` (:func:`~fleetkeeper.members.interface.bounded`), and the
controller runs many workers (:data:`WORKERS`), so a member that swallows requests
costs one worker one timeout per period while every other cluster keeps its cadence. A timeout is a transport
error: the member is offline.

**Which clusters.** The control plane serves Push clusters; a Pull agent runs this same
controller scoped to its own cluster (``ctx.scope``), which is how a Pull cluster's
status reaches the control plane. Like Karmada, a cluster is left alone until the
cluster controller has put its finalizer on it, so the two never race at creation.

**What is recorded.** Every change of the Ready verdict gets a timeline entry
(``Ready=False (ClusterNotReachable)``) and an Event on the Cluster.

The threshold state lives in memory, per cluster, and is forgotten when the cluster
is deleted; after a restart the first observation is trusted (with the guard the
rules module explains).
"""

from __future__ import annotations

from datetime import datetime

import structlog

from fleetkeeper import errors
from fleetkeeper.api import conditions, constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.controllers import cluster_status_rules as rules
from fleetkeeper.controllers.writes import Step, write_planned
from fleetkeeper.members.interface import ClusterSummary, Member, bounded
from fleetkeeper.runtime import karmada_metrics as km
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.recorder import EventType
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, on_plane

NAME = "cluster-status-controller"
#: concurrent probes: a black-holed member holds one worker for one probe timeout
WORKERS = 64
#: how often a status write re-reads and retries after a conflict before giving up
WRITE_ATTEMPTS = 5

_log = structlog.get_logger("fleetkeeper.cluster_status")


class ClusterStatusReconciler:
    """Probes one cluster per request and writes its status (see the module notes)."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster]) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._recorder = ctx.recorder(NAME)
        self._states: dict[str, rules.ThresholdState] = {}
        options = ctx.options
        self._thresholds = rules.Thresholds(options.cluster_success_threshold,
                                            options.cluster_failure_threshold)

    async def reconcile(self, request: Request) -> Result:
        cluster = self._clusters.get(request.name)
        if cluster is None:
            self._states.pop(request.name, None)
            km.drop(km.CLUSTER_SYNC_SECONDS, request.name)  # as Karmada drops a deleted cluster's series
            return Result()
        if not self._ctx.scope.serves(cluster):
            self._states.pop(request.name, None)
            return Result()
        if constants.CLUSTER_CONTROLLER_FINALIZER not in (cluster.metadata.finalizers or ()):
            return Result()  # the finalizer's arrival wakes this cluster again
        clock = self._ctx.clock
        started, now = clock.monotonic(), clock.now()
        ready, observed, health, summary = await self._observe(cluster, now)
        written, before = await self._write(cluster.name, ready, summary, observed)
        if written and rules.ready_changed(before, ready):
            await self._record(cluster, ready)
        _log.debug("cluster probed", cluster=cluster.name, online=health.online, healthy=health.healthy,
                   ready=ready.status)
        elapsed = clock.monotonic() - started
        km.child(km.CLUSTER_SYNC_SECONDS, cluster.name).observe(elapsed)
        return Result(requeue_after=max(0.0, self._ctx.options.cluster_status_update_frequency - elapsed))

    # ---------------------------------------------------------------- observing
    async def _observe(self, cluster: Cluster, now: datetime
                       ) -> tuple[Condition, Condition, rules.Health, ClusterSummary | None]:
        """Probe, adjust by the thresholds, and collect a summary when Ready; returns the
        thresholded Ready, the raw observation, the health and the summary."""
        current = conditions.get_condition(cluster.status.conditions, rules.READY)
        member: Member | None = None
        try:
            member = self._ctx.members.member(cluster.name, cluster.spec.api_endpoint)
        except (errors.MemberError, ValueError) as exc:
            observed, health = rules.collection_failed(str(exc)), rules.OFFLINE
        else:
            health = await self._probe(member)
            observed = rules.observed_ready(health)
        ready, self._states[cluster.name] = rules.threshold_adjusted(
            self._states.get(cluster.name), current, observed, now, self._thresholds)
        summary = None
        if member is not None and rules.collects_summary(health, ready):
            summary = await self._summary(member)
        return ready, observed, health, summary

    async def _probe(self, member: Member) -> rules.Health:
        code = await self._call_probe(member, "/readyz")
        if rules.needs_healthz(code):
            code = await self._call_probe(member, "/healthz")
        return rules.health_of(code)

    async def _call_probe(self, member: Member, path: str) -> int | None:
        try:
            return await bounded(member.probe(path), self._ctx.options.cluster_probe_timeout, member.name)
        except (errors.MemberError, TimeoutError, OSError) as exc:
            _log.debug("probe failed", cluster=member.name, path=path, error=repr(exc))
            return None

    async def _summary(self, member: Member) -> ClusterSummary | None:
        try:
            return await bounded(member.summary(), self._ctx.options.cluster_probe_timeout, member.name)
        except (errors.MemberError, TimeoutError, OSError) as exc:
            _log.info("collecting the cluster summary failed; keeping the last one", cluster=member.name,
                      error=repr(exc))
            return None

    # ---------------------------------------------------------------- writing
    async def _write(self, name: str, ready: Condition, summary: ClusterSummary | None,
                     observed: Condition | None = None) -> tuple[bool, Condition | None]:
        """Set the desired fields and write only on change (fresh read on conflict).

        Returns whether it wrote, and the Ready condition the write replaced."""
        client = self._ctx.client
        now = self._ctx.clock.now

        def change(current: Cluster) -> Step[Cluster, None]:
            desired = rules.desired_status(current.status, ready, summary, now(), observed=observed)
            return Step(None if desired == current.status else current.model_copy(update={"status": desired}),
                        None)

        cluster = self._clusters.get(name)
        try:
            if cluster is None:
                cluster = await client.get(Cluster, name)
            written = await write_planned(client, cluster, change, subresource="status",
                                          attempts=WRITE_ATTEMPTS)
        except errors.NotFound:
            return False, None
        if written is None or written.stored is None:
            return False, None
        return True, conditions.get_condition(written.base.status.conditions, rules.READY)

    async def _record(self, cluster: Cluster, ready: Condition) -> None:
        text = rules.ready_text(ready)
        await self._recorder.timeline(cluster, tl.CONDITION_CHANGED, text, reason=ready.reason)
        event_type: EventType = "Normal" if ready.status == "True" else "Warning"
        await self._recorder.event(cluster, event_type, ready.reason or "ClusterReadyChanged",
                                   f"{text}: {ready.message}" if ready.message else text)


def _wakes(old: Cluster | None, new: Cluster | None) -> bool:
    """Creation, deletion and spec (generation) changes; the cadence comes from requeues."""
    if old is None or new is None:
        return True
    return (old.metadata.generation != new.metadata.generation
            or old.metadata.finalizers != new.metadata.finalizers)


def _new(deps: Deps) -> ClusterStatusReconciler:
    return ClusterStatusReconciler(deps.ctx, deps.informers.informer_for(Cluster))


#: probes the clusters this instance serves (Push on the control plane, its own in an agent);
#: exempt from turns, and an agent probes whether or not it leads anything
SPEC = ControllerSpec(NAME, reconciler=_new, kind=Cluster, tier=Tier.EXEMPT, workers=WORKERS, runs=Runs.BOTH,
                      leader_elected=on_plane, watches=(Watch(Cluster, predicate=_wakes),))


__all__ = ["NAME", "SPEC", "WORKERS", "ClusterStatusReconciler"]
