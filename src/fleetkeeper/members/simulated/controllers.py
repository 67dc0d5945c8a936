"""What workload controllers share: the runtime they act through, and status helpers.

The workload controllers (``deployments.py``, ``statefulsets.py``, ``daemonsets.py``,
``jobs.py``) are level-triggered functions ``reconcile(runtime, obj)``: read the object
and the pods it owns, create or delete pods (and ReplicaSets) to match the spec, write
status. They never call each other; the cluster re-runs a controller whenever its object
or anything it owns changes, until nothing changes (see ``engine.py``).

Status is written the way Kubernetes writes it, including its JSON habits: fields
tagged ``omitempty`` in the Go types disappear when zero (a Deployment with no ready pod
has no ``readyReplicas``), required ones stay. ``spec`` is stored as applied (the
simulated API server does no defaulting), so controllers apply the defaults themselves
when they read it (``replicas`` 1, ``parallelism`` 1 …).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import orjson

from fleetkeeper.api.constants import safe_encode
from fleetkeeper.members.simulated.events import EventLog, involved
from fleetkeeper.members.simulated.objects import Obj, ObjectKey
from fleetkeeper.members.simulated.pods import Pod, PodTable
from fleetkeeper.members.simulated.scheduler import Scheduler
from fleetkeeper.store.backend import Key
from fleetkeeper.store.local import LocalStore


class Runtime(Protocol):
    """The cluster as a controller sees it."""

    store: LocalStore
    pods: PodTable
    scheduler: Scheduler
    events: EventLog
    #: seconds a Job pod runs before it succeeds (a Job may override it, see ``jobs.py``)
    job_run: float

    def now(self) -> str: ...

    def create_pod(self, owner: Obj, template: dict[str, Any], *, name: str, revision: str,
                   labels: dict[str, str], pinned_node: str | None = None,
                   run_for: float | None = None) -> Pod: ...

    def delete_pod(self, pod: Pod) -> None: ...

    def delete_object(self, key: Key) -> None: ...

    def pod_name(self, prefix: str, namespace: str) -> str:
        """``<prefix>-<5 chars>``, deterministic and unused."""
        ...


Reconcile = Callable[[Runtime, Obj], None]


def template_hash(template: dict[str, Any]) -> str:
    """A stable short hash of a pod template (``pod-template-hash`` / revision names)."""
    return safe_encode(str(zlib.crc32(orjson.dumps(template, option=orjson.OPT_SORT_KEYS))))


def owner_ref(owner: Obj) -> dict[str, Any]:
    """The controller ownerReference pointing at ``owner``."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def spec_int(spec: dict[str, Any], name: str, default: int) -> int:
    value = spec.get(name)
    return default if value is None else int(value)


def deletion_order(pods: Iterable[Pod]) -> list[Pod]:
    """Which pods go first on scale down: unscheduled, then not ready, then newest."""
    return sorted(pods, key=lambda p: (p.node is not None, p.ready, -p.seq))


def scale(runtime: Runtime, pods: list[Pod], *, want: int, owner: Obj, component: str,
          create: Callable[[], Pod] | None = None) -> list[Pod]:
    """Create (with ``create``) or delete pods until ``want`` remain; returns the survivors.

    Each pod created or deleted is an Event of ``owner`` from ``component`` in the words of
    Kubernetes' ReplicaSet and Job controllers."""
    pods = list(pods)
    for victim in deletion_order(pods)[:max(0, len(pods) - want)]:
        runtime.delete_pod(victim)
        pods.remove(victim)
        runtime.events.record(involved(owner), "SuccessfulDelete", f"Deleted pod: {victim.name}",
                              component=component)
    if want > len(pods):
        assert create is not None, "scaling up needs a way to create pods"
        for _ in range(want - len(pods)):
            pod = create()
            pods.append(pod)
            runtime.events.record(involved(owner), "SuccessfulCreate", f"Created pod: {pod.name}",
                                  component=component)
    return pods


def set_condition(conditions: list[dict[str, Any]], kind: str, *, status: bool, reason: str, message: str,
                  now: str, with_update_time: bool = False) -> None:
    """Upsert a condition; ``lastTransitionTime`` moves only when the status flips."""
    value = "True" if status else "False"
    old = next((c for c in conditions if c.get("type") == kind), None)
    cond: dict[str, Any] = {"type": kind, "status": value}
    if with_update_time:
        same = old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (
            value, reason, message)
        cond["lastUpdateTime"] = old.get("lastUpdateTime", now) if same and old else now
    cond["lastTransitionTime"] = old["lastTransitionTime"] if old and old.get("status") == value else now
    cond["reason"] = reason
    cond["message"] = message
    if old is None:
        conditions.append(cond)
    else:
        conditions[conditions.index(old)] = cond


def omit_zero(status: dict[str, Any], *names: str) -> dict[str, Any]:
    """Drop ``omitempty`` fields that are zero, as Go's JSON encoder does."""
    for name in names:
        if not status.get(name):
            status.pop(name, None)
    return status


def write_status(runtime: Runtime, obj: Obj, status: dict[str, Any]) -> None:
    """Store ``status`` (a no-op when unchanged)."""
    if obj.get("status") != status:
        runtime.store.replace(ObjectKey.of(obj), status=status)


def conditions_of(obj: Obj) -> list[dict[str, Any]]:
    """A copy of the object's conditions, to edit."""
    return [dict(c) for c in (obj.get("status") or {}).get("conditions") or []]


def pod_labels(template: dict[str, Any], extra: dict[str, str]) -> dict[str, str]:
    return {**((template.get("metadata") or {}).get("labels") or {}), **extra}


__all__ = [
    "Reconcile", "Runtime", "conditions_of", "deletion_order", "omit_zero", "owner_ref", "pod_labels",
    "scale", "set_condition", "spec_int", "template_hash", "write_status",
]
