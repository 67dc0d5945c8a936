"""Pods: compact records, rendered as Kubernetes objects only when someone reads them.

Pods outnumber every other object of a cluster, and they change state most often
(scheduled, started, ready, crashed, finished). A pod is therefore a slotted record — a
few scalars plus references to its template, shared with its siblings — and the
``v1.Pod`` dict a reader sees (``get``, ``list``, ``watch``) is built on demand by
:func:`render`. Pods are indexed by namespace/name and by owner uid, so a controller
finds its pods without scanning.

Lifecycle (driven by the cluster; times from the injected clock)::

    Pending (no node) ──bind──▶ Pending (ContainerCreating) ──pod_startup s──▶ Running, Ready
                                                  │ crashed workload   ╰─ Job pod: run time ─▶ Succeeded
                                                  ▼
                                   Running, CrashLoopBackOff (never Ready, restartCount grows)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fleetkeeper.members.simulated import quantity
from fleetkeeper.members.simulated.network import format_ip
from fleetkeeper.members.simulated.objects import Obj, ObjectKey

FINISHED = ("Succeeded", "Failed")


@dataclass(slots=True, eq=False)
class Pod:
    """One pod's state (see the module notes)."""

    namespace: str
    name: str
    uid: str
    #: creation order across the cluster (tie-breaker; "newest first" on scale down)
    seq: int
    created: str
    labels: dict[str, str]
    spec: dict[str, Any]
    requests: quantity.MilliList
    priority: int
    #: whether it may preempt lower-priority pods (``preemptionPolicy`` is not ``Never``)
    preempts: bool = True
    #: every ownerReference; ``owner_uid`` is the controller's
    owner_refs: list[dict[str, Any]] = field(default_factory=list)
    owner_uid: str | None = None
    #: the top-level workload (a Deployment for pods of its ReplicaSets), for crash injection
    workload: ObjectKey | None = None
    #: template revision (``pod-template-hash``, ``controller-revision-hash``)
    revision: str = ""
    #: seconds the pod runs before it succeeds (Job pods); None runs forever
    run_for: float | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    managed_fields: list[dict[str, Any]] = field(default_factory=list)
    resource_version: str = ""
    node: str | None = None
    #: its address and its node's (integers, see ``network.py``); 0 until bound
    ip: int = 0
    host_ip: int = 0
    #: a node the pod must run on (DaemonSet pods)
    pinned_node: str | None = None
    phase: str = "Pending"
    unschedulable: str = ""
    scheduled_at: str = ""
    started_at: str = ""
    ready: bool = False
    ready_changed_at: str = ""
    crashing: bool = False
    restarts: int = 0
    finished_at: str = ""
    timer: asyncio.TimerHandle | None = None

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED

    @property
    def key(self) -> ObjectKey:
        return ObjectKey("", "Pod", self.namespace, self.name)

    def cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def pod_requests(spec: dict[str, Any]) -> quantity.MilliList:
    """Effective requests: max(sum of containers, largest init container) plus one ``pods``.

    A container that sets only limits requests its limits, as Kubernetes defaults it.
    """
    def of(container: dict[str, Any]) -> quantity.MilliList:
        resources = container.get("resources") or {}
        return quantity.milli_list({**(resources.get("limits") or {}), **(resources.get("requests") or {})})

    total = quantity.sum_lists(of(c) for c in spec.get("containers") or [])
    for init in spec.get("initContainers") or []:
        for name, value in of(init).items():
            total[name] = max(total.get(name, 0), value)
    total["pods"] = 1000
    return total


class PodTable:
    """Every pod of a cluster, by namespace/name and by owner uid."""

    def __init__(self) -> None:
        self._by_name: dict[str, dict[str, Pod]] = {}
        self._by_owner: dict[str, dict[str, Pod]] = {}

    def __len__(self) -> int:
        return sum(len(pods) for pods in self._by_name.values())

    def get(self, namespace: str, name: str) -> Pod | None:
        return self._by_name.get(namespace, {}).get(name)

    def add(self, pod: Pod) -> None:
        self._by_name.setdefault(pod.namespace, {})[pod.name] = pod
        if pod.owner_uid:
            self._by_owner.setdefault(pod.owner_uid, {})[f"{pod.namespace}/{pod.name}"] = pod

    def remove(self, pod: Pod) -> None:
        space = self._by_name.get(pod.namespace, {})
        if space.pop(pod.name, None) is not None and not space:
            del self._by_name[pod.namespace]
        if pod.owner_uid:
            owned = self._by_owner.get(pod.owner_uid, {})
            owned.pop(f"{pod.namespace}/{pod.name}", None)
            if not owned:
                self._by_owner.pop(pod.owner_uid, None)

    def owned_by(self, uid: str) -> list[Pod]:
        """The pods a controller owns, oldest first."""
        return list(self._by_owner.get(uid, {}).values())

    def items(self, namespace: str | None = None) -> Iterator[Pod]:
        """Pods in (namespace, name) order."""
        spaces = [namespace] if namespace is not None else sorted(self._by_name)
        for ns in spaces:
            pods = self._by_name.get(ns, {})
            for name in sorted(pods):
                yield pods[name]


# --------------------------------------------------------------------------- rendering
def render(pod: Pod) -> Obj:
    """The ``v1.Pod`` a reader sees."""
    meta: dict[str, Any] = {
        "name": pod.name, "namespace": pod.namespace, "uid": pod.uid, "resourceVersion": pod.resource_version,
        "creationTimestamp": pod.created,
    }
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    if pod.annotations:
        meta["annotations"] = dict(pod.annotations)
    if pod.owner_refs:
        meta["ownerReferences"] = [dict(ref) for ref in pod.owner_refs]
    if pod.managed_fields:
        meta["managedFields"] = pod.managed_fields
    spec = {"schedulerName": "default-scheduler", "restartPolicy": "Always", **pod.spec,
            "priority": pod.priority, "preemptionPolicy": "PreemptLowerPriority" if pod.preempts else "Never"}
    if pod.node:
        spec["nodeName"] = pod.node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": _status(pod)}


def _condition(kind: str, ok: bool, since: str, reason: str = "", message: str = "") -> dict[str, Any]:
    cond: dict[str, Any] = {"type": kind, "status": "True" if ok else "False", "lastProbeTime": None,
                            "lastTransitionTime": since}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _status(pod: Pod) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": pod.phase, "qosClass": _qos_class(pod)}
    if pod.node is None:
        if pod.unschedulable:
            status["conditions"] = [
                _condition("PodScheduled", False, pod.created, "Unschedulable", pod.unschedulable)]
        return status
    not_ready = "" if pod.ready else "PodCompleted" if pod.finished else "ContainersNotReady"
    ready_since = pod.ready_changed_at or pod.scheduled_at
    status["conditions"] = [
        _condition("Initialized", True, pod.scheduled_at, "PodCompleted" if pod.finished else ""),
        _condition("Ready", pod.ready, ready_since, not_ready),
        _condition("ContainersReady", pod.ready, ready_since, not_ready),
        _condition("PodScheduled", True, pod.scheduled_at),
    ]
    if pod.host_ip:
        host = format_ip(pod.host_ip)
        status["hostIP"], status["hostIPs"] = host, [{"ip": host}]
    if pod.ip:
        address = format_ip(pod.ip)
        status["podIP"], status["podIPs"] = address, [{"ip": address}]
    status["startTime"] = pod.scheduled_at
    status["containerStatuses"] = [_container_status(pod, c) for c in pod.spec.get("containers") or []]
    return status


def _container_status(pod: Pod, container: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any]
    last: dict[str, Any] = {}
    if pod.finished:
        ok = pod.phase == "Succeeded"
        state = {"terminated": {"exitCode": 0 if ok else 1, "reason": "Completed" if ok else "Error",
                                "startedAt": pod.started_at, "finishedAt": pod.finished_at}}
    elif pod.crashing:
        name = container.get("name", "")
        state = {"waiting": {"reason": "CrashLoopBackOff",
                             "message": f"back-off restarting failed container={name} pod={pod.name}"}}
        last = {"terminated": {"exitCode": 1, "reason": "Error"}}
    elif pod.started_at:
        state = {"running": {"startedAt": pod.started_at}}
    else:
        state = {"waiting": {"reason": "ContainerCreating"}}
    return {"name": container.get("name", ""), "image": container.get("image", ""), "imageID": "",
            "ready": pod.ready, "restartCount": pod.restarts,
            "started": bool(pod.started_at) and not pod.crashing, "state": state, "lastState": last}


def _qos_class(pod: Pod) -> str:
    containers = pod.spec.get("containers") or []
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    for r in resources:
        limits = r.get("limits") or {}
        requests = {**limits, **(r.get("requests") or {})}
        for name in ("cpu", "memory"):
            if name not in limits or quantity.to_milli(limits[name]) != quantity.to_milli(requests[name]):
                return "Burstable"
    return "Guaranteed"


__all__ = ["FINISHED", "Pod", "PodTable", "pod_requests", "render"]
