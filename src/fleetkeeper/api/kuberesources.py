"""The resources a Kubernetes API server serves out of the box (v1.31, subresources left out).

One table for every place that must say what a Kubernetes cluster serves: the API server
serving a member cluster (:func:`~fleetkeeper.apiserver.member.member_scheme`: its discovery,
OpenAPI and routes) and a simulated cluster's ``Cluster.status.apiEnablements``, which the
scheduler's API-enablement filter reads. The plane's own scheme registers the kinds templates
are commonly made of (:mod:`~fleetkeeper.api.builtin`); a cluster serves more (Leases,
EndpointSlices, ``events.k8s.io`` Events, …).

:func:`models` gives the model class of each: the plane's where it registers the kind (with
its short names and ``/status``), else an :class:`~fleetkeeper.api.meta.Unstructured`
subclass declared with the table's plural and scope. Made on first use, so a process that
serves no member pays nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from fleetkeeper.api import builtin  # noqa: F401  (registers the plane's built-in kinds first)
from fleetkeeper.api.meta import Resource, Unstructured, default_plural
from fleetkeeper.api.scheme import SCHEME


@dataclass(frozen=True, slots=True)
class KubeResource:
    group_version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]


def _table(group_version: str, namespaced: bool, *kinds: str) -> list[KubeResource]:
    out = []
    for entry in kinds:
        kind, _, plural = entry.partition(":")
        out.append(KubeResource(group_version, kind, plural or default_plural(kind), namespaced))
    return out


RESOURCES: Final[tuple[KubeResource, ...]] = (
    *_table("v1", True, "Binding", "ConfigMap", "Endpoints", "Event", "LimitRange", "PersistentVolumeClaim",
            "Pod", "PodTemplate", "ReplicationController", "ResourceQuota", "Secret", "ServiceAccount",
            "Service"),
    *_table("v1", False, "ComponentStatus:componentstatuses", "Namespace", "Node", "PersistentVolume"),
    *_table("apps/v1", True, "ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"),
    *_table("batch/v1", True, "CronJob", "Job"),
    *_table("autoscaling/v1", True, "HorizontalPodAutoscaler"),
    *_table("autoscaling/v2", True, "HorizontalPodAutoscaler"),
    *_table("coordination.k8s.io/v1", True, "Lease"),
    *_table("discovery.k8s.io/v1", True, "EndpointSlice"),
    *_table("events.k8s.io/v1", True, "Event"),
    *_table("networking.k8s.io/v1", True, "Ingress", "NetworkPolicy"),
    *_table("networking.k8s.io/v1", False, "IngressClass"),
    *_table("policy/v1", True, "PodDisruptionBudget"),
    *_table("rbac.authorization.k8s.io/v1", True, "Role", "RoleBinding"),
    *_table("rbac.authorization.k8s.io/v1", False, "ClusterRole", "ClusterRoleBinding"),
    *_table("scheduling.k8s.io/v1", False, "PriorityClass"),
    *_table("storage.k8s.io/v1", True, "CSIStorageCapacity:csistoragecapacities"),
    *_table("storage.k8s.io/v1", False, "CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"),
    *_table("apiextensions.k8s.io/v1", False, "CustomResourceDefinition"),
    *_table("apiregistration.k8s.io/v1", False, "APIService"),
    *_table("admissionregistration.k8s.io/v1", False, "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
            "ValidatingWebhookConfiguration"),
    *_table("node.k8s.io/v1", False, "RuntimeClass"),
    *_table("certificates.k8s.io/v1", False, "CertificateSigningRequest"),
    *_table("flowcontrol.apiserver.k8s.io/v1", False, "FlowSchema", "PriorityLevelConfiguration"),
)


@functools.cache
def models() -> tuple[type[Resource], ...]:
    """The model class of every resource of :data:`RESOURCES`, in its order."""
    out: list[type[Resource]] = []
    for resource in RESOURCES:
        info = SCHEME.lookup(resource.group_version, resource.kind)
        if info is not None and info.api_version == resource.group_version and \
                (info.plural, info.namespaced) == (resource.plural, resource.namespaced):
            out.append(info.model)
            continue
        out.append(Unstructured.define(resource.group_version, resource.kind, plural=resource.plural,
                                       namespaced=resource.namespaced))
    return tuple(out)


__all__ = ["RESOURCES", "KubeResource", "models"]
