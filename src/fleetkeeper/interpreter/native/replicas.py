"""Native GetReplicas and ReviseReplica (spec B.2.1, B.2.2).

GetReplicas answers "how many replicas, and what does each need?" for the workload kinds the
scheduler divides: Deployment, ReplicaSet and StatefulSet read ``spec.replicas``; a Job runs
``min(parallelism, completions)`` pods at once; a bare Pod is one replica. The requirements come
from the pod template (:mod:`.requirements`).

ReviseReplica writes the count a member cluster was assigned back into the template, but only
into a field the template already has: Karmada never adds ``spec.replicas`` to an object that
relied on the default, and refuses a field that is not an integer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetkeeper import errors
from fleetkeeper.interpreter import fields
from fleetkeeper.interpreter.native.requirements import replica_requirements

Obj = dict[str, Any]
Replicas = tuple[int, Obj | None]


def _template_replicas(obj: Obj) -> Replicas:
    template = fields.get_map(obj, "spec", "template")
    return (fields.get_int(obj, "spec", "replicas"),
            replica_requirements(template, namespace=fields.meta(obj, "namespace")))


def _job_replicas(obj: Obj) -> Replicas:
    replicas = fields.get_int(obj, "spec", "parallelism")
    completions = fields.get_opt_int(obj, "spec", "completions")
    if completions is not None and replicas > completions:
        replicas = completions
    template = fields.get_map(obj, "spec", "template")
    return replicas, replica_requirements(template, namespace=fields.meta(obj, "namespace"))


def _pod_replicas(obj: Obj) -> Replicas:
    template = {"spec": fields.get_map(obj, "spec")}
    return 1, replica_requirements(template, namespace=fields.meta(obj, "namespace"))


def _revise(field: str) -> Callable[[Obj, int], Obj]:
    def revise(obj: Obj, replicas: int) -> Obj:
        spec = obj.get("spec")
        if not isinstance(spec, dict) or field not in spec or spec[field] is None:
            return obj
        fields.as_int(spec[field], f"spec.{field}")
        revised = fields.deep(obj)
        revised["spec"][field] = int(replicas)
        return revised

    revise.__doc__ = f"Set ``spec.{field}`` when the object already has it."
    return revise


GET_REPLICAS: dict[tuple[str, str], Callable[[Obj], Replicas]] = {
    ("apps/v1", "Deployment"): _template_replicas,
    ("apps/v1", "ReplicaSet"): _template_replicas,
    ("apps/v1", "StatefulSet"): _template_replicas,
    ("batch/v1", "Job"): _job_replicas,
    ("v1", "Pod"): _pod_replicas,
}

REVISE_REPLICA: dict[tuple[str, str], Callable[[Obj, int], Obj]] = {
    ("apps/v1", "Deployment"): _revise("replicas"),
    ("apps/v1", "ReplicaSet"): _revise("replicas"),
    ("apps/v1", "StatefulSet"): _revise("replicas"),
    ("batch/v1", "Job"): _revise("parallelism"),
}


def check_replicas(value: int) -> int:
    """A replica count must fit Go's int32, as Karmada stores it."""
    if not -(2**31) <= value < 2**31:
        raise errors.InterpreterError(f"replicas {value} does not fit a 32-bit integer")
    return value
