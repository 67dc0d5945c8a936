"""The dependencies distributor: a workload's ConfigMaps, Secrets… follow it.

Only ResourceBindings (namespaced templates), as in Karmada. Decisions are in
:mod:`~fleetkeeper.controllers.dependencies_rules`.

**What wakes an independent binding.** Its creation, spec changes (``propagateDeps``,
new ``spec.clusters``) and deletion; its template's spec changing (new dependencies);
a change of any object it depends on (found through an index of the bindings'
``resourcebinding.karmada.io/dependencies`` annotations — a dependency created after
the workload is picked up at once); the removal of an attached binding that lists it.

**Reconcile.** With ``propagateDeps`` on: ask the interpreter for the template's
dependencies (``GetDependenciesFailed`` on error), record them on the binding with the
distributor's finalizer, then create or update one attached binding per existing
dependency object, holding this binding's snapshot (its ``spec.clusters``), and take
the snapshot out of attached bindings it no longer needs. With ``propagateDeps`` off,
or while the binding is being deleted: take every snapshot out, delete attached
bindings nobody requires any more, and drop the finalizer.
"""

from __future__ import annotations

import contextlib

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.meta import LabelSelector, Resource
from fleetkeeper.api.selectors import label_selector_matches
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.controllers import dependencies_rules as rules
from fleetkeeper.controllers.bindings import binding_id
from fleetkeeper.controllers.templates import Kind, NotSynced, TemplateCache, TemplateRef
from fleetkeeper.controllers.writes import write
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys, awaiting_io
from fleetkeeper.runtime.handler import EnqueueMapped, deleted
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Watch, concurrent_syncs

CONTROLLER_NAME = "dependencies-distributor"
BY_DEPENDENCY = "dependency"
BY_DEPENDED_BY = "depended-by"
NOT_SYNCED_RETRY = 1.0
FINALIZER = constants.BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER


def dependency_index(binding: ResourceBinding) -> list[str]:
    """``apiVersion/kind/namespace/name`` of each recorded dependency (``*`` for selectors)."""
    out = []
    for dep in rules.parse_dependencies(binding.annotations().get(constants.DEPENDENCIES_ANNOTATION)):
        api_version, kind, namespace, name = rules.dependency_key(dep)
        out.append(f"{api_version}/{kind}/{namespace}/{name or '*'}")
    return out


def depended_by_index(binding: ResourceBinding) -> list[str]:
    return [k for k in binding.labels() if k.startswith(constants.DEPENDED_BY_LABEL_PREFIX)]


def binding_changed(old: ResourceBinding | None, new: ResourceBinding | None) -> bool:
    if new is None:
        return True
    if old is None:
        return True
    return (old.metadata.generation != new.metadata.generation
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp)


def _requiring(binding: ResourceBinding) -> list[Request]:
    return [Request(s.namespace or "", s.name) for s in binding.spec.required_by or ()]


class Distributor:
    """Attaches the dependencies of one independent ResourceBinding (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        self._rbs: Informer[ResourceBinding] = informers.informer_for(ResourceBinding)
        for name, fn in ((BY_DEPENDENCY, dependency_index), (BY_DEPENDED_BY, depended_by_index)):
            with contextlib.suppress(ValueError):
                self._rbs.add_indexer(name, fn)
        self._keys = keys
        self.templates = TemplateCache(informers, self._object_handler)

    def _object_handler(self, kind: Kind) -> EnqueueMapped[Resource]:
        return EnqueueMapped(self._keys, self._bindings_of_object)

    def _bindings_of_object(self, obj: Resource) -> list[Request]:
        """The binding of a template, and the bindings depending on an object."""
        ns = obj.metadata.namespace or ""
        out = [Request(ns, constants.binding_name(obj.kind, obj.name))] if ns else []
        prefix = f"{obj.api_version}/{obj.kind}/{ns}/"
        for value in (prefix + obj.name, prefix + "*"):
            out.extend(Request.for_object(b) for b in self._rbs.by_index(BY_DEPENDENCY, value))
        return out

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        if not request.namespace:
            return Result()
        binding = self._rbs.get(str(request))
        if binding is None:
            return Result()
        if binding.metadata.deletion_timestamp is not None or not binding.spec.propagate_deps:
            await self._detach_all(binding)
            return Result()
        try:
            template = self.templates.get(TemplateRef.of_binding(binding))
            if template is None:
                return Result()
            try:
                aio = self._ctx.interpreter.aio(awaiting_io)
                dependencies = await aio.get_dependencies(template.to_dict())
            except errors.InterpreterError as exc:
                await self._recorder.event(binding, "Warning", constants.EVENT_GET_DEPENDENCIES_FAILED,
                                           f"Failed to get dependencies: {exc}")
                raise
            binding = await self._record(binding, dependencies)
            objects = self._resolve(dependencies)
        except NotSynced:
            return Result(requeue_after=NOT_SYNCED_RETRY)
        wanted = {(o.kind, o.name) for o in objects}
        for obj in objects:
            await self._attach(binding, obj)
        for attached in self._attached_to(binding):
            spec = attached.spec.resource
            if (spec.kind, spec.name) not in wanted:
                await self._detach(binding, attached)
        return Result()

    def _resolve(self, dependencies: list[dict[str, object]]) -> list[Resource]:
        """The existing objects the dependencies name (by name or by label selector)."""
        out: list[Resource] = []
        for dep in dependencies:
            api_version, kind, namespace, name = rules.dependency_key(dep)
            if name:
                found = self.templates.get(TemplateRef(api_version, kind, namespace, name))
                if found is not None:
                    out.append(found)
                continue
            selector = LabelSelector.model_validate(dep.get("labelSelector") or {})
            out.extend(o for o in self.templates.list(api_version, kind)
                       if o.namespace == namespace and label_selector_matches(selector, o.labels()))
        return out

    def _attached_to(self, binding: ResourceBinding) -> list[ResourceBinding]:
        label = rules.depended_by_label(binding.namespace, binding.name)
        return [b for b in self._rbs.by_index(BY_DEPENDED_BY, label) if b.key != binding.key]

    async def _record(self, binding: ResourceBinding,
                      dependencies: list[dict[str, object]]) -> ResourceBinding:
        value = rules.dependencies_annotation(dependencies)

        def change(current: ResourceBinding) -> ResourceBinding | None:
            finalizers = list(current.metadata.finalizers or ())
            recorded = current.annotations().get(constants.DEPENDENCIES_ANNOTATION)
            if recorded == value and FINALIZER in finalizers:
                return None
            meta = current.metadata.model_copy(update={
                "annotations": {**current.annotations(), constants.DEPENDENCIES_ANNOTATION: value},
                "finalizers": finalizers if FINALIZER in finalizers else [*finalizers, FINALIZER]})
            return current.model_copy(update={"metadata": meta})

        written = await write(self._ctx.client, binding, change)
        return binding if written is None else written

    def _desired(self, obj: Resource, current: ResourceBinding | None, independent: ResourceBinding,
                 attach: bool) -> ResourceBinding:
        key = (independent.namespace, independent.name)
        snapshot = rules.snapshot_of(independent) if attach else None
        previous = current.spec.required_by if current else None
        required = rules.merge_required_by(previous, snapshot, remove=key)
        specs, ids = [], {}
        for s in required:
            at = (s.namespace or "", s.name)
            requiring = independent if at == key else self._rbs.get(f"{at[0]}/{at[1]}")
            if requiring is not None:
                specs.append(requiring.spec)
                ids[at] = binding_id(requiring)
        conflict, preserve = rules.effective_policy(specs)
        labels = rules.depended_by_labels(required, ids)
        return rules.attached_binding(obj, required, labels, conflict, preserve, current)

    async def _attach(self, independent: ResourceBinding, obj: Resource) -> None:
        client = self._ctx.client
        current = self._rbs.get(f"{obj.namespace}/{constants.binding_name(obj.kind, obj.name)}")
        if current is None:
            try:
                await client.create(self._desired(obj, None, independent, attach=True))
                return
            except errors.AlreadyExists:
                name = constants.binding_name(obj.kind, obj.name)
                current = await client.get(ResourceBinding, name, obj.namespace)

        def change(existing: ResourceBinding) -> ResourceBinding | None:
            desired = self._desired(obj, existing, independent, attach=True)
            return desired if rules.attached_differs(existing, desired) else None

        await write(client, current, change)

    async def _detach(self, independent: ResourceBinding, attached: ResourceBinding) -> None:
        client = self._ctx.client
        key = (independent.namespace, independent.name)

        def change(existing: ResourceBinding) -> ResourceBinding | None:
            required = rules.merge_required_by(existing.spec.required_by, None, remove=key)
            labels = {k: v for k, v in existing.labels().items()
                      if k != rules.depended_by_label(*key)}
            spec = existing.spec.model_copy(update={"required_by": required or None})
            desired = existing.model_copy(update={
                "metadata": existing.metadata.model_copy(update={"labels": labels}), "spec": spec})
            return desired if rules.attached_differs(existing, desired) else None

        try:
            written = await write(client, attached, change)
            left = written if written is not None else attached
            if not left.spec.required_by and not rules.is_claimed(left):
                await client.delete(ResourceBinding, left.name, left.namespace)
        except errors.NotFound:
            pass

    async def _detach_all(self, binding: ResourceBinding) -> None:
        for attached in self._attached_to(binding):
            await self._detach(binding, attached)

        def change(current: ResourceBinding) -> ResourceBinding | None:
            if FINALIZER not in (current.metadata.finalizers or ()):
                return None
            finalizers = [f for f in current.metadata.finalizers or () if f != FINALIZER]
            meta = current.metadata.model_copy(update={"finalizers": finalizers or None})
            return current.model_copy(update={"metadata": meta})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, binding, change)


def _new(deps: Deps) -> Distributor:
    return Distributor(deps.ctx, deps.informers, deps.keys)


#: the dependencies distributor: watches ResourceBindings (and, deleted, those they were
#: required by), their templates and the objects they depend on; writes attached bindings and
#: the dependencies annotation
SPEC = ControllerSpec(
    CONTROLLER_NAME, reconciler=_new, kind=ResourceBinding, workers=concurrent_syncs, runs=Runs.PLANE,
    watches=(Watch(ResourceBinding, predicate=binding_changed),
             Watch(ResourceBinding, _requiring, predicate=deleted)),
)


__all__ = ["CONTROLLER_NAME", "SPEC", "Distributor", "dependency_index"]
