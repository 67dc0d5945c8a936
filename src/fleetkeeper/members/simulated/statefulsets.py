"""StatefulSet controller.

Pods are named by ordinal (``web-0``, ``web-1`` …). With the default
``podManagementPolicy: OrderedReady`` a pod is created only when every lower ordinal is
Ready — so startup takes one ``pod_startup`` per replica, and a crash-looping ``web-0``
holds the rest back, as in Kubernetes; ``Parallel`` creates them all at once. Scale down
removes the highest ordinals.

Revisions are ``<name>-<template hash>``. A template change replaces every pod of the
old revision at once (then OrderedReady recreates them in order). ``currentRevision``
becomes the ``updateRevision`` when every replica is updated and ready, and
``currentReplicas`` counts pods of the current revision.
"""

from __future__ import annotations

from fleetkeeper.members.simulated.controllers import (
    Runtime,
    omit_zero,
    pod_labels,
    spec_int,
    template_hash,
    write_status,
)
from fleetkeeper.members.simulated.events import involved
from fleetkeeper.members.simulated.objects import GroupKind, Obj
from fleetkeeper.members.simulated.pods import Pod

STATEFULSET = GroupKind("apps", "StatefulSet")
REVISION_LABEL = "controller-revision-hash"


def reconcile_statefulset(runtime: Runtime, sts: Obj) -> None:
    spec = sts.get("spec") or {}
    meta = sts["metadata"]
    name = meta["name"]
    replicas = spec_int(spec, "replicas", 1)
    template = spec.get("template") or {}
    update_revision = f"{name}-{template_hash(template)}"
    ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"

    by_ordinal: dict[int, Pod] = {}
    for pod in runtime.pods.owned_by(meta["uid"]):
        ordinal = _ordinal(name, pod.name)
        if ordinal is None or ordinal >= replicas or pod.revision != update_revision:
            runtime.delete_pod(pod)
            _pod_event(runtime, sts, "delete", pod.name)
        else:
            by_ordinal[ordinal] = pod
    for ordinal in range(replicas):
        if ordinal not in by_ordinal:
            pod_name = f"{name}-{ordinal}"
            labels = pod_labels(template, {REVISION_LABEL: update_revision,
                                           "statefulset.kubernetes.io/pod-name": pod_name,
                                           "apps.kubernetes.io/pod-index": str(ordinal)})
            by_ordinal[ordinal] = runtime.create_pod(sts, template, name=pod_name, revision=update_revision,
                                                     labels=labels)
            _pod_event(runtime, sts, "create", pod_name)
        if ordered and not by_ordinal[ordinal].ready:
            break
    _write_status(runtime, sts, list(by_ordinal.values()), replicas, update_revision)


def _pod_event(runtime: Runtime, sts: Obj, verb: str, pod: str) -> None:
    """``SuccessfulCreate`` / ``SuccessfulDelete`` in the StatefulSet controller's words."""
    runtime.events.record(involved(sts), f"Successful{verb.title()}",
                          f"{verb} Pod {pod} in StatefulSet {sts['metadata']['name']} successful",
                          component="statefulset-controller")


def _ordinal(name: str, pod_name: str) -> int | None:
    prefix, _, digits = pod_name.rpartition("-")
    return int(digits) if prefix == name and digits.isdigit() else None


def _write_status(runtime: Runtime, sts: Obj, pods: list[Pod], replicas: int, update_revision: str) -> None:
    old = sts.get("status") or {}
    current_revision = old.get("currentRevision") or update_revision
    ready = sum(1 for p in pods if p.ready)
    updated = sum(1 for p in pods if p.revision == update_revision)
    if updated == len(pods) == replicas and ready == replicas:
        current_revision = update_revision
    status = {
        "observedGeneration": sts["metadata"]["generation"], "replicas": len(pods), "readyReplicas": ready,
        "currentReplicas": sum(1 for p in pods if p.revision == current_revision), "updatedReplicas": updated,
        "currentRevision": current_revision, "updateRevision": update_revision, "collisionCount": 0,
        "availableReplicas": ready,
    }
    write_status(runtime, sts, omit_zero(status, "readyReplicas", "currentReplicas", "updatedReplicas"))


__all__ = ["REVISION_LABEL", "STATEFULSET", "reconcile_statefulset"]
