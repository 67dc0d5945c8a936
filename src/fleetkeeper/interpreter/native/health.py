"""Native InterpretHealth (spec B.2.5): is the member-side object healthy?

Application failover acts on these answers, so they follow Karmada's rules to the letter:

* Deployment and StatefulSet: the controller has seen the latest generation, every desired replica
  is updated, and every updated replica is available;
* ReplicaSet: latest generation seen and ``availableReplicas >= spec.replicas``;
* DaemonSet: latest generation seen, every desired node updated, every updated pod available;
* Service: healthy unless it is a LoadBalancer that has no ingress address yet;
* Ingress: healthy once some load-balancer ingress has an address;
* PersistentVolumeClaim: Bound; Pod: Succeeded, or Running with condition Ready=True;
* PodDisruptionBudget: ``currentHealthy >= desiredHealthy``.

A kind missing here has no native health rule; the façade then reports it healthy (B.1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetkeeper.interpreter import fields

Obj = dict[str, Any]


def _rolled_out(obj: Obj) -> bool:
    """Deployment and StatefulSet."""
    if fields.get_int(obj, "status", "observedGeneration") != fields.generation(obj):
        return False
    replicas = fields.get_opt_int(obj, "spec", "replicas")
    updated = fields.get_int(obj, "status", "updatedReplicas")
    if replicas is not None and updated < replicas:
        return False
    return fields.get_int(obj, "status", "availableReplicas") >= updated


def _replica_set(obj: Obj) -> bool:
    if fields.get_int(obj, "status", "observedGeneration") != fields.generation(obj):
        return False
    replicas = fields.get_opt_int(obj, "spec", "replicas")
    return replicas is None or fields.get_int(obj, "status", "availableReplicas") >= replicas


def _daemon_set(obj: Obj) -> bool:
    if fields.get_int(obj, "status", "observedGeneration") != fields.generation(obj):
        return False
    updated = fields.get_int(obj, "status", "updatedNumberScheduled")
    if updated < fields.get_int(obj, "status", "desiredNumberScheduled"):
        return False
    return fields.get_int(obj, "status", "numberAvailable") >= updated


def _has_lb_address(obj: Obj) -> bool:
    for ingress in fields.get_list(obj, "status", "loadBalancer", "ingress"):
        if isinstance(ingress, dict) and (ingress.get("hostname") or ingress.get("ip")):
            return True
    return False


def _service(obj: Obj) -> bool:
    if fields.get_str(obj, "spec", "type") != "LoadBalancer":
        return True
    return _has_lb_address(obj)


def _pvc(obj: Obj) -> bool:
    return fields.get_str(obj, "status", "phase") == "Bound"


def _pod(obj: Obj) -> bool:
    phase = fields.get_str(obj, "status", "phase")
    if phase == "Succeeded":
        return True
    if phase != "Running":
        return False
    for condition in fields.get_list(obj, "status", "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _pdb(obj: Obj) -> bool:
    return fields.get_int(obj, "status", "currentHealthy") >= fields.get_int(obj, "status", "desiredHealthy")


INTERPRET_HEALTH: dict[tuple[str, str], Callable[[Obj], bool]] = {
    ("apps/v1", "Deployment"): _rolled_out,
    ("apps/v1", "StatefulSet"): _rolled_out,
    ("apps/v1", "ReplicaSet"): _replica_set,
    ("apps/v1", "DaemonSet"): _daemon_set,
    ("v1", "Service"): _service,
    ("networking.k8s.io/v1", "Ingress"): _has_lb_address,
    ("v1", "PersistentVolumeClaim"): _pvc,
    ("v1", "Pod"): _pod,
    ("policy/v1", "PodDisruptionBudget"): _pdb,
}
