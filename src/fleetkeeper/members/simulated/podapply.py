"""Server-side apply of a bare Pod.

Pods live as records (``pods.py``), not as stored dicts, so applying one goes through
the same :func:`~fleetkeeper.api.serverapply.apply` over the pod's
*applied* form (its spec exactly as applied, no status, no defaults), and the result is
written back into the record. A new pod is placed like any other. A changed spec
starts the pod over — placed again, Ready after ``pod_startup`` (Kubernetes would refuse
most pod spec changes; the simulation accepts them, as if the pod had been replaced).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleetkeeper.api import serverapply
from fleetkeeper.members.simulated.objects import Obj, apply_request, body_changed, check_preconditions
from fleetkeeper.members.simulated.pods import Pod, pod_requests, render

if TYPE_CHECKING:
    from fleetkeeper.members.simulated.engine import Engine


def applied_form(pod: Pod) -> Obj:
    """The pod as its appliers wrote it: metadata they own, the spec as applied."""
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid,
                            "resourceVersion": pod.resource_version, "creationTimestamp": pod.created}
    if pod.labels:
        meta["labels"] = pod.labels
    if pod.annotations:
        meta["annotations"] = pod.annotations
    if pod.owner_refs:
        meta["ownerReferences"] = pod.owner_refs
    if pod.managed_fields:
        meta["managedFields"] = pod.managed_fields
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod.spec}


def apply_pod(engine: Engine, manifest: Obj, *, manager: str, force: bool) -> Obj:
    """Create or update a bare pod; returns the rendered live pod."""
    meta = manifest["metadata"]
    pod = engine.pods.get(meta["namespace"], meta["name"])
    live = None if pod is None else applied_form(pod)
    check_preconditions(live, manifest)
    result = serverapply.apply(live, manifest, apply_request(manifest, manager=manager, force=force,
                                                             now=engine.now_seconds()))
    if pod is not None and serverapply.unchanged(live, result):
        return render(pod)
    engine.check(result)
    new_meta = result["metadata"]
    labels: dict[str, str] = dict(new_meta.get("labels") or {})
    annotations: dict[str, str] = dict(new_meta.get("annotations") or {})
    owner_refs: list[dict[str, Any]] = list(new_meta.get("ownerReferences") or [])
    spec: dict[str, Any] = result.get("spec") or {}
    if pod is None:
        pod = engine.new_pod(meta["namespace"], meta["name"], spec, labels=labels, annotations=annotations,
                             owner_refs=owner_refs)
        pod.managed_fields = new_meta.get("managedFields") or []
        engine.admit(pod)
        return render(pod)
    old_labels = pod.labels
    pod.labels, pod.annotations, pod.owner_refs = labels, annotations, owner_refs
    pod.managed_fields = new_meta.get("managedFields") or []
    if body_changed(live, result):
        engine.scheduler.release(pod)
        pod.spec, pod.requests = spec, pod_requests(spec)
        engine.lifecycle.reschedule(pod)
        engine.capacity_freed()
    engine.pod_changed(pod, old_labels=old_labels)
    return render(pod)


__all__ = ["applied_form", "apply_pod"]
