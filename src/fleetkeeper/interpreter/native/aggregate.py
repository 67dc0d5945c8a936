"""Native AggregateStatus for counters and phases (spec B.2.4).

The resource template shows one status for the whole fleet, built from the statuses reflected
from each member cluster (``items``, each ``{clusterName, status, applied, health…}``):

* replicated workloads sum their counters. ``status.observedGeneration`` advances to the
  template's generation only when *every* item (items without a status included, and never
  counting) reports a member that has seen its latest spec *and* was made from the latest
  template; otherwise it keeps the template's value. StatefulSet compares with the member's own
  generation (Karmada's rule, kept). When nothing changes, the input comes back untouched;
* Pod, PersistentVolume and PersistentVolumeClaim fold the members' phases with a fixed priority
  (a Pod is Failed if any member pod failed, else Pending if any is pending, …);
* PodDisruptionBudget and HorizontalPodAutoscaler sum their counters and replace the status.

Counters that a Kubernetes type marks ``omitempty`` are left out when zero, so the written status
looks like what the API server would return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fleetkeeper import errors
from fleetkeeper.interpreter import fields

Obj = dict[str, Any]
Items = list[Obj] | None
Spec = tuple[tuple[str, bool], ...]

_DEPLOYMENT: Spec = (("replicas", True), ("readyReplicas", True), ("updatedReplicas", True),
                     ("availableReplicas", True), ("unavailableReplicas", True))
_REPLICA_SET: Spec = (("replicas", False), ("readyReplicas", True), ("availableReplicas", True))
_STATEFUL_SET: Spec = (("availableReplicas", False), ("currentReplicas", True), ("readyReplicas", True),
                       ("replicas", False), ("updatedReplicas", True))
_DAEMON_SET: Spec = (("currentNumberScheduled", False), ("desiredNumberScheduled", False),
                     ("numberAvailable", True), ("numberMisscheduled", False), ("numberReady", False),
                     ("updatedNumberScheduled", True), ("numberUnavailable", True))


def member_statuses(items: Items) -> Iterator[tuple[str, Obj]]:
    """``(clusterName, status)`` of every item that has a reflected status."""
    for index, item in enumerate(items or []):
        status = item.get("status")
        if status is None:
            continue
        if not isinstance(status, dict):
            raise errors.InterpreterError(f"items[{index}].status: expected an object, "
                                          f"got {type(status).__name__}")
        yield str(item.get("clusterName") or ""), status


def compact(values: Obj, spec: Spec) -> Obj:
    """Drop zero counters the Kubernetes type marks ``omitempty``."""
    omit = {name for name, omit_empty in spec if omit_empty}
    return {k: v for k, v in values.items() if v or k not in omit}


def _sum(items: Items, spec: Spec) -> Obj:
    totals = {name: 0 for name, _ in spec}
    for _, status in member_statuses(items):
        for name in totals:
            totals[name] += fields.get_int(status, name)
    return totals


def _counters(spec: Spec, *, own_generation: bool, whole_status: bool) -> Callable[[Obj, Items], Obj]:
    """Deployment, ReplicaSet, StatefulSet and DaemonSet."""

    def aggregate(obj: Obj, items: Items) -> Obj:
        generation = fields.generation(obj)
        old = fields.get_map(obj, "status")
        latest = 0
        for _, member in member_statuses(items):
            seen = fields.get_int(member, "observedGeneration") >= fields.get_int(member, "generation")
            wanted = fields.get_int(member, "generation") if own_generation else generation
            if seen and fields.get_int(member, "resourceTemplateGeneration") >= wanted:
                latest += 1
        new = _sum(items, spec)
        new["observedGeneration"] = generation if latest == len(items or []) else fields.get_int(
            old, "observedGeneration")
        full = (*spec, ("observedGeneration", True))
        before = _nonzero(old) if whole_status else {n: fields.get_int(old, n) for n in new}
        after = _nonzero(new) if whole_status else new
        if before == after:
            return obj
        out = fields.deep(obj)
        status = fields.ensure_map(out, "status")
        for name in new:
            status.pop(name, None)
        status.update(compact(new, full))
        return out

    return aggregate


def _nonzero(status: Obj) -> Obj:
    return {k: v for k, v in status.items() if v not in (0, None, "", [], {}, False)}


def replace_status(obj: Obj, status: Obj) -> Obj:
    """The object with ``status`` replaced, or the object itself when nothing changes."""
    if _nonzero(fields.get_map(obj, "status")) == _nonzero(status):
        return obj
    out = fields.deep(obj)
    out["status"] = status
    return out


def _pod(obj: Obj, items: Items) -> Obj:
    if items is None:
        return obj
    phases: set[str] = set()
    containers: list[Obj] = []
    init_containers: list[Obj] = []
    for item in items:
        if item.get("status") is None:
            phases.add("Pending")
    for _, status in member_statuses(items):
        phases.add(fields.get_str(status, "phase"))
        for key, into in (("containerStatuses", containers), ("initContainerStatuses", init_containers)):
            for entry in fields.get_list(status, key):
                into.append(_container_status(entry))
    new: Obj = {}
    phase = next((p for p in ("Failed", "Pending", "Running", "Succeeded") if p in phases), "")
    if phase:
        new["phase"] = phase
    if containers:
        new["containerStatuses"] = containers
    if init_containers:
        new["initContainerStatuses"] = init_containers
    return replace_status(obj, new)


def _container_status(entry: object) -> Obj:
    out: Obj = {"ready": bool(fields.get(entry, "ready") if isinstance(entry, dict) else False)}
    state = fields.get(entry, "state") if isinstance(entry, dict) else None
    if state:
        out["state"] = fields.deep(state)
    return out


def _phases(order: tuple[str, ...]) -> Callable[[Obj, Items], Obj]:
    """PersistentVolume: a missing status counts as Pending; the first phase in ``order`` wins."""

    def aggregate(obj: Obj, items: Items) -> Obj:
        phases = {"Pending" for item in items or [] if item.get("status") is None}
        phases |= {fields.get_str(status, "phase") for _, status in member_statuses(items)}
        phase = next((p for p in order if p in phases), "")
        return replace_status(obj, {"phase": phase} if phase else {})

    return aggregate


def _pvc(obj: Obj, items: Items) -> Obj:
    phase = "Bound"
    for _, status in member_statuses(items):
        member = fields.get_str(status, "phase")
        if member == "Lost":
            phase = "Lost"
            break
        if member != "Bound":
            phase = member
    return replace_status(obj, {"phase": phase} if phase else {})


def _pdb(obj: Obj, items: Items) -> Obj:
    new = _sum(items, (("currentHealthy", False), ("desiredHealthy", False), ("expectedPods", False),
                       ("disruptionsAllowed", False)))
    disrupted: Obj = {}
    for cluster, status in member_statuses(items):
        for pod, when in fields.get_map(status, "disruptedPods").items():
            disrupted[f"{cluster}/{pod}"] = when
    if disrupted:
        new["disruptedPods"] = disrupted
    return replace_status(obj, new)


def _hpa(obj: Obj, items: Items) -> Obj:
    new = _sum(items, (("currentReplicas", True), ("desiredReplicas", False)))
    return replace_status(obj, compact(new, (("currentReplicas", True),)))


COUNTERS: dict[tuple[str, str], Callable[[Obj, Items], Obj]] = {
    ("apps/v1", "Deployment"): _counters(_DEPLOYMENT, own_generation=False, whole_status=False),
    ("apps/v1", "ReplicaSet"): _counters(_REPLICA_SET, own_generation=False, whole_status=False),
    ("apps/v1", "StatefulSet"): _counters(_STATEFUL_SET, own_generation=True, whole_status=False),
    ("apps/v1", "DaemonSet"): _counters(_DAEMON_SET, own_generation=False, whole_status=True),
    ("v1", "Pod"): _pod,
    ("v1", "PersistentVolume"): _phases(("Failed", "Pending", "Available", "Bound", "Released")),
    ("v1", "PersistentVolumeClaim"): _pvc,
    ("policy/v1", "PodDisruptionBudget"): _pdb,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): _hpa,
}
