"""The cluster model: storage, pods, nodes and controllers, settled synchronously.

Everything inside a simulated cluster happens synchronously, inside the call (or clock
timer) that caused it: an apply stores the object, wakes its controller, which creates
pods, which the scheduler places, and so on until nothing is left to do — then the call
returns. Work is a FIFO of object keys (repeated wake-ups of one key coalesce) drained
in a bounded loop; no task runs in the background. That makes the model deterministic
(same calls at the same virtual times → same objects, names, uids and revisions) and
cheap: each change costs work proportional to what it touches (the pods of one owner,
the nodes), never to the size of the cluster.

Who wakes whom: a change of an object with a controller wakes it when its generation
moves (a spec change) or it is new; a change of any object or pod wakes its controlling
owner (``ownerReferences`` with ``controller: true``). Deletion cascades to dependents
(ReplicaSets of a Deployment, pods of anything), and deleting a Namespace deletes its
contents.

What is applied is checked first (``validate.py``), so controllers meet well-formed objects,
and a Service gets kube-apiserver's defaults and a cluster IP (``services.py``).
Should one still fail on an object, the cluster says so once for that version of the object
and goes on with the others; the object is looked at again when it changes.
"""

from __future__ import annotations

import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import structlog

from fleetkeeper.api import serverapply
from fleetkeeper.api.base import format_time
from fleetkeeper.api.constants import safe_encode
from fleetkeeper.clock import Clock
from fleetkeeper.members.simulated import nodes as node_model
from fleetkeeper.members.simulated import podevents
from fleetkeeper.members.simulated.controllers import Reconcile, owner_ref
from fleetkeeper.members.simulated.daemonsets import DAEMONSET, reconcile_daemonset
from fleetkeeper.members.simulated.deployments import (
    DEPLOYMENT,
    REPLICASET,
    reconcile_deployment,
    reconcile_replicaset,
)
from fleetkeeper.members.simulated.events import EVENT, EventLog
from fleetkeeper.members.simulated.jobs import JOB, reconcile_job
from fleetkeeper.members.simulated.lifecycle import PodLifecycle
from fleetkeeper.members.simulated.network import PodNetwork
from fleetkeeper.members.simulated.objects import (
    Change,
    GroupKind,
    Obj,
    ObjectKey,
    apply_request,
    body_changed,
    check_preconditions,
    group_of,
)
from fleetkeeper.members.simulated.pods import Pod, PodTable, pod_requests, render
from fleetkeeper.members.simulated.scheduler import Scheduler
from fleetkeeper.members.simulated.services import SERVICE_CIDR, ServiceRange
from fleetkeeper.members.simulated.statefulsets import STATEFULSET, reconcile_statefulset
from fleetkeeper.members.simulated.validate import check
from fleetkeeper.members.simulated.watch import WatchHub
from fleetkeeper.store.backend import Key
from fleetkeeper.store.local import LocalStore

POD = GroupKind("", "Pod")
NAMESPACE = GroupKind("", "Namespace")
#: a pod's ``preemptionPolicy``: it may preempt lower-priority pods, or it never preempts
PREEMPT_LOWER, PREEMPT_NEVER = "PreemptLowerPriority", "Never"
CONTROLLERS: dict[GroupKind, Reconcile] = {
    DEPLOYMENT: reconcile_deployment,
    REPLICASET: reconcile_replicaset,
    STATEFULSET: reconcile_statefulset,
    DAEMONSET: reconcile_daemonset,
    JOB: reconcile_job,
}
#: a bound on the work one call may cause (a safety net against a controller that never settles)
MAX_STEPS = 10_000_000
_UID_NAMESPACE = uuid.UUID("6f0c3b9e-5d1a-4c57-9a47-2f0d8b6c1e11")


def counting_uids(cluster: str) -> Callable[[], str]:
    """The default uid factory: uuid5 of the cluster name and a counter (deterministic)."""
    count = 0

    def new_uid() -> str:
        nonlocal count
        count += 1
        return str(uuid.uuid5(_UID_NAMESPACE, f"{cluster}/{count}"))

    return new_uid


class Engine:
    """One cluster's state and controllers (implements the controllers' ``Runtime``)."""

    def __init__(self, name: str, clock: Clock, *, pod_startup: float, job_run: float,
                 uid_factory: Callable[[], str] | None = None, service_cidr: str = SERVICE_CIDR) -> None:
        self.name = name
        self.clock = clock
        self.job_run = job_run
        #: every kind but Pod (and the cluster's own Events); its revisions number pods and events too
        self.store = LocalStore(uid_factory=uid_factory or counting_uids(name), now=self.now)
        self.pods = PodTable()
        self.scheduler = Scheduler()
        self.hub = WatchHub()
        self.network = PodNetwork()
        self.services = ServiceRange(service_cidr)
        self.store.listeners.append(self.services.on_change)
        self.events = EventLog(clock, self.store.next_version, self.hub, now=self.now)
        self.lifecycle = PodLifecycle(self, self.scheduler, clock, pod_startup=pod_startup,
                                      crashed=self._crashed)
        self.crashed: set[ObjectKey] = set()
        self._queue: OrderedDict[Key, None] = OrderedDict()
        #: objects their controller failed on → the resourceVersion it failed on (told once)
        self._failed: dict[Key, str] = {}
        self._retry_pending = False
        self._draining = False
        self._seq = 0
        self._now: tuple[float, str] = (-1.0, "")
        self.store.listeners.append(self._on_change)

    def now(self) -> str:
        """The current time as a timestamp (formatted once per instant: writes come in bursts)."""
        instant = self.clock.monotonic()
        if instant != self._now[0]:
            self._now = (instant, format_time(self.clock.now()))
        return self._now[1]

    def now_seconds(self) -> str:
        """The current time to the second, as Kubernetes stamps ``managedFields`` entries."""
        return self.now()[:19] + "Z"  # RFC 3339 in UTC: the date and time to the second come first

    # -- the work loop --------------------------------------------------------------------
    def wake(self, key: Key) -> None:
        if key.group_kind in CONTROLLERS:
            self._queue[key] = None

    def capacity_freed(self) -> None:
        self._retry_pending = True

    def drain(self) -> None:
        """Run controllers and the scheduler until nothing is left to do."""
        if self._draining:
            return
        self._draining = True
        try:
            for _ in range(MAX_STEPS):
                if self._queue:
                    key, _ = self._queue.popitem(last=False)
                    obj = self.store.get(key)
                    if obj is not None:
                        self._reconcile(key, obj)
                elif self._retry_pending and self.scheduler.pending:
                    self._retry_pending = False
                    self.lifecycle.retry_pending()
                else:
                    self._retry_pending = False
                    return
            raise RuntimeError(f"simulated cluster {self.name!r} did not settle within {MAX_STEPS} steps")
        finally:
            self._draining = False

    def _reconcile(self, key: Key, obj: Obj) -> None:
        """Run ``key``'s controller; a failure is told once per version of the object and the
        cluster goes on (see the module notes)."""
        try:
            CONTROLLERS[key.group_kind](self, obj)
        except Exception as exc:  # one object its controller cannot handle stops nothing else
            version = str(obj["metadata"].get("resourceVersion") or "")
            if self._failed.get(key) != version:
                self._failed[key] = version
                log = structlog.get_logger("fleetkeeper.members.simulated")  # rare: looked up when needed
                log.warning("workload controller cannot handle the object; leaving it until it changes",
                            cluster=self.name, kind=key.kind, namespace=key.namespace, name=key.name,
                            error=repr(exc))
        else:
            self._failed.pop(key, None)

    def check(self, obj: Obj) -> None:
        """Raise ``errors.Invalid`` when the API server would refuse to store ``obj`` (``validate.py``)."""
        check(obj, now=self.clock.now())

    def apply(self, manifest: Obj, *, manager: str, force: bool) -> Obj:
        """Server-side apply of any kind but Pod (``manifest`` already has its namespace settled;
        the stored object may share the manifest's sub-trees, so the caller hands over a copy of
        its own): checked (``validate.py``) and given its defaults (a Service's) before it is stored."""
        key = ObjectKey.of(manifest)
        live = self.store.get(key)
        check_preconditions(live, manifest)
        result = serverapply.apply(live, manifest, apply_request(manifest, manager=manager, force=force,
                                                                 now=self.now_seconds()))
        if serverapply.unchanged(live, result):
            assert live is not None
            return live
        self.check(result)
        stored = self.services.default(live, result)
        return self.store.write(key, live, stored, body_changed=body_changed(live, result))

    def _on_change(self, change: Change) -> None:
        self.hub.publish(change)
        old, new = change.old, change.new
        generation = new["metadata"]["generation"]
        if not change.deleted and (old is None or old["metadata"]["generation"] != generation):
            self.wake(change.key)
        self._wake_owner(change.key.namespace, new["metadata"].get("ownerReferences"))

    def _wake_owner(self, namespace: str, refs: list[dict[str, Any]] | None) -> None:
        for ref in refs or []:
            if ref.get("controller"):
                self.wake(ObjectKey(group_of(ref["apiVersion"]), ref["kind"], namespace, ref["name"]))

    # -- pods -----------------------------------------------------------------------------
    def pod_name(self, prefix: str, namespace: str) -> str:
        for _ in range(1000):
            self._seq += 1
            suffix = safe_encode(str(zlib.crc32(f"{self.name}/{prefix}/{self._seq}".encode())))[:5]
            if self.pods.get(namespace, f"{prefix}-{suffix}") is None:
                return f"{prefix}-{suffix}"
        raise RuntimeError(f"no free pod name for {prefix!r}")

    def create_pod(self, owner: Obj, template: dict[str, Any], *, name: str, revision: str,
                   labels: dict[str, str], pinned_node: str | None = None,
                   run_for: float | None = None) -> Pod:
        meta = owner["metadata"]
        spec = template.get("spec") or {}
        annotations = (template.get("metadata") or {}).get("annotations") or {}
        pod = self.new_pod(meta["namespace"], name, spec, labels=labels, annotations=dict(annotations),
                           owner_refs=[owner_ref(owner)])
        pod.workload = self._workload_of(owner)
        pod.revision, pod.pinned_node, pod.run_for = revision, pinned_node, run_for
        self.admit(pod, wake_owner=False)  # the owner is the controller creating it: it knows
        return pod

    def new_pod(self, namespace: str, name: str, spec: dict[str, Any], *, labels: dict[str, str],
                 annotations: dict[str, str], owner_refs: list[dict[str, Any]]) -> Pod:
        self._seq += 1
        controller = next((r for r in owner_refs if r.get("controller")), None)
        priority, policy = self._priority(spec)
        return Pod(
            namespace=namespace, name=name, uid=self.store.new_uid(), seq=self._seq, created=self.now(),
            labels=labels, spec=spec, requests=pod_requests(spec), priority=priority,
            preempts=policy != PREEMPT_NEVER, owner_refs=owner_refs,
            owner_uid=controller["uid"] if controller else None, annotations=annotations,
            workload=ObjectKey("", "Pod", namespace, name),
        )

    def admit(self, pod: Pod, *, wake_owner: bool = True) -> None:
        """Store a new pod, place it, announce it."""
        self.pods.add(pod)
        self.lifecycle.place(pod)
        pod.resource_version = self.store.next_version()
        if self.hub.watching(POD):
            self.hub.publish(Change(pod.key, None, render(pod)))
        if wake_owner:
            self._wake_owner(pod.namespace, pod.owner_refs)

    def pod_changed(self, pod: Pod, *, old_labels: dict[str, str] | None = None) -> None:
        if self.pods.get(pod.namespace, pod.name) is not pod:
            return  # deleted meanwhile
        pod.resource_version = self.store.next_version()
        if self.hub.watching(POD):
            old = {"metadata": {"labels": pod.labels if old_labels is None else old_labels}}
            self.hub.publish(Change(pod.key, old, render(pod)))
        self._wake_owner(pod.namespace, pod.owner_refs)

    def delete_pod(self, pod: Pod) -> None:
        if self.pods.get(pod.namespace, pod.name) is not pod:
            return
        pod.cancel_timer()
        running = pod.started_at and not (pod.crashing or pod.finished)
        if running and self.scheduler.node(pod.node) is not None:
            podevents.killing(self.events, pod)
        self.scheduler.release(pod)
        self.pods.remove(pod)
        self.capacity_freed()
        pod.resource_version = self.store.next_version()
        if self.hub.watching(POD):
            last = render(pod)
            self.hub.publish(Change(pod.key, last, last, deleted=True))
        self._wake_owner(pod.namespace, pod.owner_refs)

    def _crashed(self, pod: Pod) -> bool:
        return pod.workload in self.crashed

    def _workload_of(self, owner: Obj) -> ObjectKey:
        """The top-level controller of ``owner`` (a ReplicaSet's Deployment …)."""
        key = ObjectKey.of(owner)
        for _ in range(8):
            obj = self.store.get(key)
            ref = next((r for r in (obj or {}).get("metadata", {}).get("ownerReferences") or []
                        if r.get("controller")), None)
            if ref is None:
                break
            key = ObjectKey(group_of(ref["apiVersion"]), ref["kind"], key.namespace, ref["name"])
        return key

    def _priority(self, spec: dict[str, Any]) -> tuple[int, str]:
        """The pod's priority and preemption policy, as Kubernetes' Priority admission sets
        them: the pod's own, else its PriorityClass's (or the global default class's), else
        0 and ``PreemptLowerPriority``."""
        name = spec.get("priorityClassName")
        builtin = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
        value, policy = builtin.get(str(name), 0), PREEMPT_LOWER
        if name not in builtin:
            for priority_class in self.store.items(GroupKind("scheduling.k8s.io", "PriorityClass")):
                named = priority_class["metadata"]["name"] == name
                if named or (not name and priority_class.get("globalDefault")):
                    value = int(priority_class.get("value", 0))
                    policy = str(priority_class.get("preemptionPolicy") or PREEMPT_LOWER)
                    break
        own = spec.get("priority")
        return (int(own) if isinstance(own, int) else value), str(spec.get("preemptionPolicy") or policy)

    # -- objects --------------------------------------------------------------------------
    def delete_object(self, key: Key) -> None:
        """Delete an object and, first, everything that depends on it."""
        if key.group_kind == POD:
            pod = self.pods.get(key.namespace, key.name)
            if pod is not None:
                self.delete_pod(pod)
            return
        if key.group_kind == EVENT and self.events.delete(key.namespace, key.name):
            return
        obj = self.store.get(key)
        if obj is None:
            return
        uid = obj["metadata"]["uid"]
        for dependent in self.store.dependents(uid):
            self.delete_object(dependent)
        for pod in self.pods.owned_by(uid):
            self.delete_pod(pod)
        if key.group_kind == NAMESPACE:
            for inner in self.store.namespace_keys(key.name):
                self.delete_object(inner)
            for pod in list(self.pods.items(key.name)):
                self.delete_pod(pod)
        self.store.remove(key)
        self._failed.pop(key, None)
        if key.group_kind == node_model.NODE:
            node_model.forget(self, key.name)


__all__ = ["CONTROLLERS", "MAX_STEPS", "NAMESPACE", "POD", "Engine", "counting_uids"]
