"""Cluster (``cluster.karmada.io/v1alpha1``, cluster-scoped): one member cluster.

``spec`` is what an operator declares (how to reach the member, where it is, its
taints); ``status`` is what the control plane observes (version, APIs, the ``Ready``
condition, capacity, remedy actions). A spec change bumps ``metadata.generation``,
which is how the scheduler notices new taints.

Resource quantities are :data:`fleetkeeper.api.core.Quantity` strings.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.core import Quantity, ResourceList, Taint
from fleetkeeper.api.meta import Condition, Resource
from fleetkeeper.api.scheme import register

SyncMode = Literal["Push", "Pull"]


class LocalSecretReference(Model):
    namespace: str
    name: str


class ResourceModelRange(Model):
    name: str
    min: Quantity
    max: Quantity


class ResourceModel(Model):
    """One grade of the cluster's resource model: ``[min, max)`` per resource."""

    grade: int = Field(ge=0)
    ranges: list[ResourceModelRange]


class ClusterSpec(Model):
    id: str | None = None
    sync_mode: SyncMode
    api_endpoint: str | None = None
    secret_ref: LocalSecretReference | None = None
    impersonator_secret_ref: LocalSecretReference | None = None
    insecure_skip_tls_verification: bool = Field(default=False, alias="insecureSkipTLSVerification")
    proxy_url: str | None = Field(default=None, alias="proxyURL")
    proxy_header: dict[str, str] | None = None
    provider: str | None = None
    region: str | None = None
    zone: str | None = None
    zones: list[str] | None = None
    taints: list[Taint] | None = None
    resource_models: list[ResourceModel] | None = None


class APIResource(Model):
    name: str
    kind: str


class APIEnablement(Model):
    group_version: str
    resources: list[APIResource] | None = None


class NodeSummary(Model):
    total_num: int = 0
    ready_num: int = 0


class AllocatableModeling(Model):
    grade: int = Field(ge=0)
    count: int


class ResourceSummary(Model):
    allocatable: ResourceList | None = None
    allocating: ResourceList | None = None
    allocated: ResourceList | None = None
    allocatable_modelings: list[AllocatableModeling] | None = None


class ClusterStatus(Model):
    kubernetes_version: str | None = None
    api_enablements: list[APIEnablement] | None = Field(default=None, alias="apiEnablements")
    conditions: list[Condition] | None = None
    node_summary: NodeSummary | None = None
    resource_summary: ResourceSummary | None = None
    remedy_actions: list[str] | None = None


@register
class Cluster(Resource):
    """A member cluster; the name is a DNS-1123 label of at most 48 characters."""

    API_VERSION: ClassVar[str] = constants.CLUSTER_API_VERSION
    KIND: ClassVar[str] = "Cluster"
    PLURAL: ClassVar[str] = "clusters"
    NAMESPACED: ClassVar[bool] = False

    spec: ClusterSpec
    status: ClusterStatus = Field(default_factory=ClusterStatus)


__all__ = [
    "APIEnablement", "APIResource", "AllocatableModeling", "Cluster", "ClusterSpec", "ClusterStatus",
    "LocalSecretReference", "NodeSummary", "ResourceModel", "ResourceModelRange",
    "ResourceSummary", "SyncMode",
]
