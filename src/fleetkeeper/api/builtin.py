"""Well-known Kubernetes kinds stored as :class:`~fleetkeeper.api.meta.Unstructured`.

Resource templates (Deployments, ConfigMaps, …) are kept verbatim: fleetkeeper reads
them through the resource interpreter, never through typed models. Registering them
gives the API server and the CLI their plural, scope and short names (``deploy``,
``svc`` …), exactly as Kubernetes serves them. Unknown kinds still work (they decode
as Unstructured with a guessed plural); registering a CRD here is never required.
"""

from __future__ import annotations

from typing import Final

from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.scheme import SCHEME

# (apiVersion, kind, plural, namespaced, short names, has a /status subresource)
_KINDS: Final[tuple[tuple[str, str, str, bool, tuple[str, ...], bool], ...]] = (
    ("apps/v1", "Deployment", "deployments", True, ("deploy",), True),
    ("apps/v1", "StatefulSet", "statefulsets", True, ("sts",), True),
    ("apps/v1", "ReplicaSet", "replicasets", True, ("rs",), True),
    ("apps/v1", "DaemonSet", "daemonsets", True, ("ds",), True),
    ("batch/v1", "Job", "jobs", True, (), True),
    ("batch/v1", "CronJob", "cronjobs", True, ("cj",), True),
    ("v1", "Pod", "pods", True, ("po",), True),
    ("v1", "Service", "services", True, ("svc",), True),
    ("v1", "ConfigMap", "configmaps", True, ("cm",), False),
    ("v1", "Secret", "secrets", True, (), False),
    ("v1", "ServiceAccount", "serviceaccounts", True, ("sa",), False),
    ("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",), True),
    ("v1", "PersistentVolume", "persistentvolumes", False, ("pv",), True),
    ("v1", "Node", "nodes", False, ("no",), True),
    ("v1", "Endpoints", "endpoints", True, ("ep",), False),
    ("v1", "ResourceQuota", "resourcequotas", True, ("quota",), True),
    ("v1", "LimitRange", "limitranges", True, ("limits",), False),
    ("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, ("pc",), False),
    ("storage.k8s.io/v1", "StorageClass", "storageclasses", False, ("sc",), False),
    ("networking.k8s.io/v1", "Ingress", "ingresses", True, ("ing",), True),
    ("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True, ("netpol",), False),
    ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), True),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), True),
    ("rbac.authorization.k8s.io/v1", "Role", "roles", True, (), False),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True, (), False),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False, (), False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False, (), False),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False,
     ("crd", "crds"), True),
)


#: the kinds ``kubectl get all`` lists (Kubernetes' category ``all``)
_ALL = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob", "Pod", "Service",
                  "HorizontalPodAutoscaler"})


def _register_all() -> dict[str, type[Unstructured]]:
    out: dict[str, type[Unstructured]] = {}
    for api_version, kind, plural, namespaced, short_names, has_status in _KINDS:
        model = Unstructured.for_kind(api_version, kind, plural=plural, namespaced=namespaced,
                                      short_names=short_names, has_status=has_status,
                                      categories=("all",) if kind in _ALL else ())
        SCHEME.add(model)
        out[kind] = model
    return out


#: kind → its registered Unstructured class (``BUILTIN["Deployment"]``)
BUILTIN: Final = _register_all()

Deployment = BUILTIN["Deployment"]
StatefulSet = BUILTIN["StatefulSet"]
ReplicaSet = BUILTIN["ReplicaSet"]
DaemonSet = BUILTIN["DaemonSet"]
Job = BUILTIN["Job"]
CronJob = BUILTIN["CronJob"]
Pod = BUILTIN["Pod"]
Service = BUILTIN["Service"]
ConfigMap = BUILTIN["ConfigMap"]
Secret = BUILTIN["Secret"]
ServiceAccount = BUILTIN["ServiceAccount"]
PersistentVolumeClaim = BUILTIN["PersistentVolumeClaim"]
PersistentVolume = BUILTIN["PersistentVolume"]
Node = BUILTIN["Node"]
Endpoints = BUILTIN["Endpoints"]
Ingress = BUILTIN["Ingress"]
NetworkPolicy = BUILTIN["NetworkPolicy"]
PodDisruptionBudget = BUILTIN["PodDisruptionBudget"]
HorizontalPodAutoscaler = BUILTIN["HorizontalPodAutoscaler"]
Role = BUILTIN["Role"]
RoleBinding = BUILTIN["RoleBinding"]
ClusterRole = BUILTIN["ClusterRole"]
ClusterRoleBinding = BUILTIN["ClusterRoleBinding"]
CustomResourceDefinition = BUILTIN["CustomResourceDefinition"]

__all__ = [
    "BUILTIN", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "CronJob", "CustomResourceDefinition",
    "DaemonSet", "Deployment", "Endpoints", "HorizontalPodAutoscaler", "Ingress", "Job", "NetworkPolicy",
    "Node", "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodDisruptionBudget", "ReplicaSet", "Role",
    "RoleBinding", "Secret", "Service", "ServiceAccount", "StatefulSet",
]
