"""The binding controller's decisions, as pure functions (Karmada: ``pkg/controllers/binding``).

* **Which clusters a binding has Works in.** *Targets* — where Works are written — are
  ``spec.clusters`` followed by the ``requiredBy`` clusters not already listed. *Existing
  clusters* — where Works may stay — add the clusters of eviction tasks that are not
  ``Directly``: a gracefully evicted cluster keeps its (frozen) Work until the task is
  gone. Works elsewhere are *orphans* and are deleted. While a Work still exists in a
  ``Directly`` task's cluster, no new Works are written (the old copy goes first).
* **Dispatch suspension** per cluster: ``dispatching: true``, or the cluster listed in
  ``dispatchingOnClusters`` — written on every Work as an explicit true/false.
* **The manifest** — the pruned template, its replicas revised for the cluster (a Divided
  Job's ``completions`` split in proportion to the clusters' replicas), then
  Karmada's managed labels (``karmada.io/managed``, binding and Work permanent ids) and
  annotations (template uid and generation, Work name/namespace, binding reference,
  conflict resolution, and the sorted lists of managed annotation and label keys).
* **The Work** — ``karmada-es-<cluster>/<work name>`` with the execution finalizer, the
  binding's permanent-id label, a Work permanent id derived from the binding's id and
  the cluster (stable across re-creation), reference annotations, conflict resolution,
  ``suspendDispatching`` and ``preserveResourcesOnDeletion``. Labels and annotations
  others put on a Work are kept; the spec is ours.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.api.work import (
    BindingSuspension,
    ResourceBindingSpec,
    TargetCluster,
    Work,
    WorkloadTemplate,
    WorkSpec,
)
from fleetkeeper.controllers.bindings import cluster_of_work, derive_id

Obj = dict[str, Any]

#: the binding controller requeues this often while Works of Directly tasks still exist
DIRECTLY_REQUEUE_SECONDS = 5.0


# --- clusters -------------------------------------------------------------------------------------


def target_clusters(spec: ResourceBindingSpec) -> list[TargetCluster]:
    """``spec.clusters`` then every ``requiredBy`` cluster not already present (Karmada's merge)."""
    out = list(spec.clusters or ())
    seen = {t.name for t in out}
    for snapshot in spec.required_by or ():
        for target in snapshot.clusters or ():
            if target.name not in seen:
                seen.add(target.name)
                out.append(target)
    return out


def existing_clusters(spec: ResourceBindingSpec) -> set[str]:
    """Clusters where the binding's Works may exist: targets ∪ non-Directly eviction tasks."""
    names = {t.name for t in target_clusters(spec)}
    names.update(task.from_cluster for task in spec.graceful_eviction_tasks or ()
                 if task.purge_mode != constants.PURGE_DIRECTLY)
    return names


def directly_clusters(spec: ResourceBindingSpec) -> set[str]:
    """Clusters of eviction tasks with ``purgeMode: Directly``."""
    return {task.from_cluster for task in spec.graceful_eviction_tasks or ()
            if task.purge_mode == constants.PURGE_DIRECTLY}


def orphan_works(works: Iterable[Work], existing: set[str]) -> list[Work]:
    """Works (not already deleting) whose cluster is not an existing cluster of the binding."""
    return [w for w in works if w.metadata.deletion_timestamp is None and cluster_of_work(w) not in existing]


def works_in(works: Iterable[Work], clusters: set[str]) -> list[Work]:
    """Works (deleting ones included) in any of ``clusters``."""
    return [w for w in works if cluster_of_work(w) in clusters]


def is_workload(spec: ResourceBindingSpec) -> bool:
    """Karmada's ``IsWorkload``: replicas, replica requirements or components."""
    return spec.replicas > 0 or spec.replica_requirements is not None or bool(spec.components)


def dispatch_suspended(suspension: BindingSuspension | None, cluster: str) -> bool:
    """Whether dispatching to ``cluster`` is suspended."""
    if suspension is None:
        return False
    if suspension.dispatching:
        return True
    on = suspension.dispatching_on_clusters
    return on is not None and cluster in (on.cluster_names or ())


def conflict_resolution(template_annotations: Mapping[str, str], binding_value: str) -> str:
    """The Work's ``work.karmada.io/conflict-resolution``: the template's annotation when valid,
    else ``overwrite`` for a binding that says ``Overwrite``, else ``abort``."""
    value = template_annotations.get(constants.CONFLICT_RESOLUTION_ANNOTATION)
    if value in (constants.CONFLICT_RESOLUTION_OVERWRITE, constants.CONFLICT_RESOLUTION_ABORT):
        return value
    if binding_value == "Overwrite":
        return constants.CONFLICT_RESOLUTION_OVERWRITE
    return constants.CONFLICT_RESOLUTION_ABORT


@functools.lru_cache(maxsize=65536)
def work_permanent_id(binding_permanent_id: str, cluster: str) -> str:
    """The permanent id of a binding's Work in ``cluster`` (the same after re-creation)."""
    return derive_id("Work", binding_permanent_id, cluster)


def divide_completions(completions: int, targets: Sequence[TargetCluster]) -> dict[str, int]:
    """A Job's ``completions`` split over the targets in proportion to their replicas (Karmada's
    ``TakeByWeight``: floors first, then one more each, heaviest first, names breaking ties)."""
    weighted = sorted((t for t in targets if t.replicas > 0), key=lambda t: (-t.replicas, t.name))
    total = sum(t.replicas for t in weighted)
    if total == 0:
        return {}
    shares = {t.name: t.replicas * completions // total for t in weighted}
    remain = completions - sum(shares.values())
    for target in weighted[:remain]:
        shares[target.name] += 1
    return shares


def job_completions(manifest: Obj, spec: ResourceBindingSpec,
                    targets: Sequence[TargetCluster]) -> dict[str, int]:
    """Per-cluster ``spec.completions`` of a Divided ``batch/v1`` Job ({} when not to be split)."""
    placement = spec.placement
    if (manifest.get("apiVersion"), manifest.get("kind")) != ("batch/v1", "Job") or spec.replicas <= 0:
        return {}
    if placement is None or placement.replica_scheduling_type() != constants.REPLICA_SCHEDULING_DIVIDED:
        return {}
    completions = (manifest.get("spec") or {}).get("completions")
    if not isinstance(completions, int) or isinstance(completions, bool):
        return {}
    return divide_completions(completions, targets)


def with_completions(manifest: Obj, completions: int) -> Obj:
    """``manifest`` with ``spec.completions`` set (the input is left alone)."""
    return {**manifest, "spec": {**(manifest.get("spec") or {}), "completions": completions}}


# --- the manifest ---------------------------------------------------------------------------------


def managed_keys(keys: Iterable[str], *, without: str = "") -> str:
    """Karmada's record of managed keys: sorted, comma-separated."""
    return ",".join(sorted(k for k in keys if k != without))


def render_manifest(manifest: Obj, *, id_label: str, binding_permanent_id: str, work_id: str,
                    work_name: str, work_namespace: str, template_uid: str, template_generation: int,
                    references: Mapping[str, str], conflict: str) -> Obj:
    """The manifest of a Work: ``manifest`` (pruned and revised) with Karmada's managed metadata."""
    out = dict(manifest)
    meta = dict(out.get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    labels[id_label] = binding_permanent_id
    labels[constants.WORK_PERMANENT_ID_LABEL] = work_id
    labels[constants.MANAGED_BY_KARMADA_LABEL] = constants.MANAGED_BY_KARMADA_LABEL_VALUE
    annotations = dict(meta.get("annotations") or {})
    if template_generation > 0:
        annotations[constants.RESOURCE_TEMPLATE_GENERATION_ANNOTATION] = str(template_generation)
    annotations.update(references)
    annotations[constants.RESOURCE_TEMPLATE_UID_ANNOTATION] = template_uid
    annotations[constants.WORK_NAME_ANNOTATION] = work_name
    annotations[constants.WORK_NAMESPACE_ANNOTATION] = work_namespace
    annotations[constants.CONFLICT_RESOLUTION_ANNOTATION] = conflict
    annotations[constants.MANAGED_ANNOTATIONS_ANNOTATION] = managed_keys(
        annotations, without=constants.MANAGED_ANNOTATIONS_ANNOTATION)
    annotations[constants.MANAGED_LABELS_ANNOTATION] = managed_keys(labels)
    meta["labels"] = labels
    meta["annotations"] = annotations
    out["metadata"] = meta
    return out


# --- the Work -------------------------------------------------------------------------------------


#: the Work annotations recording the override policies applied to its manifest
APPLIED_OVERRIDES = (constants.APPLIED_CLUSTER_OVERRIDES_ANNOTATION, constants.APPLIED_OVERRIDES_ANNOTATION)


@dataclass(frozen=True, slots=True)
class WorkPlan:
    """What the Work of one target cluster is made of: its name, the rendered manifest, the
    binding's and its own permanent ids, the references back to the binding, the conflict
    resolution, the dispatch flags, and the applied-overrides annotations (empty when no
    override applied)."""

    name: str
    cluster: str
    manifest: Obj
    id_label: str
    binding_permanent_id: str
    work_id: str
    references: Mapping[str, str]
    conflict: str
    suspend: bool
    preserve: bool
    overrides: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The Work's ``namespace/name`` (its namespace is the cluster's execution space)."""
        return f"{constants.execution_namespace(self.cluster)}/{self.name}"


class WorkWrite(StrEnum):
    """What writing a planned Work did."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


def desired_work(plan: WorkPlan, current: Work | None) -> Work:
    """The Work ``plan`` describes; ``current``'s foreign labels, annotations and finalizers are
    kept (the applied-overrides annotations are the plan's, present only when something applied)."""
    labels = {plan.id_label: plan.binding_permanent_id, constants.WORK_PERMANENT_ID_LABEL: plan.work_id}
    annotations = {**plan.references, constants.CONFLICT_RESOLUTION_ANNOTATION: plan.conflict,
                   **plan.overrides}
    spec = WorkSpec(workload=WorkloadTemplate(manifests=[plan.manifest]), suspend_dispatching=plan.suspend,
                    preserve_resources_on_deletion=plan.preserve)
    if current is None:
        meta = ObjectMeta(name=plan.name, namespace=constants.execution_namespace(plan.cluster),
                          labels=labels, annotations=annotations,
                          finalizers=[constants.EXECUTION_CONTROLLER_FINALIZER])
        return Work(metadata=meta, spec=spec)
    finalizers = list(current.metadata.finalizers or ())
    if constants.EXECUTION_CONTROLLER_FINALIZER not in finalizers:
        finalizers.append(constants.EXECUTION_CONTROLLER_FINALIZER)
    kept = {k: v for k, v in current.annotations().items() if k not in APPLIED_OVERRIDES}
    meta = current.metadata.model_copy(update={
        "labels": {**current.labels(), **labels}, "annotations": {**kept, **annotations},
        "finalizers": finalizers})
    return current.model_copy(update={"metadata": meta, "spec": spec})


def work_differs(current: Work, desired: Work) -> bool:
    """Whether ``desired`` (built from ``current`` by :func:`desired_work`) needs a write."""
    return current.metadata != desired.metadata or current.spec != desired.spec


def created_message(clusters: Sequence[str], work_name: str) -> str:
    return f"Work {work_name} created in {', '.join(clusters)}"


def deleted_message(works: Sequence[Work], why: str) -> str:
    names = ", ".join(f"{w.namespace}/{w.name}" for w in works)
    return f"Work {names} deleted ({why})"


__all__ = [
    "APPLIED_OVERRIDES", "DIRECTLY_REQUEUE_SECONDS", "WorkPlan", "WorkWrite", "conflict_resolution",
    "created_message", "deleted_message", "desired_work",
    "directly_clusters", "dispatch_suspended", "divide_completions", "existing_clusters", "is_workload",
    "job_completions", "managed_keys", "orphan_works", "render_manifest", "target_clusters",
    "with_completions", "work_differs", "work_permanent_id", "works_in",
]
