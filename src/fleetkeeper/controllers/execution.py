"""The execution controller: a Work → its object in the member cluster.

It serves the Works of the clusters ``ctx.scope`` serves: every Push cluster on the
control plane, its own cluster in a Pull agent.

**What wakes a Work.** Its creation, spec edits and deletion (not status writes, which
are its own); its cluster becoming Ready (or starting to be deleted), which wakes every
Work in the cluster's execution namespace — so work held while a cluster was away
resumes the moment it is back, not after a backoff; and its member object being deleted
behind Karmada's back (seen through the shared member caches of
:mod:`~fleetkeeper.runtime.member_objects`), so the object is put back. Edits of a
member object's spec are not watched: they are corrected the next time the Work changes.

**Reconcile** (decisions in :mod:`~fleetkeeper.controllers.execution_rules`):

* deleting → clean the member up — delete the object, or strip Karmada's labels with
  ``preserveResourcesOnDeletion`` — then drop the ``karmada.io/execution-controller``
  finalizer. A cluster that is not Ready keeps the Work (and its finalizer) until it is
  back: the cleanup is never skipped, except for a cluster that is itself going away.
  Suspension never blocks deletion;
* ``suspendDispatching`` → ``Dispatching=False/SuspendDispatching`` and nothing is
  applied (``True`` again on resume, with ``WorkDispatching`` events and timeline entries);
* cluster not Ready → nothing is applied (its Ready transition wakes the Work);
* otherwise apply each manifest (server-side apply, field manager ``fleetkeeper``),
  honouring conflict resolution and the kind's Retain rule, and record
  ``Applied=True/AppliedSuccessful`` or ``False/AppliedFailed`` with ``SyncSucceed`` /
  ``SyncFailed`` events. A manifest whose namespace the member does not have yet waits
  for it: the Work is looked at again when that namespace's own Work is applied to the
  member (or after ``cluster_status_update_frequency``), not retried with backoff.

Every member call is bounded by ``options.cluster_probe_timeout``: a black-holed member
costs one worker that long, never the other clusters. Member errors (unreachable,
timeout) are retried with the controller's backoff and leave the conditions alone — an
outage says nothing new about whether the manifest applies.

Syncs and member writes are counted under Karmada's names
(``work_sync_workload_duration_seconds``, ``create_resource_to_cluster``, …:
:mod:`~fleetkeeper.runtime.karmada_metrics`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition, set_condition
from fleetkeeper.api.meta import Condition, ObjectMeta, Unstructured
from fleetkeeper.api.work import Work, binding_model
from fleetkeeper.controllers import execution_rules as rules
from fleetkeeper.controllers.bindings import (
    binding_request_of_work,
    cluster_of_work,
    ensure_namespace_index,
    works_in_cluster,
)
from fleetkeeper.controllers.writes import write
from fleetkeeper.interpreter import Busy, Operation
from fleetkeeper.members.interface import Member, bounded
from fleetkeeper.runtime import karmada_metrics as km
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys, awaiting_io
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.member_objects import work_of_member_object
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, concurrent_syncs

T = TypeVar("T")
CONTROLLER_NAME = "execution-controller"


def work_changed(old: Work | None, new: Work | None) -> bool:
    if old is None or new is None:
        return new is not None
    return (old.metadata.generation != new.metadata.generation
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp)


def manifest_stub(manifest: dict[str, Any]) -> Unstructured:
    """The member object a manifest stands for (to record events about it)."""
    ref = rules.ref_of(manifest)
    return Unstructured.for_kind(ref.api_version, ref.kind)(
        metadata=ObjectMeta(name=ref.name, namespace=ref.namespace or None))


class Execution:
    """Reconciles one Work (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        self._works: Informer[Work] = informers.informer_for(Work)
        self._clusters: Informer[Cluster] = informers.informer_for(Cluster)
        ensure_namespace_index(self._works)
        #: Work key → (its uid, {ordinal: the manifest last applied}): skips re-applying what the
        #: member already holds; a Work re-created under the same name starts afresh
        self._last: dict[str, tuple[str, dict[int, dict[str, Any]]]] = {}
        self._objects = ctx.member_objects
        self._keys = keys
        #: (cluster, namespace) → the Works waiting for that namespace to exist in the member
        self._waiting: dict[tuple[str, str], set[Request]] = {}
        self._clusters.add_handler(FuncHandler(self._cluster_changed))
        self._objects.subscribe(self._member_changed)

    def _member_changed(self, cluster: str, obj: dict[str, Any], deleted: bool) -> None:
        """A managed object deleted in a member wakes its Work (which puts it back)."""
        work = work_of_member_object(obj) if deleted else None
        if work is not None:
            self._keys.enqueue(Request(*work))

    def _cluster_changed(self, old: Cluster | None, new: Cluster | None) -> None:
        """A cluster that became Ready (or started deleting) wakes the Works held for it."""
        if new is None:
            return
        became_ready = rules.cluster_ready(new) and (old is None or not rules.cluster_ready(old))
        deleting = new.metadata.deletion_timestamp is not None and (
            old is None or old.metadata.deletion_timestamp is None)
        if not (became_ready or deleting):
            return
        for work in works_in_cluster(self._works, new.name):
            self._keys.enqueue(Request(work.namespace, work.name))

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        work = self._works.get(str(request))
        if work is None:
            self._last.pop(str(request), None)
            return Result()
        name = cluster_of_work(work)
        if name is None:
            return Result()
        cluster = self._clusters.get(name)
        deleting = work.metadata.deletion_timestamp is not None
        if cluster is None:
            if deleting:  # the cluster is gone: nothing left to clean up
                await self._release(work)
            return Result()
        if not self._ctx.scope.serves(cluster):
            return Result()
        if deleting:
            return await self._cleanup(work, cluster)
        suspended = bool(work.spec.suspend_dispatching)
        dispatching = rules.dispatching_condition(suspended)
        if suspended or not rules.cluster_ready(cluster):
            await self._write_status(work, dispatching, None)
            return Result()
        started = self._ctx.clock.monotonic()
        try:
            applied, refused, waiting = await self._apply(work, cluster)
        except Exception:
            km.child(km.SYNC_WORKLOAD_SECONDS, km.ERROR).observe(self._ctx.clock.monotonic() - started)
            raise
        km.child(km.SYNC_WORKLOAD_SECONDS, km.result_of(applied.status != "True")).observe(
            self._ctx.clock.monotonic() - started)
        await self._write_status(work, dispatching, applied)
        if waiting is not None and applied.status != "True":
            return Result(requeue_after=self._ctx.options.cluster_status_update_frequency)
        if refused:  # the member refused the manifests as they are: the Work must change first
            raise errors.TerminalError(applied.message)
        if applied.status != "True":
            raise errors.InternalError(applied.message)  # retried with backoff, as Karmada does
        return Result()

    def _member(self, cluster: Cluster) -> Member:
        return self._ctx.members.member(cluster.name, cluster.spec.api_endpoint)

    async def _call(self, member: Member, call: Awaitable[T]) -> T:
        """One member call: bounded by the probe timeout, and holding nobody's turn while it
        waits (:func:`~fleetkeeper.runtime.controller.awaiting_io`)."""
        with awaiting_io():
            return await bounded(call, self._ctx.options.cluster_probe_timeout, member.name)

    async def _apply(self, work: Work, cluster: Cluster) -> tuple[Condition, bool, str | None]:
        """Apply every manifest: the ``Applied`` condition, whether every failure was the
        member refusing a manifest as invalid (which no retry of the same Work can mend), and
        a namespace the member lacks for one of them."""
        member = self._member(cluster)
        manifests = work.spec.workload.manifests or []
        problems: list[str] = []
        refusals = 0
        changed = False
        waiting = None
        for ordinal, manifest in enumerate(manifests):
            try:
                changed |= await self._apply_one(member, work, ordinal, manifest)
            except (errors.MemberError, Busy):
                raise  # transient: the whole Work is retried, nothing is reported about the manifest
            except errors.FleetkeeperError as exc:
                missing = rules.missing_namespace(exc, manifest)
                if missing is not None:  # at once: its namespace may be applied while we record this
                    waiting = missing
                    waiters = self._waiting.setdefault((cluster.name, missing), set())
                    waiters.add(Request(work.namespace, work.name))
                problems.append(str(exc))
                refusals += isinstance(exc, errors.Invalid | errors.BadRequest)
                await self._recorder.event(manifest_stub(manifest), "Warning", constants.EVENT_SYNC_FAILED,
                                           f"Failed to sync {work.key}: {exc}")
        condition = rules.applied_condition(len(manifests) - len(problems), len(manifests), problems)
        if problems:
            await self._recorder.event(work, "Warning", constants.EVENT_SYNC_FAILED, condition.message)
        elif changed:
            await self._recorder.event(work, "Normal", constants.EVENT_SYNC_SUCCEED,
                                       "Successfully applied resource to cluster " + cluster.name)
        return condition, bool(problems) and refusals == len(problems), waiting

    async def _apply_one(self, member: Member, work: Work, ordinal: int, manifest: dict[str, Any]) -> bool:
        """Apply one manifest; whether the member was written."""
        ref = rules.ref_of(manifest)
        observed = await self._call(member, member.get(ref))
        problem = rules.conflict_problem(observed, manifest)
        if problem is not None:
            raise errors.Conflict(problem, kind=ref.kind, name=ref.name)
        desired = manifest
        interpreter = self._ctx.interpreter
        if observed is not None and interpreter.hook_enabled(ref.api_version, ref.kind, Operation.RETAIN):
            desired = await interpreter.aio(awaiting_io).retain(manifest, observed)
        uid, applied = self._last.get(work.key, ("", {}))
        if uid != work.metadata.uid:
            uid, applied = work.metadata.uid or "", {}
        if not rules.needs_apply(desired, observed, applied.get(ordinal)):
            return False
        done = False
        try:
            await self._call(member, member.apply(desired))
            done = True
        finally:  # Karmada's create_resource_to_cluster / update_resource_to_cluster, by outcome
            result = km.result_of(not done)
            if observed is None:
                km.child(km.CREATE_TO_CLUSTER, result, ref.api_version, ref.kind, member.name, "false").inc()
            else:
                km.child(km.UPDATE_TO_CLUSTER, result, ref.api_version, ref.kind, member.name,
                         "updated").inc()
        applied[ordinal] = desired
        self._last[work.key] = (uid, applied)
        cluster = self._clusters.get(member.name)
        endpoint = cluster.spec.api_endpoint if cluster is not None else None
        self._objects.ensure(member.name, endpoint, ref.api_version, ref.kind)  # to see it deleted
        if ref.kind == "Namespace" and ref.api_version == "v1":  # what waited for it may go on
            for waiter in self._waiting.pop((member.name, ref.name), ()):
                self._keys.enqueue(waiter)
        return True

    async def _write_status(self, work: Work, dispatching: Condition, applied: Condition | None) -> None:
        now = self._ctx.clock.now()

        def change(current: Work) -> Work | None:
            conditions = set_condition(current.status.conditions, dispatching, now)
            if applied is not None:
                conditions = set_condition(conditions, applied, now)
            if conditions == (current.status.conditions or []):
                return None
            status = current.status.model_copy(update={"conditions": conditions})
            return current.model_copy(update={"status": status})

        before = get_condition(work.status.conditions, constants.COND_WORK_DISPATCHING)
        try:
            if await write(self._ctx.client, work, change, subresource="status") is None:
                return
        except errors.NotFound:
            return
        if before is not None and before.status != dispatching.status:
            await self._recorder.event(work, "Normal", constants.EVENT_WORK_DISPATCHING, dispatching.message)
            action = tl.DISPATCH_SUSPENDED if dispatching.status == "False" else tl.DISPATCH_RESUMED
            await self._recorder.timeline(work, action, dispatching.message, reason=dispatching.reason)

    # ---------------------------------------------------------------- deletion
    async def _cleanup(self, work: Work, cluster: Cluster) -> Result:
        action = rules.cleanup_action(preserve=bool(work.spec.preserve_resources_on_deletion),
                                      ready=rules.cluster_ready(cluster),
                                      cluster_deleting=cluster.metadata.deletion_timestamp is not None)
        if action is rules.Cleanup.WAIT:
            return Result(requeue_after=self._ctx.options.cluster_status_update_frequency)
        cleaned: list[str] = []
        preserve = action is rules.Cleanup.PRESERVE
        if action is not rules.Cleanup.SKIP:
            member = self._member(cluster)
            for manifest in work.spec.workload.manifests or []:
                if await self._clean_one(member, manifest, preserve=preserve):
                    ref = rules.ref_of(manifest)
                    cleaned.append(f"{ref.kind} {ref.namespace + '/' if ref.namespace else ''}{ref.name}")
        if await self._release(work) and cleaned:
            verb = "released (kept, no longer managed) in" if preserve else "removed from"
            await self._recorder.timeline(
                _binding_subject(work), tl.WORK_CLEANED_UP,
                f"{', '.join(cleaned)} {verb} {cluster.name} (Work {work.namespace}/{work.name} deleted)")
        return Result()

    async def _clean_one(self, member: Member, manifest: dict[str, Any], *, preserve: bool) -> bool:
        """Delete (or release) one manifest's object in the member; whether there was one of ours."""
        ref = rules.ref_of(manifest)
        observed = await self._call(member, member.get(ref))
        if observed is None or not rules.is_managed(observed):
            return False
        if preserve:
            await self._call(member, member.apply(rules.stripped(manifest)))
        else:
            done = False
            try:
                await self._call(member, member.delete(ref))
                done = True
            finally:
                km.child(km.DELETE_FROM_CLUSTER, km.result_of(not done), ref.api_version, ref.kind,
                         member.name).inc()
        return True

    async def _release(self, work: Work) -> bool:
        """Drop the execution finalizer (the Work then goes away); whether this call dropped it."""
        self._last.pop(work.key, None)

        def change(current: Work) -> Work | None:
            finalizers = [f for f in current.metadata.finalizers or ()
                          if f != constants.EXECUTION_CONTROLLER_FINALIZER]
            if len(finalizers) == len(current.metadata.finalizers or ()):
                return None
            meta = current.metadata.model_copy(update={"finalizers": finalizers or None})
            return current.model_copy(update={"metadata": meta})

        try:
            return await write(self._ctx.client, work, change) is not None
        except errors.NotFound:
            return False


def _binding_subject(work: Work) -> Work | tl.Subject:
    """The binding a Work belongs to, as a timeline subject (the Work itself if it names none)."""
    request = binding_request_of_work(work)
    if request is None:
        return work
    model = binding_model(request.namespace)
    return tl.Subject(api_version=model.API_VERSION, kind=model.KIND, name=request.name,
                      namespace=request.namespace or None)


def _new(deps: Deps) -> Execution:
    return Execution(deps.ctx, deps.informers, deps.keys)


#: the execution controller: watches Works, Clusters and the managed objects in the members;
#: writes member objects, the Work's Applied/Dispatching conditions and its finalizer (dispatch:
#: carries the failover's decisions; in a Pull agent, for its own cluster)
SPEC = ControllerSpec(CONTROLLER_NAME, reconciler=_new, kind=Work, tier=Tier.DISPATCH,
                      workers=concurrent_syncs, runs=Runs.BOTH,
                      watches=(Watch(Work, predicate=work_changed),))


__all__ = ["CONTROLLER_NAME", "SPEC", "Execution", "manifest_stub", "work_changed"]
