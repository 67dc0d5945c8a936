"""The resource detector: resource template + propagation policy → binding (Karmada: ``pkg/detector``).

One key per resource template, of any kind: ``<apiVersion>/<kind>/<name>`` in the template's
namespace (:mod:`~fleetkeeper.controllers.templates`). Templates are read through
:class:`TemplateCache`, which starts a shared informer for a kind as soon as a
PropagationPolicy or ClusterPropagationPolicy names it (those present at start included, as
the policy informers replay them before any controller runs) and keeps it: no fixed list of
kinds, and a custom kind works like a built-in one.

**What wakes a template.** Its own changes (not status-only writes); a change of a policy
whose selectors match it, before or after the change, or that claims it; a change of its
binding, so a binding deleted by hand comes back; the creation of an OverridePolicy that
its policy's ``dependentOverrides`` wait for.

**Reconcile** (decisions in :mod:`~fleetkeeper.controllers.detector_rules`). A template
gone or deleting has its binding deleted (finalizers then remove the Works and the member
objects); one in a skipped namespace is left alone. Otherwise the claiming policy is chosen
(sticky claims, no preemption by default) — with none, an old claim is released but the
binding and what it runs are kept, as Karmada keeps them when a policy is deleted — the
claim is recorded on the template (Karmada's labels and annotations), and the binding is
created or refreshed, written only when something the detector owns changed, with
optimistic concurrency. Three policy features change when that happens:

* ``dependentOverrides`` naming an OverridePolicy not there (yet): the policy is not
  applied until it appears (or every :data:`DEPENDENT_OVERRIDES_RETRY` seconds), so the
  first Works already carry the overrides; an existing binding is left as it is meanwhile;
* ``activationPreference: Lazy``: as in Karmada, the binding follows the policy only at the
  template's next real change, judged from the template against the version last
  reconciled to the end — whatever woke it, when nothing differs but status, system
  metadata and Karmada's own labels and annotations, the claim is recorded and nothing more;
* ``schedulePriority`` (``KubePriorityClass``): the PriorityClass's value goes into
  ``spec.schedulePriority.priority``, which orders the scheduler's queue and the taint
  manager's evictions (higher first); a class that does not exist holds the binding back
  (``ApplyPolicyFailed`` on the template, another look every :data:`PRIORITY_CLASS_RETRY`
  seconds) as Karmada's detector fails, and a changed value reaches a binding at its
  template's next reconcile.

``ApplyPolicySucceed`` is recorded on the template when its binding is created or changed
(Karmada records it at every look).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.meta import Resource, Unstructured
from fleetkeeper.api.override import OverridePolicy
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding
from fleetkeeper.controllers import detector_rules as rules
from fleetkeeper.controllers.templates import (
    Kind,
    NotSynced,
    TemplateCache,
    TemplateRef,
    parse_template_request,
    template_request,
)
from fleetkeeper.controllers.writes import write
from fleetkeeper.interpreter import Operation
from fleetkeeper.runtime import karmada_metrics as km
from fleetkeeper.runtime.bindings import BindingInformers, watch_bindings
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys, awaiting_io
from fleetkeeper.runtime.handler import EnqueueMapped, FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, concurrent_syncs

CONTROLLER_NAME = "resource-detector"
_log = structlog.get_logger("fleetkeeper.detector")
NOT_SYNCED_RETRY = 1.0
#: how often a template whose policy waits for its dependent overrides is looked at again
DEPENDENT_OVERRIDES_RETRY = 5.0
#: how often a template whose policy names a PriorityClass that does not exist is looked at again
PRIORITY_CLASS_RETRY = 5.0


def template_changed(old: Resource | None, new: Resource | None) -> bool:
    """Adds, deletes, and updates of spec, labels, annotations or deletion (not status-only)."""
    if old is None or new is None:
        return True
    return (old.metadata.generation != new.metadata.generation or old.labels() != new.labels()
            or old.annotations() != new.annotations()
            or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp)


def binding_changed(old: Binding | None, new: Binding | None) -> bool:
    """Binding deletes, edits of what the detector owns, claim-label edits and deletion marks
    (not the scheduler's ``clusters``, nor eviction tasks, nor status)."""
    if old is None or new is None:
        return new is None
    if old.labels() != new.labels() or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp:
        return True
    if old.metadata.generation == new.metadata.generation:
        return False
    return any(getattr(old.spec, name) != getattr(new.spec, name) for name in rules.DETECTOR_FIELDS)


def _template_of_binding(binding: Binding) -> list[Request]:
    return [template_request(TemplateRef.of_binding(binding))]


class Detector:
    """Reconciles one resource template (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._pps: Informer[PropagationPolicy] = informers.informer_for(PropagationPolicy)
        self._cpps: Informer[ClusterPropagationPolicy] = informers.informer_for(ClusterPropagationPolicy)
        self._bindings = BindingInformers(informers)
        self._ops: Informer[OverridePolicy] = informers.informer_for(OverridePolicy)
        self._priority_classes: Informer[Unstructured] = informers.informer_for(BUILTIN["PriorityClass"])
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        #: template → its version last reconciled to the end (a Lazy policy refreshes a binding
        #: only for a template that differs from it in more than Karmada's own changes)
        self._reconciled: dict[Request, Resource] = {}
        self._keys = keys
        self.templates = TemplateCache(informers, self._template_handler)
        self._pps.add_handler(FuncHandler(self._policy_changed))
        self._cpps.add_handler(FuncHandler(self._policy_changed))
        self._ops.add_handler(FuncHandler(self._override_added))

    # ---------------------------------------------------------------- wiring
    def _template_handler(self, kind: Kind) -> EnqueueMapped[Resource]:
        return EnqueueMapped(self._keys, lambda obj: [template_request(TemplateRef.of(obj))],
                             predicate=template_changed)

    def _policy_changed(self, old: rules.Policy | None, new: rules.Policy | None) -> None:
        """Watch the kinds the policy names; wake the templates it may claim or release."""
        policies = [p for p in (old, new) if p is not None]
        ids = {rules.policy_id(p) for p in policies}
        kinds = {(s.api_version, s.kind) for p in policies for s in p.spec.resource_selectors}
        for api_version, kind in sorted(kinds):
            for template in self.templates.list(api_version, kind):
                claim = rules.claim_of(template.labels())
                if (claim is not None and claim.permanent_id in ids) or any(
                        rules.match_priority(p, template) for p in policies):
                    self._keys.enqueue(template_request(TemplateRef.of(template)))
        if old is not None:  # templates it claimed, of kinds it no longer names
            for binding in self._claimed_bindings(ids):
                for request in _template_of_binding(binding):
                    self._keys.enqueue(request)

    def _override_added(self, old: OverridePolicy | None, new: OverridePolicy | None) -> None:
        """An OverridePolicy appeared: wake the templates of the policies that waited for it."""
        if old is not None or new is None:
            return
        for policy in self._pps.list():
            if policy.namespace == new.namespace and new.name in (policy.spec.dependent_overrides or ()):
                self._policy_changed(None, policy)

    def _claimed_bindings(self, ids: set[str]) -> Iterable[Binding]:
        for binding in self._bindings.list():
            claim = rules.claim_of(binding.labels())
            if claim is not None and claim.permanent_id in ids:
                yield binding

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        ref = parse_template_request(request)
        try:
            template = self.templates.get(ref)
        except NotSynced:
            return Result(requeue_after=NOT_SYNCED_RETRY)
        if template is None:
            self._reconciled.pop(request, None)
        result = await self._reconcile(ref, template, edited=self._edited(request, template))
        if template is not None and result.requeue_after is None:
            self._reconciled[request] = template  # a newer version differs from this one
        return result

    def _edited(self, request: Request, template: Resource | None) -> bool:
        """Whether ``template`` differs in more than Karmada's own changes (status, system
        metadata, Karmada's labels and annotations) from its version last reconciled to the end
        — or was not reconciled to the end since it appeared (or the plane started)."""
        last = self._reconciled.get(request)
        if last is None or template is None:
            return True
        if last is template or last.metadata.resource_version == template.metadata.resource_version:
            return False
        return not rules.changed_by_karmada(last, template)

    async def _reconcile(self, ref: TemplateRef, template: Resource | None, *, edited: bool) -> Result:
        if template is None or template.metadata.deletion_timestamp is not None:
            remaining = await self._delete_binding(ref)
            if template is not None and not remaining:
                await self._release_foreground(template)
            return Result()
        if rules.skipped_namespace(ref.namespace):
            return Result()
        namespace_pps = [p for p in self._pps.list() if p.namespace == ref.namespace] if ref.namespace else []
        policy = rules.choose_policy(template, rules.claim_of(template.labels()), namespace_pps,
                                     self._cpps.list())
        binding = self._binding(ref)
        if binding is not None and not rules.stands_for(binding, ref.api_version, ref.kind, ref.name):
            _log.warning("binding name taken by another template", template=str(ref), binding=binding.key)
            return Result()
        if policy is None:
            await self._release(template, binding)
            return Result()
        missing = self._missing_overrides(policy)
        if missing:
            _log.info("policy waits for its dependent overrides", template=str(ref), policy=policy.key,
                      missing=missing)
            return Result(requeue_after=DEPENDENT_OVERRIDES_RETRY)
        await self._claim(template, policy)
        if not edited and rules.is_lazy(policy):
            return Result()  # Lazy: the binding follows the policy at the template's next change
        if binding is not None and binding.metadata.deletion_timestamp is not None:
            return Result()  # the binding's removal wakes this template again
        try:
            priority = self._priority(policy)
        except errors.NotFound as exc:
            _log.info("policy names a PriorityClass that does not exist", template=str(ref),
                      policy=policy.key, error=str(exc))
            await self._recorder.event(template, "Warning", constants.EVENT_APPLY_POLICY_FAILED,
                                       f"Apply {rules.policy_title(policy)} failed: {exc}")
            return Result(requeue_after=PRIORITY_CLASS_RETRY)
        started, applied = self._ctx.clock.monotonic(), False
        try:
            await self._ensure_binding(template, policy, binding, priority)
            applied = True
        finally:  # Karmada's policy_apply_attempts_total and resource_apply_policy_duration_seconds
            result = km.result_of(not applied)
            km.child(km.POLICY_APPLY_ATTEMPTS, result).inc()
            km.child(km.POLICY_APPLY_SECONDS, result).observe(self._ctx.clock.monotonic() - started)
        return Result()

    def _priority(self, policy: rules.Policy) -> int | None:
        """The scheduling priority ``policy`` gives its templates: the value of the Kubernetes
        PriorityClass its ``schedulePriority`` names (None without one; NotFound when that
        PriorityClass does not exist), as Karmada resolves it."""
        wanted = policy.spec.schedule_priority
        if wanted is None:
            return None
        found = self._priority_classes.get(wanted.priority_class_name)
        if found is None:
            name = wanted.priority_class_name
            raise errors.NotFound(f'priorityclasses.scheduling.k8s.io "{name}" not found',
                                  kind="priorityclasses", name=name, group="scheduling.k8s.io")
        value = found.field("value")
        return int(value) if isinstance(value, int | float) else 0

    def _missing_overrides(self, policy: rules.Policy) -> list[str]:
        """The dependent overrides of a PropagationPolicy not in its namespace (yet)."""
        if not isinstance(policy, PropagationPolicy):
            return []
        return [name for name in policy.spec.dependent_overrides or ()
                if self._ops.get(f"{policy.namespace}/{name}") is None]

    def _binding(self, ref: TemplateRef) -> Binding | None:
        return self._bindings.get(Request(ref.namespace, constants.binding_name(ref.kind, ref.name)))

    async def _workload(self, template: Resource, priority: int | None) -> rules.Workload:
        interpreter = self._ctx.interpreter
        if not interpreter.hook_enabled(template.api_version, template.kind, Operation.INTERPRET_REPLICA):
            return rules.Workload(priority=priority)
        replicas, requirements = await interpreter.aio(awaiting_io).get_replicas(template.to_dict())
        return rules.Workload(replicas, requirements, priority)

    async def _ensure_binding(self, template: Resource, policy: rules.Policy,
                              cached: Binding | None, priority: int | None) -> None:
        workload = await self._workload(template, priority)
        client = self._ctx.client
        binding: Binding
        succeed = f"Apply {rules.policy_title(policy)} succeed"
        if cached is not None:
            binding = cached
        else:
            try:
                await client.create(rules.desired_binding(template, policy, workload, None))
                await self._recorder.event(template, "Normal", constants.EVENT_APPLY_POLICY_SUCCEED, succeed)
                return
            except errors.AlreadyExists:
                name = rules.binding_name_of(template)
                if template.metadata.namespace:
                    binding = await client.get(ResourceBinding, name, template.namespace)
                else:
                    binding = await client.get(ClusterResourceBinding, name)

        def change(current: Binding) -> Binding | None:
            desired = rules.desired_binding(template, policy, workload, current)
            return desired if rules.binding_differs(current, desired) else None

        if await write(client, binding, change) is not None:  # told when the binding changes, as
            await self._recorder.event(template, "Normal", constants.EVENT_APPLY_POLICY_SUCCEED, succeed)

    async def _claim(self, template: Resource, policy: rules.Policy | None) -> None:
        def change(current: Resource) -> Resource | None:
            labels, annotations = rules.with_claim(current.labels(), current.annotations(), policy)
            if labels == current.labels() and annotations == current.annotations():
                return None
            meta = current.metadata.model_copy(update={"labels": labels or None,
                                                       "annotations": annotations or None})
            return current.model_copy(update={"metadata": meta})

        with contextlib.suppress(errors.NotFound):  # deleted meanwhile: the delete event brings us back
            await write(self._ctx.client, template, change)

    async def _release(self, template: Resource, binding: Binding | None) -> None:
        await self._claim(template, None)
        if binding is None:
            return

        def change(current: Binding) -> Binding | None:
            labels, annotations = rules.with_claim(current.labels(), current.annotations(), None)
            if labels == current.labels() and annotations == current.annotations():
                return None
            meta = current.metadata.model_copy(update={"labels": labels, "annotations": annotations})
            return current.model_copy(update={"metadata": meta})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, binding, change)

    async def _delete_binding(self, ref: TemplateRef) -> bool:
        """Delete the binding of a template that is gone or going, if the template still owns
        it (one orphaned by ``propagationPolicy: Orphan`` stays); whether such a binding is left."""
        binding = self._binding(ref)
        if binding is None or not rules.stands_for(binding, ref.api_version, ref.kind, ref.name):
            return False
        if not rules.owned_by(binding, ref.api_version, ref.kind, ref.name):
            return False
        if binding.metadata.deletion_timestamp is None:
            with contextlib.suppress(errors.NotFound):
                await self._ctx.client.delete(type(binding), binding.name, binding.namespace)
        return True

    async def _release_foreground(self, template: Resource) -> None:
        """A template deleted in the foreground goes once its binding has gone (the binding's
        removal wakes it): drop the ``foregroundDeletion`` finalizer."""
        if constants.FOREGROUND_DELETION_FINALIZER not in (template.metadata.finalizers or ()):
            return

        def change(current: Resource) -> Resource | None:
            finalizers = [f for f in current.metadata.finalizers or ()
                          if f != constants.FOREGROUND_DELETION_FINALIZER]
            if finalizers == list(current.metadata.finalizers or ()):
                return None
            meta = current.metadata.model_copy(update={"finalizers": finalizers or None})
            return current.model_copy(update={"metadata": meta})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, template, change)


def _new(deps: Deps) -> Detector:
    return Detector(deps.ctx, deps.informers, deps.keys)


#: the detector: watches policies, bindings and every kind policies select; writes bindings and
#: the claim labels on templates
SPEC = ControllerSpec(
    CONTROLLER_NAME, reconciler=_new, workers=concurrent_syncs, runs=Runs.PLANE,
    watches=watch_bindings(_template_of_binding, predicate=binding_changed),
)


__all__ = ["CONTROLLER_NAME", "SPEC", "Detector", "binding_changed", "template_changed"]
