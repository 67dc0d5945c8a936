"""The resource detector's decisions, as pure functions (Karmada: ``pkg/detector``).

Which policy claims a template, and what binding that claim implies:

* **eligibility** — templates in reserved namespaces (``karmada-system``,
  ``karmada-cluster``, ``karmada-es-*``) and in ``kube-*`` namespaces (Karmada's
  default ``--skipped-propagating-namespaces``) are never propagated;
* **matching** — a PropagationPolicy only sees templates of its own namespace; a
  ClusterPropagationPolicy sees every namespace and cluster-scoped templates. Among the
  policies whose resourceSelectors match, the highest explicit ``priority`` wins, then
  the most specific implicit match (name > label selector > kind only), then the
  alphabetically first name. A PropagationPolicy always beats a ClusterPropagationPolicy;
* **claims are sticky** — a template claimed by a policy that still exists and still
  matches stays with it. Another policy takes over only by *preemption*, which is off
  by default (``preemption: Never``): a ``preemption: Always`` PropagationPolicy preempts
  a ClusterPropagationPolicy claim, and a policy preempts one of its own kind only with a
  strictly higher priority. A claim whose policy is gone or stopped matching is
  released and the template matched afresh;
* **permanent ids** — policies and bindings carry Karmada's permanent-id labels. Where
  Karmada's webhooks draw random UUIDs, fleetkeeper derives them (uuid5) from the
  object's uid — the policy's own, the template's for its binding — so a simulation
  names everything the same every run;
* **the binding** — name ``lower(name-kind)``, owner reference to the template, the
  binding controller's finalizer, replicas and requirements from the interpreter, and
  ``propagateDeps``/``schedulerName``/``placement``/``failover``/``conflictResolution``/
  ``preserveResourcesOnDeletion`` copied from the policy, ``suspension`` merged.
  What others own (``clusters``, eviction tasks, ``requiredBy``, reschedule requests…)
  is kept from the existing binding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fleetkeeper.api import constants
from fleetkeeper.api.matching import ImplicitPriority, resource_selectors_priority
from fleetkeeper.api.meta import ObjectMeta, OwnerReference, Resource
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy, Suspension
from fleetkeeper.api.work import (
    Binding,
    BindingSchedulePriority,
    BindingSuspension,
    ObjectReference,
    ReplicaRequirements,
    ResourceBindingSpec,
    binding_model,
)
from fleetkeeper.controllers.bindings import derive_id, finalizer, id_label

Policy = PropagationPolicy | ClusterPropagationPolicy
PolicyKind = Literal["PropagationPolicy", "ClusterPropagationPolicy"]

#: every label/annotation key a claim may set (both policy kinds)
CLAIM_LABELS = (constants.PP_PERMANENT_ID_LABEL, constants.CPP_PERMANENT_ID_LABEL)
CLAIM_ANNOTATIONS = (constants.PP_NAMESPACE_ANNOTATION, constants.PP_NAME_ANNOTATION,
                     constants.CPP_NAME_ANNOTATION)


def skipped_namespace(namespace: str) -> bool:
    """Whether templates in ``namespace`` are never propagated (reserved or ``kube-*``)."""
    return constants.is_reserved_namespace(namespace) or namespace.startswith("kube-")


def policy_id(policy: Policy) -> str:
    """The policy's permanent id: its label, else the id derived from its uid."""
    label = _id_label_of(policy)
    return policy.labels().get(label) or derive_id(policy.kind, policy.metadata.uid or policy.key)


def _id_label_of(policy: Policy) -> str:
    return (constants.PP_PERMANENT_ID_LABEL if isinstance(policy, PropagationPolicy)
            else constants.CPP_PERMANENT_ID_LABEL)


def binding_permanent_id(template: Resource, *, namespaced: bool) -> str:
    """A new binding's permanent id, derived from its template's uid."""
    kind = "ResourceBinding" if namespaced else "ClusterResourceBinding"
    return derive_id(kind, template.metadata.uid or template.key)


# --- matching -------------------------------------------------------------------------------------


def match_priority(policy: Policy, template: Resource) -> ImplicitPriority:
    """How specifically ``policy`` selects ``template`` (``MISMATCH`` when it does not)."""
    if policy.metadata.deletion_timestamp is not None:
        return ImplicitPriority.MISMATCH
    if isinstance(policy, PropagationPolicy) and policy.namespace != template.namespace:
        return ImplicitPriority.MISMATCH
    return resource_selectors_priority(policy.spec.resource_selectors, template)


def best_policy(policies: Iterable[Policy], template: Resource) -> Policy | None:
    """The highest explicit priority, then implicit priority, then the first name."""
    best: tuple[int, int, str] | None = None
    chosen: Policy | None = None
    for policy in policies:
        implicit = match_priority(policy, template)
        if implicit == ImplicitPriority.MISMATCH:
            continue
        rank = (-policy.spec.priority, -int(implicit), policy.name)
        if best is None or rank < best:
            best, chosen = rank, policy
    return chosen


@dataclass(frozen=True, slots=True)
class Claim:
    """Which policy a template (or binding) is claimed by, as its labels say."""

    kind: PolicyKind
    permanent_id: str


def claim_of(labels: Mapping[str, str]) -> Claim | None:
    """The claim recorded in ``labels`` (a PropagationPolicy claim first)."""
    if labels.get(constants.PP_PERMANENT_ID_LABEL):
        return Claim("PropagationPolicy", labels[constants.PP_PERMANENT_ID_LABEL])
    if labels.get(constants.CPP_PERMANENT_ID_LABEL):
        return Claim("ClusterPropagationPolicy", labels[constants.CPP_PERMANENT_ID_LABEL])
    return None


#: a label or annotation key of Karmada's own when it contains this (Karmada's rule)
KARMADA_KEY_PART = ".karmada.io"
#: the exception: a label with Karmada's prefix that users set
USER_KARMADA_LABELS = frozenset({"namespace.karmada.io/skip-auto-propagation"})
#: what an update may change without being anyone's edit of the template
_IGNORED_META = ("managedFields", "resourceVersion", "generation")


def is_lazy(policy: Policy | None) -> bool:
    """``activationPreference: Lazy``: the policy's changes wait for each template's own next change."""
    return policy is not None and policy.spec.activation_preference == "Lazy"


def _without_karmada(obj: Resource) -> dict[str, Any]:
    data = obj.to_dict()
    data.pop("status", None)
    meta = dict(data.get("metadata") or {})
    for field in _IGNORED_META:
        meta.pop(field, None)
    labels = {k: v for k, v in (meta.get("labels") or {}).items()
              if KARMADA_KEY_PART not in k or k in USER_KARMADA_LABELS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if KARMADA_KEY_PART not in k}
    meta["labels"], meta["annotations"] = labels or None, annotations or None
    return {**data, "metadata": meta}


def changed_by_karmada(old: Resource, new: Resource) -> bool:
    """Whether an update of a template is Karmada's own: nothing differs but its status,
    system metadata and Karmada's labels and annotations (Karmada's ``ResourceChangeByKarmada``)."""
    return _without_karmada(old) == _without_karmada(new)


def _preempts(candidate: Policy, holder: Policy) -> bool:
    if candidate.spec.preemption != "Always" or candidate is holder:
        return False
    if isinstance(candidate, PropagationPolicy) and isinstance(holder, ClusterPropagationPolicy):
        return True
    return type(candidate) is type(holder) and candidate.spec.priority > holder.spec.priority


def choose_policy(template: Resource, claim: Claim | None, pps: Iterable[PropagationPolicy],
                  cpps: Iterable[ClusterPropagationPolicy]) -> Policy | None:
    """The policy that should claim ``template`` now (None: no policy selects it)."""
    pp_list = [p for p in pps if match_priority(p, template) > ImplicitPriority.MISMATCH]
    cpp_list = [p for p in cpps if match_priority(p, template) > ImplicitPriority.MISMATCH]
    best = best_policy(pp_list, template) or best_policy(cpp_list, template)
    holder = None
    if claim is not None:
        pool: list[Policy] = list(pp_list if claim.kind == "PropagationPolicy" else cpp_list)
        holder = next((p for p in pool if policy_id(p) == claim.permanent_id), None)
    if holder is None:
        return best
    contenders: list[Policy] = [*pp_list, *cpp_list]
    preempting = [p for p in contenders if _preempts(p, holder)]
    return best_policy(preempting, template) or holder


# --- claims on metadata ---------------------------------------------------------------------------


def claim_metadata(policy: Policy | None) -> tuple[dict[str, str], dict[str, str]]:
    """The claim labels and annotations ``policy`` puts on templates and bindings."""
    if policy is None:
        return {}, {}
    if isinstance(policy, PropagationPolicy):
        return ({constants.PP_PERMANENT_ID_LABEL: policy_id(policy)},
                {constants.PP_NAMESPACE_ANNOTATION: policy.namespace,
                 constants.PP_NAME_ANNOTATION: policy.name})
    return ({constants.CPP_PERMANENT_ID_LABEL: policy_id(policy)},
            {constants.CPP_NAME_ANNOTATION: policy.name})


def with_claim(labels: Mapping[str, str], annotations: Mapping[str, str],
               policy: Policy | None) -> tuple[dict[str, str], dict[str, str]]:
    """``labels``/``annotations`` claimed by ``policy`` (every other claim key removed)."""
    claim_labels, claim_annotations = claim_metadata(policy)
    new_labels = {k: v for k, v in labels.items() if k not in CLAIM_LABELS}
    new_annotations = {k: v for k, v in annotations.items() if k not in CLAIM_ANNOTATIONS}
    return {**new_labels, **claim_labels}, {**new_annotations, **claim_annotations}


# --- the binding ----------------------------------------------------------------------------------


#: the binding spec fields the detector writes
DETECTOR_FIELDS = ("resource", "propagate_deps", "replica_requirements", "replicas", "scheduler_name",
                   "placement", "failover", "conflict_resolution", "preserve_resources_on_deletion",
                   "suspension", "schedule_priority")


def merge_suspension(policy: Suspension | None,
                     current: BindingSuspension | None) -> BindingSuspension | None:
    """Binding suspension after a refresh from the policy: dispatch fields from
    the policy, ``scheduling`` kept; None when nothing is left."""
    scheduling = current.scheduling if current is not None else None
    if policy is None:
        return BindingSuspension(scheduling=scheduling) if scheduling is not None else None
    return BindingSuspension(dispatching=policy.dispatching,
                             dispatching_on_clusters=policy.dispatching_on_clusters, scheduling=scheduling)


@dataclass(frozen=True, slots=True)
class Workload:
    """What the interpreter said about a template (GetReplicas), and the scheduling priority
    its policy gives it (the value of the policy's PriorityClass; None: no schedulePriority)."""

    replicas: int = 0
    requirements: dict[str, Any] | None = None
    priority: int | None = None


def policy_title(policy: Policy) -> str:
    """How Karmada's events name a policy: ``policy(NAMESPACE/NAME)`` or ``cluster policy(NAME)``."""
    if isinstance(policy, PropagationPolicy):
        return f"policy({policy.namespace}/{policy.name})"
    return f"cluster policy({policy.name})"


def binding_name_of(template: Resource) -> str:
    return constants.binding_name(template.kind, template.name)


def desired_spec(template: Resource, policy: Policy, workload: Workload,
                 current: ResourceBindingSpec | None) -> ResourceBindingSpec:
    """The binding spec ``policy`` implies, keeping what other components own."""
    spec = policy.spec
    resource = ObjectReference(api_version=template.api_version, kind=template.kind,
                               namespace=template.metadata.namespace or None, name=template.name,
                               uid=template.metadata.uid, resource_version=template.metadata.resource_version)
    requirements = (ReplicaRequirements.model_validate(workload.requirements)
                    if workload.requirements else None)
    owned: dict[str, Any] = {
        "resource": resource, "propagate_deps": spec.propagate_deps, "replicas": workload.replicas,
        "replica_requirements": requirements, "scheduler_name": spec.scheduler_name,
        "placement": spec.placement.model_copy(deep=True), "failover": spec.failover,
        "conflict_resolution": spec.conflict_resolution,
        "preserve_resources_on_deletion": spec.preserve_resources_on_deletion,
        "suspension": merge_suspension(spec.suspension, current.suspension if current else None),
        "schedule_priority": (BindingSchedulePriority(priority=workload.priority)
                              if workload.priority is not None else None),
    }
    if current is None:
        return ResourceBindingSpec(**owned)
    return current.model_copy(update=owned)


def owner_reference(template: Resource) -> OwnerReference:
    return OwnerReference(api_version=template.api_version, kind=template.kind, name=template.name,
                          uid=template.metadata.uid or "", controller=True, block_owner_deletion=True)


def desired_binding(template: Resource, policy: Policy, workload: Workload,
                    current: Binding | None) -> Binding:
    """The binding of ``template`` under ``policy`` (a new one, or ``current`` refreshed)."""
    namespaced = bool(template.metadata.namespace)
    labels, annotations = with_claim(current.labels() if current else {},
                                     current.annotations() if current else {}, policy)
    key = id_label(namespaced)
    labels[key] = labels.get(key) or binding_permanent_id(template, namespaced=namespaced)
    finalizers = list(current.metadata.finalizers or ()) if current else []
    if finalizer(namespaced) not in finalizers:
        finalizers.append(finalizer(namespaced))
    others = [r for r in (current.metadata.owner_references or ()) if not r.controller] if current else []
    spec = desired_spec(template, policy, workload, current.spec if current else None)
    if current is not None:
        meta = current.metadata.model_copy(update={
            "labels": labels, "annotations": annotations, "finalizers": finalizers,
            "owner_references": [owner_reference(template), *others]})
        return current.model_copy(update={"metadata": meta, "spec": spec})
    meta = ObjectMeta(name=binding_name_of(template), namespace=template.metadata.namespace or None,
                      labels=labels, annotations=annotations, finalizers=finalizers,
                      owner_references=[owner_reference(template)])
    return binding_model(template.metadata.namespace)(metadata=meta, spec=spec)


def binding_differs(current: Binding, desired: Binding) -> bool:
    """Whether a write is needed; the template's resourceVersion alone never forces one."""
    if current.metadata != desired.metadata:
        return True
    a = current.spec.model_copy(update={"resource": current.spec.resource.model_copy(
        update={"resource_version": None})})
    b = desired.spec.model_copy(update={"resource": desired.spec.resource.model_copy(
        update={"resource_version": None})})
    return a != b


def owned_by(binding: Binding, template_api_version: str, kind: str, name: str) -> bool:
    """Whether that template is ``binding``'s controlling owner (the ownerReference the detector
    sets; the garbage collector's orphaning removes it)."""
    group = template_api_version.rpartition("/")[0]
    return any(ref.controller and ref.kind == kind and ref.name == name
               and ref.api_version.rpartition("/")[0] == group
               for ref in binding.metadata.owner_references or ())


def stands_for(binding: Binding, template_api_version: str, kind: str, name: str) -> bool:
    """Whether ``binding`` is the binding of that template (same group, kind and name)."""
    resource = binding.spec.resource
    return (resource.kind == kind and resource.name == name
            and resource.api_version.rpartition("/")[0] == template_api_version.rpartition("/")[0])


__all__ = [
    "CLAIM_ANNOTATIONS",
    "CLAIM_LABELS",
    "DETECTOR_FIELDS",
    "KARMADA_KEY_PART",
    "USER_KARMADA_LABELS",
    "Claim",
    "Policy",
    "PolicyKind",
    "Workload",
    "best_policy",
    "binding_differs",
    "binding_name_of",
    "binding_permanent_id",
    "changed_by_karmada",
    "choose_policy",
    "claim_metadata",
    "claim_of",
    "desired_binding",
    "desired_spec",
    "is_lazy",
    "match_priority",
    "merge_suspension",
    "owned_by",
    "owner_reference",
    "policy_id",
    "policy_title",
    "skipped_namespace",
    "stands_for",
    "with_claim",
]
