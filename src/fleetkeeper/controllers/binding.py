"""The binding controller: a binding's schedule → one Work per target cluster.

One reconciler for ResourceBindings and ClusterResourceBindings (the key says which).

**What wakes a binding.** Its spec, labels or deletion changing (not status-only
writes); one of its Works deleted or edited (so a Work removed by hand comes back and
a deleting binding learns that its last Work is gone); its template's spec, labels or
annotations changing (read through a :class:`TemplateCache`, watched per kind from the
first binding of that kind); an override policy that may select its template being
created, changed or deleted; the execution namespace of one of its clusters leaving the
store (it held back that cluster's Work while it was terminating).

**Reconcile** (decisions in :mod:`~fleetkeeper.controllers.binding_rules`):

1. deleting → delete every Work of the binding (found by a live list, so a Work the
   cache has not shown yet is not missed) and, once none is left, drop the binding
   controller's finalizer; the execution controller removes the member objects first;
2. make sure the binding carries the finalizer and a permanent id (the detector sets
   both; a binding created by hand gets them here);
3. delete orphaned Works (``CleanupWorkFailed`` on failure); while Works remain in the
   cluster of a ``Directly`` eviction task, write nothing and look again in 5 s;
4. render and write one Work per target cluster (replicas revised per cluster, a Divided
   Job's completions split, the state a ``Directly`` failover preserved injected as labels
   into the new cluster's copy — :mod:`~fleetkeeper.controllers.state_preservation` —,
   suspension and preservation written explicitly, then the cluster's OverridePolicies
   and ClusterOverridePolicies applied — :mod:`~fleetkeeper.controllers.override_rules`)
   — only Works that differ are written, all of them in one store transaction. No Work is
   written into an execution namespace that is terminating: that cluster's Work waits
   until the namespace has gone (the cluster controller then makes a new one).
   ``SyncWorkSucceed`` when something was written, ``SyncWorkFailed`` on failure (both on
   the binding and on the template); ``WorkCreated``/``WorkDeleted`` on the timeline.
"""

from __future__ import annotations

import contextlib
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import is_condition_true
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.matching import resource_selectors_priority
from fleetkeeper.api.meta import ObjectMeta, Resource
from fleetkeeper.api.override import ClusterOverridePolicy, OverridePolicy
from fleetkeeper.api.work import Binding, ResourceBinding, Work, template_stub
from fleetkeeper.client.interface import batch
from fleetkeeper.controllers import binding_rules as rules
from fleetkeeper.controllers import bindings as b
from fleetkeeper.controllers import override_rules as overrides
from fleetkeeper.controllers import state_preservation
from fleetkeeper.controllers.templates import Kind, NotSynced, TemplateCache, TemplateRef
from fleetkeeper.controllers.writes import write
from fleetkeeper.interpreter import Operation
from fleetkeeper.runtime import karmada_metrics as km
from fleetkeeper.runtime.bindings import BindingInformers, watch_bindings
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys, awaiting_io
from fleetkeeper.runtime.handler import EnqueueMapped, deleted, generation_changed
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.recorder import EventType
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, concurrent_syncs

CONTROLLER_NAME = "binding-controller"
NOT_SYNCED_RETRY = 1.0
#: index of the OverridePolicy cache: namespace → policies
OVERRIDES_BY_NAMESPACE = "binding-controller/namespace"


def binding_changed(old: Binding | None, new: Binding | None) -> bool:
    if old is None or new is None:
        return True
    return (old.metadata.generation != new.metadata.generation or old.labels() != new.labels()
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp)


def work_changed(old: Work | None, new: Work | None) -> bool:
    """Work deletes, spec edits and deletion marks (not status writes, not our own creates)."""
    if old is None or new is None:
        return new is None
    return (old.metadata.generation != new.metadata.generation
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp)


def template_changed(old: Resource | None, new: Resource | None) -> bool:
    if old is None or new is None:
        return True
    return (old.metadata.generation != new.metadata.generation or old.labels() != new.labels()
            or old.annotations() != new.annotations())


def binding_of_template(obj: Resource) -> list[Request]:
    return [Request(obj.metadata.namespace or "", constants.binding_name(obj.kind, obj.name))]


def _identity(binding: Binding) -> dict[str, Any]:
    """The template a binding stands for, as far as its resource reference tells."""
    resource = binding.spec.resource
    return {"apiVersion": resource.api_version, "kind": resource.kind,
            "metadata": {"namespace": resource.namespace or "", "name": resource.name}}


def _binding_of_work(work: Work) -> list[Request]:
    request = b.binding_request_of_work(work)
    return [request] if request is not None else []


class BindingController:
    """Reconciles one binding of either kind (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        self._bindings = BindingInformers(informers)
        self._works: Informer[Work] = informers.informer_for(Work)
        b.ensure_work_index(self._works)
        self._clusters: Informer[Cluster] = informers.informer_for(Cluster)
        self._ops: Informer[OverridePolicy] = informers.informer_for(OverridePolicy)
        self._ops.add_indexer(OVERRIDES_BY_NAMESPACE, lambda policy: [policy.namespace])
        self._cops: Informer[ClusterOverridePolicy] = informers.informer_for(ClusterOverridePolicy)
        self._spaces: Informer[Namespace] = informers.informer_for(
            Namespace, label_selector=constants.KARMADA_SYSTEM_SELECTOR)  # execution namespaces
        self._keys = keys
        self.templates = TemplateCache(informers, self._template_handler)
        #: Work key → resourceVersion of this controller's last update of it, until its event
        #: comes: what the controller wrote itself is no reason to look at the binding again
        self._wrote: dict[str, str] = {}
        keys.watch(self._works, _binding_of_work, predicate=self._work_changed)
        keys.watch(self._ops, self._selected_bindings, predicate=generation_changed)
        keys.watch(self._cops, self._selected_bindings, predicate=generation_changed)
        keys.watch(self._spaces, self._bindings_on_space, predicate=deleted)
        self._bindings.add_handler(self._recorder.forgetting())

    def _template_handler(self, kind: Kind) -> EnqueueMapped[Resource]:
        return EnqueueMapped(self._keys, binding_of_template, predicate=template_changed)

    def _bindings_on_space(self, space: Namespace) -> list[Request]:
        """The bindings that schedule onto the cluster of execution namespace ``space``."""
        cluster = constants.cluster_of_space(space.name)
        if cluster is None:
            return []
        return [Request.for_object(binding) for binding in self._bindings.list()
                if any(target.name == cluster for target in binding.spec.clusters or ())]

    def _terminating(self, cluster: str) -> bool:
        space = self._spaces.get(constants.execution_namespace(cluster))
        return space is not None and space.metadata.deletion_timestamp is not None

    def _selected_bindings(self, policy: OverridePolicy | ClusterOverridePolicy) -> list[Request]:
        """The bindings whose templates ``policy`` selects (called with the policy before and
        after a change). A template not in the cache yet is judged by the binding's resource
        reference alone: a selector with a label selector then counts as selecting."""
        namespace = policy.namespace if isinstance(policy, OverridePolicy) else None
        selectors = policy.spec.resource_selectors or []
        by_reference = [s.model_copy(update={"label_selector": None}) for s in selectors]
        found: list[Binding] = [rb for rb in self._bindings.rbs.list() if namespace in (None, rb.namespace)]
        if namespace is None:
            found.extend(self._bindings.crbs.list())
        out: list[Request] = []
        for binding in found:
            if selectors:
                try:
                    template = self.templates.get(TemplateRef.of_binding(binding))
                except NotSynced:
                    template = None
                if template is not None:
                    if not resource_selectors_priority(selectors, template):
                        continue
                elif not resource_selectors_priority(by_reference, _identity(binding)):
                    continue
            out.append(Request.for_object(binding))
        return out

    def _work_changed(self, old: Work | None, new: Work | None) -> bool:
        """:func:`work_changed`, but not for the event of this controller's own update."""
        work = new if new is not None else old
        last = self._wrote.pop(work.key, None) if work is not None else None
        if new is not None and last is not None and last == new.metadata.resource_version:
            return False
        return work_changed(old, new)

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        binding = self._bindings.get(request)
        if binding is None:
            return Result()
        if binding.metadata.deletion_timestamp is not None:
            await self._finalize(binding)
            return Result()
        binding = await self._ensure_metadata(binding)
        works = b.works_of(self._works, binding)
        spec = binding.spec
        orphans = rules.orphan_works(works, rules.existing_clusters(spec))
        if orphans:
            await self._delete_works(binding, orphans, "orphaned: the cluster is no longer a target",
                                     report=True)
        held = rules.works_in(works, rules.directly_clusters(spec))
        waiting_on = sorted({b.cluster_of_work(w) or "" for w in held})
        await self._note_directly_wait(binding, waiting_on)
        if waiting_on:
            return Result(requeue_after=rules.DIRECTLY_REQUEUE_SECONDS)
        resource = spec.resource
        try:
            template = self.templates.get(TemplateRef.of_binding(binding))
        except NotSynced:
            return Result(requeue_after=NOT_SYNCED_RETRY)
        if template is None:
            return Result()
        started, synced = self._ctx.clock.monotonic(), False
        try:
            created, updated, overridden = await self._ensure_works(binding, template, works)
            synced = True
        except overrides.Failed as failed:
            await self._recorder.event(template_stub(binding), "Warning",
                                       constants.EVENT_APPLY_OVERRIDE_POLICY_FAILED,
                                       f"Apply {failed.title} for cluster({failed.cluster}) failed.")
            await self._event(binding, "Warning", constants.EVENT_SYNC_WORK_FAILED,
                              f"Failed to create or update works: {failed.error}")
            raise failed.error from None
        except Exception as exc:
            await self._event(binding, "Warning", constants.EVENT_SYNC_WORK_FAILED,
                              f"Failed to create or update works: {exc}")
            raise
        finally:  # Karmada's binding_sync_work_duration_seconds
            seconds = self._ctx.clock.monotonic() - started
            km.child(km.SYNC_WORK_SECONDS, km.result_of(not synced)).observe(seconds)
        for cluster, title in overridden:  # as Karmada reports them, on the template
            await self._recorder.event(template_stub(binding), "Normal",
                                       constants.EVENT_APPLY_OVERRIDE_POLICY_SUCCEED,
                                       f"Apply {title} for cluster({cluster}) succeed.")
        if created or updated:
            await self._event(binding, "Normal", constants.EVENT_SYNC_WORK_SUCCEED,
                              f"Sync work of {binding.kind}({binding.key}) successful.")
        if created:
            name = constants.work_name(resource.kind, resource.name, resource.namespace or "")
            await self._recorder.timeline(binding, tl.WORK_CREATED, rules.created_message(created, name))
        return Result()

    async def _ensure_metadata(self, binding: Binding) -> Binding:
        namespaced = not b.is_cluster_scoped(binding)

        def change(current: Binding) -> Binding | None:
            key, fin = b.id_label(namespaced), b.finalizer(namespaced)
            finalizers = list(current.metadata.finalizers or ())
            labels = current.labels()
            if labels.get(key) and fin in finalizers:
                return None
            ident = labels.get(key) or b.derive_id(current.kind, current.metadata.uid or "")
            meta = current.metadata.model_copy(update={
                "labels": {**labels, key: ident},
                "finalizers": [*finalizers, fin] if fin not in finalizers else finalizers})
            return current.model_copy(update={"metadata": meta})

        written = await write(self._ctx.client, binding, change)
        return binding if written is None else written

    async def _ensure_works(self, binding: Binding, template: Resource, works: list[Work]
                            ) -> tuple[list[str], list[str], list[tuple[str, str]]]:
        """Write the Work of every target cluster; the clusters whose Work was created / updated,
        and (cluster, policy title) of the override policies applied in those Works."""
        by_key = {w.key: w for w in works}
        created: list[str] = []
        updated: list[str] = []
        overridden: list[tuple[str, str]] = []
        desired = await self._desired_works(binding, template)
        async with batch(self._ctx.client):
            for plan, titles in desired:
                cluster = plan.cluster
                if self._terminating(cluster):
                    continue  # written once the namespace has gone (its Works go with it)
                outcome = await self._write_work(by_key.get(plan.key), plan)
                if outcome is rules.WorkWrite.CREATED:
                    created.append(cluster)
                elif outcome is rules.WorkWrite.UPDATED:
                    updated.append(cluster)
                if outcome is not rules.WorkWrite.UNCHANGED:
                    overridden.extend((cluster, title) for title in titles)
        return created, updated, overridden

    async def _manifests(self, binding: Binding, template: Resource
                         ) -> list[tuple[str, dict[str, Any], dict[str, str], list[str]]]:
        """(cluster, manifest before Karmada's metadata, applied-overrides annotations, titles
        of the override policies applied) for every target cluster; an override that fails
        raises :class:`override_rules.Failed`."""
        spec = binding.spec
        interpreter = self._ctx.interpreter
        pruned = interpreter.prune(template.to_dict())
        revise = rules.is_workload(spec) and interpreter.hook_enabled(
            template.api_version, template.kind, Operation.REVISE_REPLICA)
        revised: dict[int, dict[str, Any]] = {}  # one ReviseReplica per distinct replica count
        targets = rules.target_clusters(spec)
        completions = rules.job_completions(pruned, spec, targets)
        cops = self._cops.list()
        ops = self._ops.by_index(OVERRIDES_BY_NAMESPACE, template.namespace) if template.namespace else []
        out = []
        for target in targets:
            # the manifests share the pruned template's nested values: nothing below mutates them
            manifest = pruned
            if revise:
                if target.replicas not in revised:
                    revised[target.replicas] = await interpreter.aio(awaiting_io).revise_replica(
                        pruned, target.replicas)
                manifest = revised[target.replicas]
            if target.name in completions:
                manifest = rules.with_completions(manifest, completions[target.name])
            # state preserved by a failover, as labels of the new cluster's copy
            preserved = state_preservation.labels_to_inject(spec, target.name)
            manifest = state_preservation.inject(manifest, preserved)
            applied: dict[str, str] = {}
            titles: list[str] = []
            if cops or ops:  # cluster-wide ones first, then the namespace's
                cluster = self._clusters.get(target.name) or Cluster(metadata=ObjectMeta(name=target.name))
                cluster_matched = overrides.matching(cops, pruned, cluster)
                matched = overrides.matching(ops, pruned, cluster)
                manifest = overrides.apply_for(manifest, cluster_matched, matched, template.namespace,
                                               target.name)
                applied = overrides.applied_annotations(cluster_matched, matched)
                titles = overrides.applied_titles(cluster_matched, matched, template.namespace)
            out.append((target.name, manifest, applied, titles))
        return out

    async def _desired_works(self, binding: Binding, template: Resource
                             ) -> list[tuple[rules.WorkPlan, list[str]]]:
        """The Work plan of every target cluster, with the titles of the override policies applied."""
        spec, resource = binding.spec, binding.spec.resource
        namespaced = not b.is_cluster_scoped(binding)
        name = constants.work_name(resource.kind, resource.name, resource.namespace or "")
        references = b.reference_annotations(binding)
        conflict = rules.conflict_resolution(template.annotations(), spec.conflict_resolution)
        ident, id_label = b.binding_id(binding), b.id_label(namespaced)
        uid, generation = template.metadata.uid or "", template.metadata.generation or 0
        out = []
        for cluster, manifest, applied, titles in await self._manifests(binding, template):
            work_id = rules.work_permanent_id(ident, cluster)
            rendered = rules.render_manifest(
                manifest, id_label=id_label, binding_permanent_id=ident, work_id=work_id, work_name=name,
                work_namespace=constants.execution_namespace(cluster), template_uid=uid,
                template_generation=generation, references=references, conflict=conflict)
            out.append((rules.WorkPlan(
                name=name, cluster=cluster, manifest=rendered, id_label=id_label, binding_permanent_id=ident,
                work_id=work_id, references=references, conflict=conflict,
                suspend=rules.dispatch_suspended(spec.suspension, cluster),
                preserve=bool(spec.preserve_resources_on_deletion), overrides=applied), titles))
        return out

    async def _write_work(self, current: Work | None, plan: rules.WorkPlan) -> rules.WorkWrite:
        client = self._ctx.client
        if current is None:
            try:
                await client.create(rules.desired_work(plan, None))
                return rules.WorkWrite.CREATED
            except errors.AlreadyExists:
                current = await client.get(Work, plan.name, constants.execution_namespace(plan.cluster))
        if current.metadata.deletion_timestamp is not None:
            raise errors.Conflict(f"Work {current.key} is being deleted; it is written again once it is gone")

        def change(work: Work) -> Work | None:
            desired = rules.desired_work(plan, work)
            return desired if rules.work_differs(work, desired) else None

        written = await write(client, current, change)
        if written is None:
            return rules.WorkWrite.UNCHANGED
        if written.metadata.resource_version:
            self._wrote[written.key] = written.metadata.resource_version
        return rules.WorkWrite.UPDATED

    # ---------------------------------------------------------------- deletion
    async def _delete_works(self, binding: Binding, works: list[Work], why: str, *, report: bool) -> None:
        deleted: list[Work] = []
        for work in works:
            try:
                await self._ctx.client.delete(Work, work.name, work.namespace)
                deleted.append(work)
            except errors.NotFound:
                pass
            except errors.FleetkeeperError as exc:
                if report:
                    await self._recorder.event(binding, "Warning", constants.EVENT_CLEANUP_WORK_FAILED,
                                               f"Failed to clean up work {work.key}: {exc}")
                raise
        if deleted:
            await self._recorder.timeline(binding, tl.WORK_DELETED, rules.deleted_message(deleted, why))

    async def _finalize(self, binding: Binding) -> None:
        namespaced = not b.is_cluster_scoped(binding)
        fin = b.finalizer(namespaced)
        if fin not in (binding.metadata.finalizers or ()):
            return
        works: list[Work] = []
        if b.binding_id(binding):
            works = (await self._ctx.client.list(Work, label_selector=b.works_selector(binding))).items
        live = [w for w in works if w.metadata.deletion_timestamp is None]
        if live:
            await self._delete_works(binding, live, "the binding is being deleted", report=False)
        if works:
            return  # the Works' deletion wakes this binding again

        def change(current: Binding) -> Binding | None:
            finalizers = [f for f in current.metadata.finalizers or () if f != fin]
            if finalizers == list(current.metadata.finalizers or ()):
                return None
            meta = current.metadata.model_copy(update={"finalizers": finalizers or None})
            return current.model_copy(update={"metadata": meta})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, binding, change)

    async def _note_directly_wait(self, binding: Binding, clusters: list[str]) -> None:
        """Say on the timeline, once per wait, why no new Work is written yet (purge mode
        ``Directly``: the old copy goes first, and a cluster that does not answer keeps it)."""
        if not clusters:
            self._recorder.clear(binding, tl.DISPATCH_WAITING)
            return
        if not self._recorder.first(binding, tl.DISPATCH_WAITING, tuple(clusters)):
            return
        message = (f"new Works wait until the old copy in {', '.join(clusters)} is removed "
                   "(purge mode Directly)")
        silent = [name for name in clusters if not _ready(self._clusters.get(name))]
        if silent:
            message += f"; {', '.join(silent)} is not Ready: its copy is removed once it answers again"
        await self._recorder.timeline(binding, tl.DISPATCH_WAITING, message, reason="PurgeDirectly")

    async def _event(self, binding: Binding, kind: EventType, reason: str, message: str) -> None:
        await self._recorder.event(binding, kind, reason, message)
        await self._recorder.event(template_stub(binding), kind, reason, message)


def _ready(cluster: Cluster | None) -> bool:
    return cluster is not None and is_condition_true(cluster.status.conditions, constants.COND_READY)


def _new(deps: Deps) -> BindingController:
    return BindingController(deps.ctx, deps.informers, deps.keys)


#: the binding controller: watches bindings, Works, override policies, execution namespaces and
#: templates; writes Works and the binding finalizer (dispatch: carries the failover's decisions)
SPEC = ControllerSpec(
    CONTROLLER_NAME, reconciler=_new, kind=ResourceBinding, tier=Tier.DISPATCH, workers=concurrent_syncs,
    runs=Runs.PLANE,
    watches=watch_bindings(predicate=binding_changed),
)


__all__ = [
    "CONTROLLER_NAME", "SPEC", "BindingController", "binding_changed", "work_changed",
]
