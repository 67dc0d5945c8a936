"""What a simulated cluster serves: its API resources, their scope, and discovery.

A fresh cluster serves the built-in resources of a Kubernetes v1.31 API server (the
table below, subresources left out). Two things widen it, so propagating any kind works
as it would on a cluster that has the right CRDs installed:

* applying a ``CustomResourceDefinition`` serves the kind it defines (every served
  version, its plural and scope);
* applying an object of a kind nobody declared still succeeds (the simulation is lenient
  rather than answering "no matches for kind"), and the kind is served from then on —
  namespaced when the object had a namespace.

``api_enablements()`` renders what ``Cluster.status.apiEnablements`` holds:
groups sorted by groupVersion, resources sorted by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fleetkeeper.api.meta import default_plural


@dataclass(frozen=True, slots=True)
class ApiResource:
    group_version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]


def _table(group_version: str, namespaced: bool, *kinds: str) -> list[ApiResource]:
    out = []
    for entry in kinds:
        kind, _, plural = entry.partition(":")
        out.append(ApiResource(group_version, kind, plural or default_plural(kind), namespaced))
    return out


BUILTIN: tuple[ApiResource, ...] = (
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


class Discovery:
    """The served resources of one cluster (built-ins plus what was added)."""

    def __init__(self) -> None:
        self._served: dict[tuple[str, str], ApiResource] = {}
        self._scope: dict[tuple[str, str], bool] = {}  # (group, kind) → namespaced
        for resource in BUILTIN:
            self._add(resource)

    def _add(self, resource: ApiResource) -> None:
        self._served[(resource.group_version, resource.kind)] = resource
        self._scope.setdefault((resource.group, resource.kind), resource.namespaced)

    def namespaced(self, group: str, kind: str, namespace: str) -> bool:
        """Whether objects of a kind live in namespaces (unknown kinds: as the object says)."""
        known = self._scope.get((group, kind))
        return bool(namespace) if known is None else known

    def observe(self, api_version: str, kind: str, namespaced: bool) -> None:
        """Serve a kind an object was just stored for (no-op when already served)."""
        if (api_version, kind) not in self._served:
            self._add(ApiResource(api_version, kind, default_plural(kind), namespaced))

    def serve_crd(self, crd: dict[str, Any]) -> None:
        """Serve what a ``CustomResourceDefinition`` defines."""
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        group, kind = str(spec.get("group") or ""), str(names.get("kind") or "")
        if not group or not kind:
            return
        plural = str(names.get("plural") or default_plural(kind))
        namespaced = spec.get("scope", "Namespaced") != "Cluster"
        for version in spec.get("versions") or []:
            if isinstance(version, dict) and version.get("served", True) and version.get("name"):
                self._add(ApiResource(f"{group}/{version['name']}", kind, plural, namespaced))

    def api_enablements(self) -> list[dict[str, Any]]:
        """``[{groupVersion, resources: [{name, kind}]}]`` sorted as Cluster status wants."""
        by_gv: dict[str, list[ApiResource]] = {}
        for resource in self._served.values():
            by_gv.setdefault(resource.group_version, []).append(resource)
        return [
            {"groupVersion": gv,
             "resources": [{"name": r.plural, "kind": r.kind}
                           for r in sorted(by_gv[gv], key=lambda r: r.plural)]}
            for gv in sorted(by_gv)
        ]


__all__ = ["BUILTIN", "ApiResource", "Discovery"]
