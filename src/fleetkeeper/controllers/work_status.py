"""The work-status controller: member objects → ``Work.status.manifestStatuses``.

It serves the Works of the clusters ``ctx.scope`` serves, like the execution controller.

**Reading the members.** Member objects are read from list+watch caches of the objects
Karmada manages (:mod:`~fleetkeeper.runtime.member_objects`), one per (cluster, kind),
started the first time a Work of that cluster and kind is applied. A change of a member
object — a Deployment's ``readyReplicas`` going from 0 to 3 — enqueues its Work (found
through the object's ``work.karmada.io/namespace|name`` annotations). A member that
cannot be reached, and a Cluster whose ``Ready`` is not True, turn the Works' health to
``Unknown`` (the last reflected status is kept); the first successful list after an
outage refreshes every object.

**What wakes a Work.** Its creation, deletion and ``Applied`` condition changes; changes
of its member object; its cluster's ``Ready`` changing. Work events and member-object
changes are both looked at :data:`MEMBER_EVENT_DELAY` after they happen: a Work that just
became Applied has a member object that is starting right now, and reading it a moment
later reports it once, settled, instead of once starting and once again settled.

**Reconcile** (decisions in :mod:`~fleetkeeper.controllers.status_rules`): Works being
deleted and Works not ``Applied=True`` are skipped (as Karmada does); otherwise each
manifest's member object is reflected (ReflectStatus) and judged (InterpretHealth), and
``status.manifestStatuses`` is written when it changed. Failures of the interpreter are
reported as ``ReflectStatusFailed`` / ``InterpretHealthFailed`` events; successes are
not (they would be one event per status change of every workload).
"""

from __future__ import annotations

import contextlib
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition, is_condition_true
from fleetkeeper.api.work import ManifestStatus, Work
from fleetkeeper.controllers import status_rules as rules
from fleetkeeper.controllers.bindings import cluster_of_work, ensure_namespace_index, works_in_cluster
from fleetkeeper.controllers.execution_rules import cluster_ready, ref_of
from fleetkeeper.controllers.writes import write
from fleetkeeper.interpreter import Operation
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys, awaiting_io
from fleetkeeper.runtime.handler import Delayed, EnqueueMapped, FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.member_objects import work_of_member_object
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, concurrent_syncs

CONTROLLER_NAME = "work-status-controller"
#: a member object's changes come in bursts (a Deployment's status moves several times while
#: its pods start); its Work is looked at this long after the first change of a burst
MEMBER_EVENT_DELAY = 0.1


def _applied(work: Work) -> str | None:
    cond = get_condition(work.status.conditions, constants.COND_WORK_APPLIED)
    return cond.status if cond is not None else None


def work_changed(old: Work | None, new: Work | None) -> bool:
    """Work adds and deletes, spec edits, deletion marks and Applied changes (not our own writes)."""
    if old is None or new is None:
        return True
    return (_applied(old) != _applied(new) or old.metadata.generation != new.metadata.generation
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp)


class WorkStatus:
    """Reconciles the manifest statuses of one Work (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        self._works: Informer[Work] = informers.informer_for(Work)
        self._clusters: Informer[Cluster] = informers.informer_for(Cluster)
        ensure_namespace_index(self._works)
        self.objects = ctx.member_objects
        self.objects.subscribe(self._member_changed)
        self._keys = keys
        self._works.add_handler(EnqueueMapped(Delayed(keys, MEMBER_EVENT_DELAY), predicate=work_changed))
        self._clusters.add_handler(FuncHandler(self._cluster_changed))

    def _member_changed(self, cluster: str, obj: dict[str, Any], deleted: bool) -> None:
        work = work_of_member_object(obj)
        if work is not None:
            self._keys.enqueue_after(Request(*work), MEMBER_EVENT_DELAY)

    def _cluster_changed(self, old: Cluster | None, new: Cluster | None) -> None:
        if new is None:
            if old is not None:
                self.objects.forget_cluster(old.name)
            return
        ready = is_condition_true(new.status.conditions, constants.COND_READY)
        if old is not None and ready == is_condition_true(old.status.conditions, constants.COND_READY):
            return
        for work in works_in_cluster(self._works, new.name):
            self._keys.enqueue(Request(work.namespace, work.name))

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        work = self._works.get(str(request))
        if work is None or work.metadata.deletion_timestamp is not None or _applied(work) != "True":
            return Result()
        name = cluster_of_work(work)
        cluster = self._clusters.get(name) if name else None
        if cluster is None or not self._ctx.scope.serves(cluster):
            return Result()
        entries: list[ManifestStatus] = []
        for ordinal, manifest in enumerate(work.spec.workload.manifests or []):
            entry = await self._entry(work, cluster, ordinal, manifest)
            if entry is None:
                continue
            entries.append(entry)
        await self._write(work, entries)
        return Result()

    async def _entry(self, work: Work, cluster: Cluster, ordinal: int,
                     manifest: dict[str, Any]) -> ManifestStatus | None:
        ident = rules.identifier(ordinal, manifest)
        previous = rules.previous_entry(work.status.manifest_statuses, ident)
        ref = ref_of(manifest)
        cache = self.objects.ensure(cluster.name, cluster.spec.api_endpoint, ref.api_version, ref.kind)
        if not cluster_ready(cluster) or not cache.reachable:
            return rules.unknown(previous) if previous is not None else None
        observed = cache.get(ref.namespace, ref.name) if cache.synced else None
        if observed is None:
            return previous  # not there (yet): the list or the watch wakes the Work when it is
        observed = {**observed, "apiVersion": ref.api_version, "kind": ref.kind}
        interpreter = self._ctx.interpreter
        aio = interpreter.aio(awaiting_io)
        try:
            status = await aio.reflect_status(observed)
        except errors.InterpreterError as exc:
            await self._recorder.event(work, "Warning", constants.EVENT_REFLECT_STATUS_FAILED,
                                       f"Failed to reflect status of {ref.kind} {ref.name}: {exc}")
            raise
        verdict: bool | None = True
        if interpreter.hook_enabled(ref.api_version, ref.kind, Operation.INTERPRET_HEALTH):
            try:
                verdict = await aio.interpret_health(observed)
            except errors.InterpreterError as exc:
                verdict = None
                await self._recorder.event(work, "Warning", constants.EVENT_INTERPRET_HEALTH_FAILED,
                                           f"Failed to interpret health of {ref.kind} {ref.name}: {exc}")
        return ManifestStatus(identifier=ident, status=status, health=rules.health_of(verdict))

    async def _write(self, work: Work, entries: list[ManifestStatus]) -> None:
        wanted = entries or None

        def change(current: Work) -> Work | None:
            if current.status.manifest_statuses == wanted:
                return None
            status = current.status.model_copy(update={"manifest_statuses": wanted})
            return current.model_copy(update={"status": status})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, work, change, subresource="status")


def _new(deps: Deps) -> WorkStatus:
    return WorkStatus(deps.ctx, deps.informers, deps.keys)


#: the work-status controller: watches Works (a little later), Clusters and the managed objects in
#: the members; writes ``Work.status.manifestStatuses`` (in a Pull agent, for its own cluster)
SPEC = ControllerSpec(CONTROLLER_NAME, reconciler=_new, kind=Work, workers=concurrent_syncs, runs=Runs.BOTH)


__all__ = ["CONTROLLER_NAME", "SPEC", "WorkStatus", "work_changed"]
