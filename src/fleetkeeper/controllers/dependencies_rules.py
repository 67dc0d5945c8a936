"""The dependencies distributor's decisions, as pure functions (Karmada: ``pkg/dependenciesdistributor``).

A workload whose binding says ``propagateDeps: true`` takes its dependencies along —
the ConfigMaps, Secrets, ServiceAccounts and PVCs its pod template names (the
interpreter's GetDependencies). Each dependency gets an **attached** ResourceBinding,
``lower(<name>-<kind>)`` in the same namespace, owned by the dependency object, which
is never scheduled: its ``spec.requiredBy`` lists a snapshot ``{namespace, name,
clusters}`` of every independent binding that needs it, and the binding controller
writes Works for the union of those clusters.

* The independent binding records its dependencies in the
  ``resourcebinding.karmada.io/dependencies`` annotation (JSON, sorted) and holds the
  ``karmada.io/binding-dependencies-distributor`` finalizer until its snapshots are
  removed again.
* An attached binding carries ``resourcebinding.karmada.io/depended-by-<hash>`` =
  the independent binding's permanent id for each independent binding (``<hash>`` is
  FNV-1a over namespace + name, spelt like Work names), so the distributor finds what it
  attached.
* Effective ``conflictResolution`` is ``Overwrite`` when any requiring binding says so;
  effective ``preserveResourcesOnDeletion`` is true when any says so.
* An attached binding left with no snapshot is deleted, unless a policy claims the
  object for itself (then only the snapshot goes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.meta import ObjectMeta, Resource
from fleetkeeper.api.work import BindingSnapshot, ObjectReference, ResourceBinding, ResourceBindingSpec
from fleetkeeper.controllers.bindings import finalizer
from fleetkeeper.controllers.detector_rules import CLAIM_LABELS, binding_permanent_id, owner_reference

Obj = dict[str, Any]


def depended_by_label(namespace: str, name: str) -> str:
    """The label an attached binding carries for the independent binding ``namespace/name``."""
    digits = str(constants.fnv1a_32(f"{namespace}{name}".encode()))
    return constants.DEPENDED_BY_LABEL_PREFIX + constants.safe_encode(digits)


def dependency_key(dep: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (str(dep.get("apiVersion") or ""), str(dep.get("kind") or ""), str(dep.get("namespace") or ""),
            str(dep.get("name") or ""))


def dependencies_annotation(dependencies: Iterable[Mapping[str, Any]]) -> str:
    """The annotation value: the dependencies as compact JSON, sorted."""
    items = sorted((dict(d) for d in dependencies),
                   key=lambda d: (dependency_key(d), json.dumps(d, sort_keys=True)))
    return json.dumps(items, separators=(",", ":"), sort_keys=True)


def parse_dependencies(value: str | None) -> list[Obj]:
    if not value:
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    return [d for d in parsed if isinstance(d, dict)] if isinstance(parsed, list) else []


def snapshot_of(binding: ResourceBinding) -> BindingSnapshot:
    """What an attached binding records about an independent one: its name and clusters."""
    return BindingSnapshot(namespace=binding.namespace, name=binding.name,
                           clusters=[c.model_copy() for c in binding.spec.clusters or ()] or None)


def _snapshot_key(snapshot: BindingSnapshot) -> tuple[str, str]:
    return snapshot.namespace or "", snapshot.name


def merge_required_by(current: Sequence[BindingSnapshot] | None, snapshot: BindingSnapshot | None, *,
                      remove: tuple[str, str] | None = None) -> list[BindingSnapshot]:
    """``current`` with ``snapshot`` set (replacing one of the same binding) or ``remove`` dropped;
    sorted by namespace and name."""
    drop = _snapshot_key(snapshot) if snapshot is not None else remove
    out = [s for s in current or () if _snapshot_key(s) != drop]
    if snapshot is not None:
        out.append(snapshot)
    return sorted(out, key=_snapshot_key)


def effective_policy(requiring: Iterable[ResourceBindingSpec]) -> tuple[str, bool]:
    """(conflictResolution, preserveResourcesOnDeletion) over every requiring binding."""
    specs = list(requiring)
    conflict = "Overwrite" if any(s.conflict_resolution == "Overwrite" for s in specs) else "Abort"
    preserve = any(bool(s.preserve_resources_on_deletion) for s in specs)
    return conflict, preserve


def is_claimed(binding: ResourceBinding) -> bool:
    """Whether a policy claims the binding for itself (then it is not only an attached one)."""
    return any(binding.labels().get(label) for label in CLAIM_LABELS)


def attached_binding(dependency: Resource, required_by: list[BindingSnapshot], labels: Mapping[str, str],
                     conflict: str, preserve: bool, current: ResourceBinding | None) -> ResourceBinding:
    """The attached binding of ``dependency`` with ``required_by`` and the depended-by ``labels``."""
    resource = ObjectReference(api_version=dependency.api_version, kind=dependency.kind,
                               namespace=dependency.namespace, name=dependency.name,
                               uid=dependency.metadata.uid,
                               resource_version=dependency.metadata.resource_version)
    id_label = constants.RB_PERMANENT_ID_LABEL
    if current is None:
        meta = ObjectMeta(
            name=constants.binding_name(dependency.kind, dependency.name), namespace=dependency.namespace,
            labels={**labels, id_label: binding_permanent_id(dependency, namespaced=True)},
            finalizers=[finalizer(True)], owner_references=[owner_reference(dependency)])
        spec = ResourceBindingSpec(resource=resource, required_by=required_by or None,
                                   conflict_resolution=conflict, preserve_resources_on_deletion=preserve)
        return ResourceBinding(metadata=meta, spec=spec)
    kept = {k: v for k, v in current.labels().items() if not k.startswith(constants.DEPENDED_BY_LABEL_PREFIX)}
    update: dict[str, Any] = {"required_by": required_by or None}
    if not is_claimed(current):
        update.update(resource=resource, conflict_resolution=conflict,
                      preserve_resources_on_deletion=preserve)
    meta = current.metadata.model_copy(update={"labels": {**kept, **labels}})
    return current.model_copy(update={"metadata": meta, "spec": current.spec.model_copy(update=update)})


def attached_differs(current: ResourceBinding, desired: ResourceBinding) -> bool:
    if current.metadata != desired.metadata:
        return True
    strip = {"resource_version": None}
    a = current.spec.model_copy(update={"resource": current.spec.resource.model_copy(update=strip)})
    b = desired.spec.model_copy(update={"resource": desired.spec.resource.model_copy(update=strip)})
    return a != b


def depended_by_labels(required_by: Sequence[BindingSnapshot],
                       ids: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """The depended-by labels for the snapshots (``ids``: independent binding → permanent id)."""
    out = {}
    for snapshot in required_by:
        key = _snapshot_key(snapshot)
        if ids.get(key):
            out[depended_by_label(*key)] = ids[key]
    return out


__all__ = [
    "attached_binding",
    "attached_differs",
    "depended_by_label",
    "depended_by_labels",
    "dependencies_annotation",
    "dependency_key",
    "effective_policy",
    "is_claimed",
    "merge_required_by",
    "parse_dependencies",
    "snapshot_of",
]
