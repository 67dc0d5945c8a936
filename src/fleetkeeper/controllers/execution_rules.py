"""The execution controller's decisions, as pure functions (Karmada: ``pkg/controllers/execution``).

* **Conditions.** ``Dispatching`` is True (``Dispatching``) unless the Work says
  ``suspendDispatching`` (False, ``SuspendDispatching``); ``Applied`` is True
  (``AppliedSuccessful``) or False (``AppliedFailed``, "Failed to apply all manifests
  (<ok>/<total>): <errors>").
* **Cleanup of a deleted Work** needs the member: with the cluster Ready the member
  object is deleted (or, with ``preserveResourcesOnDeletion``, stripped of Karmada's
  labels and annotations); a cluster that is not Ready *waits* — the Work keeps its
  finalizer until the cluster is back, so the member-side cleanup is never lost. Only a
  cluster that is itself being deleted and is not Ready is *skipped*: there is nothing
  left to clean.
* **Apply.** An existing member object that Karmada does not manage is only taken over
  when the manifest's conflict resolution says ``overwrite``. An apply is skipped when
  the member object already holds the manifest and the manifest is the one last
  applied (a changed manifest is always applied: server-side apply then also removes
  what the new manifest no longer sets).
* **A missing namespace.** A member refuses an object of a namespace it does not have
  (``namespaces "prod" not found``), as any Kubernetes API does; the Work then *waits*
  for the namespace — the namespace sync propagates it — instead of backing off.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import is_condition_true
from fleetkeeper.api.meta import Condition
from fleetkeeper.members.interface import ObjectRef

Obj = dict[str, Any]

#: labels removed from a member object whose Work is deleted with preserveResourcesOnDeletion
STRIPPED_LABELS = (
    constants.PP_PERMANENT_ID_LABEL, constants.CPP_PERMANENT_ID_LABEL, constants.RB_PERMANENT_ID_LABEL,
    constants.CRB_PERMANENT_ID_LABEL, constants.WORK_PERMANENT_ID_LABEL, constants.MANAGED_BY_KARMADA_LABEL,
)
#: annotations removed likewise
STRIPPED_ANNOTATIONS = (
    constants.PP_NAMESPACE_ANNOTATION, constants.PP_NAME_ANNOTATION, constants.CPP_NAME_ANNOTATION,
    constants.MANAGED_ANNOTATIONS_ANNOTATION, constants.MANAGED_LABELS_ANNOTATION,
    constants.RB_NAMESPACE_ANNOTATION, constants.RB_NAME_ANNOTATION, constants.CRB_NAME_ANNOTATION,
    constants.RESOURCE_TEMPLATE_UID_ANNOTATION, constants.RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
    constants.WORK_NAME_ANNOTATION, constants.WORK_NAMESPACE_ANNOTATION,
)


def dispatching_condition(suspended: bool) -> Condition:
    if suspended:
        return Condition(type=constants.COND_WORK_DISPATCHING, status="False",
                         reason=constants.REASON_WORK_SUSPEND_DISPATCHING,
                         message=constants.MSG_WORK_SUSPEND_DISPATCHING)
    return Condition(type=constants.COND_WORK_DISPATCHING, status="True",
                     reason=constants.REASON_WORK_DISPATCHING, message=constants.MSG_WORK_DISPATCHING)


def applied_condition(ok: int, total: int, problems: list[str]) -> Condition:
    if not problems:
        return Condition(type=constants.COND_WORK_APPLIED, status="True",
                         reason=constants.REASON_WORK_APPLIED_SUCCESSFUL,
                         message=constants.MSG_WORK_APPLIED_SUCCESSFUL)
    return Condition(type=constants.COND_WORK_APPLIED, status="False",
                     reason=constants.REASON_WORK_APPLIED_FAILED,
                     message=f"Failed to apply all manifests ({ok}/{total}): {'; '.join(problems)}")


def missing_namespace(error: Exception, manifest: Obj) -> str | None:
    """The namespace ``error`` says the member lacks for ``manifest``'s object, or None."""
    namespace = (manifest.get("metadata") or {}).get("namespace")
    if (isinstance(error, errors.NotFound) and namespace and error.kind == "namespaces"
            and error.name == namespace):
        return str(namespace)
    return None


def cluster_ready(cluster: Cluster) -> bool:
    return is_condition_true(cluster.status.conditions, constants.COND_READY)


class Cleanup(enum.Enum):
    """What to do with the member object of a deleted Work."""

    DELETE = "delete"
    PRESERVE = "preserve"
    WAIT = "wait"
    SKIP = "skip"


def cleanup_action(*, preserve: bool, ready: bool, cluster_deleting: bool) -> Cleanup:
    """Delete or strip when the cluster is Ready; wait for it otherwise (skip a dying cluster)."""
    if not ready:
        return Cleanup.SKIP if cluster_deleting else Cleanup.WAIT
    return Cleanup.PRESERVE if preserve else Cleanup.DELETE


def ref_of(manifest: Mapping[str, Any]) -> ObjectRef:
    meta = manifest.get("metadata") or {}
    return ObjectRef(str(manifest.get("apiVersion") or ""), str(manifest.get("kind") or ""),
                     str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def is_managed(obj: Mapping[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(constants.MANAGED_BY_KARMADA_LABEL) == constants.MANAGED_BY_KARMADA_LABEL_VALUE)


def stripped(manifest: Obj) -> Obj:
    """``manifest`` without Karmada's claim and management labels and annotations."""
    meta = dict(manifest.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in STRIPPED_LABELS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in STRIPPED_ANNOTATIONS}
    meta["labels"] = labels
    meta["annotations"] = annotations
    return {**manifest, "metadata": meta}


def conflict_problem(observed: Obj | None, manifest: Obj) -> str | None:
    """Why the member object may not be taken over, or None."""
    if observed is None or is_managed(observed):
        return None
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    if annotations.get(constants.CONFLICT_RESOLUTION_ANNOTATION) == constants.CONFLICT_RESOLUTION_OVERWRITE:
        return None
    ref = ref_of(manifest)
    where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
    return (f"{ref.kind} {where} already exists in the member cluster and is not managed by Karmada; "
            "Karmada will not manage this resource (set conflictResolution: Overwrite to take it over)")


def contains(observed: Any, desired: Any) -> bool:
    """Whether ``observed`` holds every field ``desired`` sets (lists item by item)."""
    if isinstance(desired, dict):
        return isinstance(observed, dict) and all(
            contains(observed.get(key), value) for key, value in desired.items())
    if isinstance(desired, list):
        return (isinstance(observed, list) and len(observed) == len(desired)
                and all(contains(o, d) for o, d in zip(observed, desired, strict=True)))
    return bool(observed == desired)


def needs_apply(desired: Obj, observed: Obj | None, last_applied: Obj | None) -> bool:
    """Apply unless the member already holds ``desired`` and ``desired`` is what we last applied."""
    if observed is None or last_applied is None or last_applied != desired:
        return True
    return not contains(observed, desired)


__all__ = [
    "STRIPPED_ANNOTATIONS", "STRIPPED_LABELS", "Cleanup", "applied_condition", "cleanup_action",
    "cluster_ready", "conflict_problem", "contains", "dispatching_condition", "is_managed",
    "missing_namespace", "needs_apply", "ref_of", "stripped",
]
