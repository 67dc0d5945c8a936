"""Admission: the one defaulting + validation step every write path runs.

:func:`admit` is what Karmada's mutating and validating webhooks, its CRD schemas'
defaults and its cluster API strategy do, as one pure function over typed objects:

* schema-level rules (types, enums, required fields, CRD defaults) already hold because
  the object was decoded into its model;
* kind rules run here: defaulting first, then validation, which reports *every*
  problem at once as :class:`fleetkeeper.errors.Invalid` whose causes name the field
  path and the rule broken (``spec.failover.application.gracePeriodSeconds: …``);
* ``metadata`` is checked for every kind (name format, namespace presence, label and
  annotation keys, finalizer names); Unstructured kinds (templates) get only these checks.
  A finalizer is a qualified name, and on Kubernetes' own kinds either one of its standard
  finalizers (``kubernetes``, ``orphan``, ``foregroundDeletion``) or domain-qualified
  (``example.com/cleanup``), as kube-apiserver's core validation requires; on Karmada's kinds
  and custom resources a bare name is allowed (Kubernetes only warns about it there).

The input is never modified: when defaulting changes something the result is a copy.
Checks that need other objects (RIC conflicts, Lua compilation, policy permanent ids)
belong to the callers that can see them, not here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar

from fleetkeeper.api import admission_builtin, admission_crd, constants, validation
from fleetkeeper.api.admission_cluster import default_cluster, migrate_zone, validate_cluster
from fleetkeeper.api.admission_policy import (
    default_propagation,
    default_selector_namespaces,
    validate_override,
    validate_propagation,
    validate_taint_policy,
)
from fleetkeeper.api.apps import WorkloadRebalancer
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.config import ResourceInterpreterCustomization
from fleetkeeper.api.core import Event, Namespace
from fleetkeeper.api.meta import ObjectMeta, Resource, Unstructured
from fleetkeeper.api.override import ClusterOverridePolicy, OverridePolicy
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.api.validation import FieldErrors

Operation = Literal["CREATE", "UPDATE"]
R = TypeVar("R", bound=Resource)
#: (new copy, old or None, creating, now, errors) → None; defaults in place, then validates
_Rule = Callable[[Any, Any, bool, datetime, FieldErrors], None]


def admit(new: R, old: R | None, *, operation: Operation, now: datetime) -> R:
    """Default and validate ``new`` for a write; return the object to store.

    Raises ``errors.Invalid`` naming every offending field. ``old`` is the stored object
    on UPDATE (``None`` on CREATE); ``now`` stamps defaults such as taint ``timeAdded``.
    """
    rule = _RULES.get(type(new))
    obj = new.deep_copy() if rule is not None or _needs_meta_fix(new) else new
    if not type(new).NAMESPACED and obj.metadata.namespace:
        obj.metadata.namespace = None
    errs = FieldErrors()
    _validate_metadata(obj, errs)
    if rule is not None:
        rule(obj, old, operation == "CREATE", now, errs)
    errs.raise_if_any(kind=type(new).KIND or new.kind, name=obj.name, group=obj.group)
    return obj


def admit_metadata(obj: Resource) -> None:
    """Raise ``errors.Invalid`` when ``obj``'s metadata breaks a rule :func:`admit` checks for every
    kind — for a caller that already knows the rest of the object passes its kind's rules."""
    if _needs_meta_fix(obj):
        obj = obj.deep_copy()
        obj.metadata.namespace = None
    errs = FieldErrors()
    _validate_metadata(obj, errs)
    errs.raise_if_any(kind=type(obj).KIND or obj.kind, name=obj.name, group=obj.group)


def reads_old(model: type[Resource]) -> bool:
    """Whether :func:`admit` looks at ``old`` for this kind (a caller may skip decoding it)."""
    return model in _READS_OLD


def _needs_meta_fix(obj: Resource) -> bool:
    return not type(obj).NAMESPACED and bool(obj.metadata.namespace)


# --- metadata ------------------------------------------------------------------------------------


def _name_problems(model: type[Resource], name: str) -> list[str]:
    """Namespaces: DNS label; our typed kinds and most built-in workload kinds: DNS subdomain
    (Services: DNS-1035 label, see :mod:`.admission_builtin`); other templates and Events (named
    after objects whose names may hold ``:``): any name usable in a URL path."""
    if model is Namespace:
        return validation.dns1123_label(name)
    if issubclass(model, Unstructured) and BUILTIN.get(model.KIND) is model:
        builtin = admission_builtin.name_problems(model.KIND, name)
        if builtin is not None:
            return builtin
    if issubclass(model, Unstructured) or model is Event:
        return validation.path_segment_name(name)
    return validation.dns1123_subdomain(name)


def _validate_metadata(obj: Resource, errs: FieldErrors) -> None:
    meta: ObjectMeta = obj.metadata
    model = type(obj)
    if not meta.name:
        if not meta.generate_name:
            errs.required("metadata.name", "name or generateName is required")
    elif model is not Cluster:  # Cluster names have their own rule
        errs.invalid_all("metadata.name", meta.name, _name_problems(model, meta.name))
    if model.NAMESPACED and not meta.namespace:
        errs.required("metadata.namespace")
    elif meta.namespace:
        errs.invalid_all("metadata.namespace", meta.namespace, validation.dns1123_label(meta.namespace))
    for key, value in (meta.labels or {}).items():
        bad_key, bad_value = _key_problems(key), _value_problems(value)
        if bad_key or bad_value:
            errs.invalid_all(f"metadata.labels[{key}]", key, bad_key)
            errs.invalid_all(f"metadata.labels[{key}]", value, bad_value)
    for key in meta.annotations or {}:
        if bad_key := _key_problems(key):
            errs.invalid_all(f"metadata.annotations[{key}]", key, bad_key)
    if meta.finalizers:
        check_finalizers(meta.finalizers, errs, kubernetes_kind=_is_kubernetes_kind(model))


#: Kubernetes' standard finalizers, the only ones its own kinds accept without a domain
STANDARD_FINALIZERS = frozenset(
    {constants.NAMESPACE_FINALIZER, "orphan", constants.FOREGROUND_DELETION_FINALIZER})


def _is_kubernetes_kind(model: type[Resource]) -> bool:
    """Whether ``model`` is one of Kubernetes' built-in kinds (not Karmada's, not a custom resource)."""
    return model in (Namespace, Event) or BUILTIN.get(model.KIND) is model


def check_finalizers(finalizers: Sequence[str], errs: FieldErrors, *, kubernetes_kind: bool) -> None:
    """``metadata.finalizers`` as kube-apiserver checks them: qualified names, not both ``orphan``
    and ``foregroundDeletion``, and on Kubernetes' own kinds standard or domain-qualified."""
    for index, name in enumerate(finalizers):
        path = f"metadata.finalizers[{index}]"
        problems = _key_problems(name)
        errs.invalid_all(path, name, problems)
        if kubernetes_kind and not problems and "/" not in name and name not in STANDARD_FINALIZERS:
            errs.invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified")
    if "orphan" in finalizers and constants.FOREGROUND_DELETION_FINALIZER in finalizers:
        errs.invalid("metadata.finalizers", list(finalizers),
                     "finalizer orphan and foregroundDeletion cannot be both set")


# every write checks every label and annotation, and the same few keys and values recur
@functools.lru_cache(maxsize=4096)
def _key_problems(key: str) -> tuple[str, ...]:
    return tuple(validation.qualified_name(key))


@functools.lru_cache(maxsize=4096)
def _value_problems(value: str) -> tuple[str, ...]:
    return tuple(validation.label_value(value))


# --- per-kind rules ------------------------------------------------------------------------------


def _cluster(obj: Cluster, old: Cluster | None, creating: bool, now: datetime, errs: FieldErrors) -> None:
    default_cluster(obj, creating=creating, now=now)
    validate_cluster(obj, errs)
    migrate_zone(obj.spec)


def _pp(obj: PropagationPolicy, old: PropagationPolicy | None, creating: bool, now: datetime,
        errs: FieldErrors) -> None:
    default_propagation(obj.spec, namespace=obj.namespace)
    validate_propagation(obj.spec, old.spec if old else None, namespace=obj.namespace, errs=errs)


def _cpp(obj: ClusterPropagationPolicy, old: ClusterPropagationPolicy | None, creating: bool, now: datetime,
         errs: FieldErrors) -> None:
    default_propagation(obj.spec, namespace=None)
    validate_propagation(obj.spec, old.spec if old else None, namespace=None, errs=errs)


def _op(obj: OverridePolicy, old: OverridePolicy | None, creating: bool, now: datetime,
        errs: FieldErrors) -> None:
    default_selector_namespaces(obj.spec.resource_selectors, obj.namespace)
    validate_override(obj.spec, namespace=obj.namespace, errs=errs)


def _cop(obj: ClusterOverridePolicy, old: ClusterOverridePolicy | None, creating: bool, now: datetime,
         errs: FieldErrors) -> None:
    validate_override(obj.spec, namespace=None, errs=errs)


def _ctp(obj: ClusterTaintPolicy, old: ClusterTaintPolicy | None, creating: bool, now: datetime,
         errs: FieldErrors) -> None:
    validate_taint_policy(obj.spec, errs)


def _ric(obj: ResourceInterpreterCustomization, old: ResourceInterpreterCustomization | None,
         creating: bool, now: datetime, errs: FieldErrors) -> None:
    if not obj.spec.target.api_version:
        errs.required("spec.target.apiVersion")
    if not obj.spec.target.kind:
        errs.required("spec.target.kind")


def _secret(obj: Unstructured, old: Unstructured | None, creating: bool, now: datetime,
            errs: FieldErrors) -> None:
    """A Secret without a type is ``Opaque``, as Kubernetes defaults it."""
    extra = obj.model_extra  # the fields of an unstructured object beside its metadata
    if extra is not None and not extra.get("type"):
        extra["type"] = "Opaque"


def check_namespace_finalizers(finalizers: Iterable[str], errs: FieldErrors) -> None:
    """Each of a Namespace's ``spec.finalizers`` is a qualified name (on create and ``/finalize``)."""
    for index, name in enumerate(finalizers):
        errs.invalid_all(f"spec.finalizers[{index}]", name, validation.qualified_name(str(name)))


def _namespace(obj: Namespace, old: Namespace | None, creating: bool, now: datetime,
               errs: FieldErrors) -> None:
    """A new Namespace is ``Active`` and held by the ``kubernetes`` finalizer (after any
    finalizers it was created with) until it is emptied, as Kubernetes creates it. Every
    Namespace carries the immutable label ``kubernetes.io/metadata.name: <its name>`` that
    selectors (NetworkPolicies, policies' namespace selectors) rely on."""
    if obj.metadata.name:
        own = {constants.LABEL_NAMESPACE_NAME: obj.metadata.name}
        obj.metadata.labels = {**(obj.metadata.labels or {}), **own}
    if creating:
        given = list(obj.spec.finalizers or ())
        check_namespace_finalizers(given, errs)
        if constants.NAMESPACE_FINALIZER not in given:
            given.append(constants.NAMESPACE_FINALIZER)
        obj.spec.finalizers = given
        obj.status.phase = "Active"


def _rebalancer(obj: WorkloadRebalancer, old: WorkloadRebalancer | None, creating: bool, now: datetime,
                errs: FieldErrors) -> None:
    """At least one workload, each naming its apiVersion, kind and name; a TTL is not negative."""
    if not obj.spec.workloads:
        errs.required("spec.workloads", "must list at least one workload")
    for index, workload in enumerate(obj.spec.workloads):
        for field in ("api_version", "kind", "name"):
            if not getattr(workload, field):
                camel = "apiVersion" if field == "api_version" else field
                errs.required(f"spec.workloads[{index}].{camel}")
    ttl = obj.spec.ttl_seconds_after_finished
    if ttl is not None and ttl < 0:
        errs.invalid("spec.ttlSecondsAfterFinished", ttl, "must be greater than or equal to 0")


def _builtin(obj: Unstructured, old: Unstructured | None, creating: bool, now: datetime,
             errs: FieldErrors) -> None:
    admission_builtin.admit_builtin(obj, errs)


def _crd(obj: Unstructured, old: Unstructured | None, creating: bool, now: datetime,
         errs: FieldErrors) -> None:
    admission_crd.admit_crd(obj, old, creating, errs)


_RULES: dict[type[Resource], _Rule] = {
    **{BUILTIN[kind]: _builtin for kind in sorted(admission_builtin.KINDS)},
    BUILTIN["Secret"]: _secret,
    BUILTIN["CustomResourceDefinition"]: _crd,
    Namespace: _namespace,
    Cluster: _cluster,
    PropagationPolicy: _pp,
    ClusterPropagationPolicy: _cpp,
    OverridePolicy: _op,
    ClusterOverridePolicy: _cop,
    ClusterTaintPolicy: _ctp,
    ResourceInterpreterCustomization: _ric,
    WorkloadRebalancer: _rebalancer,
}

#: the kinds whose rules compare the update with the stored object (immutable fields)
_READS_OLD: frozenset[type[Resource]] = frozenset({
    PropagationPolicy, ClusterPropagationPolicy, BUILTIN["CustomResourceDefinition"]})

__all__ = [
    "STANDARD_FINALIZERS", "Operation", "admit", "admit_metadata", "check_finalizers",
    "check_namespace_finalizers", "reads_old",
]
