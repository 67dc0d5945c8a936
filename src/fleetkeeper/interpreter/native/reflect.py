"""Native ReflectStatus (spec B.2.7): which part of a member object's status travels back.

The reflected status is what the control plane keeps per cluster (``Work`` manifest status, then
the binding's ``aggregatedStatus``), and what aggregation and state preservation read. For the
replicated workloads it is a small, fixed set of counters plus two generations:

* ``generation`` — the member object's own ``metadata.generation``;
* ``resourceTemplateGeneration`` — the template generation the member copy was made from, read
  from the ``resourcetemplate.karmada.io/generation`` annotation. Karmada parses it with
  ``strconv.ParseInt``, so a missing or malformed annotation is an **error** for Deployment,
  ReplicaSet, DaemonSet and StatefulSet (once the object has a status).

Fields are left out when zero exactly where the Kubernetes types say ``omitempty``: a
DeploymentStatus omits every zero counter (and an all-zero Deployment reflects nothing), while
ReplicaSet ``replicas``, StatefulSet ``replicas``/``availableReplicas``, the four DaemonSet
counters, the four PDB counters and HPA ``desiredReplicas`` always appear.

Every kind without a rule reflects its whole ``.status`` (None when it has none).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fleetkeeper import errors
from fleetkeeper.interpreter import fields

Obj = dict[str, Any]
GENERATION_ANNOTATION = "resourcetemplate.karmada.io/generation"
_INT = re.compile(r"[+-]?[0-9]+")

# (field, omitted when zero?) in Go struct order.
_DEPLOYMENT = (("observedGeneration", True), ("replicas", True), ("updatedReplicas", True),
               ("readyReplicas", True), ("availableReplicas", True), ("unavailableReplicas", True))
_REPLICA_SET = (("replicas", False), ("readyReplicas", True), ("availableReplicas", True),
                ("observedGeneration", True))
_DAEMON_SET = (("currentNumberScheduled", False), ("numberMisscheduled", False),
               ("desiredNumberScheduled", False), ("numberReady", False), ("observedGeneration", True),
               ("updatedNumberScheduled", True), ("numberAvailable", True), ("numberUnavailable", True))
_STATEFUL_SET = (("replicas", False), ("readyReplicas", True), ("currentReplicas", True),
                 ("updatedReplicas", True), ("availableReplicas", False))
_PDB = (("disruptionsAllowed", False), ("currentHealthy", False), ("desiredHealthy", False),
        ("expectedPods", False))


def _status(obj: Obj) -> Obj | None:
    if "status" not in obj or obj["status"] is None:
        return None
    status = obj["status"]
    if not isinstance(status, dict):
        raise errors.InterpreterError(f"status: expected an object, got {type(status).__name__}")
    return status


def template_generation(obj: Obj) -> int:
    """The ``resourcetemplate.karmada.io/generation`` annotation as an integer (required)."""
    raw = fields.get(obj, "metadata", "annotations", GENERATION_ANNOTATION)
    text = raw if isinstance(raw, str) else ""
    if not _INT.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
        raise errors.InterpreterError(
            f"strconv.ParseInt: parsing {text!r}: invalid syntax (annotation {GENERATION_ANNOTATION} "
            f"of {obj.get('kind', '')} {fields.meta(obj, 'namespace')}/{fields.meta(obj, 'name')})"
        )
    return int(text)


def _counters(status: Obj, spec: tuple[tuple[str, bool], ...]) -> Obj:
    out: Obj = {}
    for name, omit_empty in spec:
        value = fields.get_int(status, name)
        if value or not omit_empty:
            out[name] = value
    return out


def _federated(obj: Obj, status: Obj, spec: tuple[tuple[str, bool], ...]) -> Obj:
    out: Obj = {}
    generation = fields.generation(obj)
    template = template_generation(obj)
    if generation:
        out["generation"] = generation
    if template:
        out["resourceTemplateGeneration"] = template
    out.update(_counters(status, spec))
    return out


def _workload(spec: tuple[tuple[str, bool], ...], *, empty_is_none: bool) -> Callable[[Obj], Obj | None]:
    def reflect(obj: Obj) -> Obj | None:
        status = _status(obj)
        if status is None:
            return None
        out = _federated(obj, status, spec)
        return None if empty_is_none and not out else out

    return reflect


def _service(obj: Obj) -> Obj | None:
    if fields.get_str(obj, "spec", "type") != "LoadBalancer":
        return None
    status = _status(obj)
    if status is None:
        return None
    return {"loadBalancer": fields.get_map(status, "loadBalancer")}


def _job(obj: Obj) -> Obj | None:
    status = _status(obj)
    if status is None:
        return None
    out: Obj = {}
    conditions = fields.get_list(status, "conditions")
    if conditions:
        out["conditions"] = fields.deep(conditions)
    for name in ("startTime", "completionTime"):
        if fields.get_str(status, name):
            out[name] = status[name]
    out.update(_counters(status, (("active", True), ("succeeded", True), ("failed", True))))
    return out


def _pdb(obj: Obj) -> Obj | None:
    status = _status(obj)
    if status is None:
        return None
    out = _counters(status, _PDB)
    disrupted = fields.get_map(status, "disruptedPods")
    if disrupted:
        out["disruptedPods"] = disrupted
    return out


def _hpa(obj: Obj) -> Obj | None:
    status = _status(obj)
    if status is None:
        return None
    out: Obj = {}
    current = fields.get_int(status, "currentReplicas")
    if current:
        out["currentReplicas"] = current
    out["desiredReplicas"] = fields.get_int(status, "desiredReplicas")
    return out


def whole_status(obj: Obj) -> Obj | None:
    """Every other kind: the whole ``.status``, or None."""
    status = _status(obj)
    return None if status is None else fields.deep(status)


REFLECT_STATUS: dict[tuple[str, str], Callable[[Obj], Obj | None]] = {
    ("apps/v1", "Deployment"): _workload(_DEPLOYMENT, empty_is_none=True),
    ("apps/v1", "ReplicaSet"): _workload(_REPLICA_SET, empty_is_none=True),
    ("apps/v1", "DaemonSet"): _workload(_DAEMON_SET, empty_is_none=False),
    ("apps/v1", "StatefulSet"): _workload(_STATEFUL_SET, empty_is_none=False),
    ("v1", "Service"): _service,
    ("networking.k8s.io/v1", "Ingress"): whole_status,
    ("batch/v1", "Job"): _job,
    ("policy/v1", "PodDisruptionBudget"): _pdb,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): _hpa,
}
