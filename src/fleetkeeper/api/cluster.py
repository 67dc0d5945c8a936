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
    """Namespace of the Secret in the plane. Required."""
    name: str
    """Name of the Secret. Required."""


class ResourceModelRange(Model):
    name: str
    """Resource name, for example cpu or memory."""
    min: Quantity
    """Smallest quantity of the resource a node of this grade has, included. The first grade's is 0."""
    max: Quantity
    """Quantity of the resource the next grade starts at, excluded; greater than min. The last grade's is the
    largest 64-bit integer."""


class ResourceModel(Model):
    """One grade of the cluster's resource model: ``[min, max)`` per resource."""

    grade: int = Field(ge=0)
    """Number of the grade, 0 or more, unique among the models."""
    ranges: list[ResourceModelRange]
    """The range of each resource for nodes of this grade; every grade lists the same resources in the same
    order."""


class ClusterSpec(Model):
    id: str | None = None
    """Unique identifier of the member cluster, usually the UID of its kube-system namespace."""
    sync_mode: SyncMode
    """How resources reach the member: Push, the plane writes them to the member's API server; Pull, an agent
    in the member fetches them."""
    api_endpoint: str | None = None
    """URL of the member's API server, with a host and without user information, query or fragment."""
    secret_ref: LocalSecretReference | None = None
    """Secret holding the credentials (token and CA bundle) for the member's API server."""
    impersonator_secret_ref: LocalSecretReference | None = None
    """Secret holding the token used to impersonate users through the cluster proxy."""
    insecure_skip_tls_verification: bool = Field(default=False, alias="insecureSkipTLSVerification")
    """When true, the member's serving certificate is not checked. Defaults to false."""
    proxy_url: str | None = Field(default=None, alias="proxyURL")
    """Proxy to reach the member through: an http, https or socks5 URL."""
    proxy_header: dict[str, str] | None = None
    """HTTP headers sent to the proxy."""
    provider: str | None = None
    """Cloud provider of the member cluster, a valid label value. Placement can select and spread by it."""
    region: str | None = None
    """Region of the member cluster, a valid label value. Placement can select and spread by it."""
    zone: str | None = None
    """Deprecated: a single zone; use zones. Cannot be set together with zones, and is moved into zones when
    written alone."""
    zones: list[str] | None = None
    """Zones of the member cluster, each a valid label value. Placement can select and spread by them."""
    taints: list[Taint] | None = None
    """Taints of the member cluster. Workloads that do not tolerate a NoSchedule taint are not scheduled here;
    with a NoExecute taint they are also moved away. Each key and effect pair only once."""
    resource_models: list[ResourceModel] | None = None
    """Grades of nodes by their cpu and memory, used to estimate how many replicas fit. Created with nine
    default cpu and memory grades when empty; sorted by grade when written."""


class APIResource(Model):
    name: str
    """Plural resource name, for example deployments."""
    kind: str
    """Kind of the resource, for example Deployment."""


class APIEnablement(Model):
    group_version: str
    """API group and version, for example apps/v1."""
    resources: list[APIResource] | None = None
    """Resources the member serves in that group and version."""


class NodeSummary(Model):
    total_num: int = 0
    """Number of nodes in the member cluster."""
    ready_num: int = 0
    """Number of those nodes that are ready."""


class AllocatableModeling(Model):
    grade: int = Field(ge=0)
    """Grade of the resource model, 0 or more."""
    count: int
    """Number of nodes of that grade, by their free resources."""


class ResourceSummary(Model):
    allocatable: ResourceList | None = None
    """Resources the nodes offer in all, by resource name."""
    allocating: ResourceList | None = None
    """Resources requested by pods waiting to be scheduled."""
    allocated: ResourceList | None = None
    """Resources requested by pods already scheduled."""
    allocatable_modelings: list[AllocatableModeling] | None = None
    """How many nodes fall into each grade of the resource models."""


class ClusterStatus(Model):
    kubernetes_version: str | None = None
    """Kubernetes version of the member cluster."""
    api_enablements: list[APIEnablement] | None = Field(default=None, alias="apiEnablements")
    """API groups, versions and resources the member serves."""
    conditions: list[Condition] | None = None
    """The cluster's conditions; Ready says whether the member is reachable and healthy."""
    node_summary: NodeSummary | None = None
    """How many nodes the member has and how many are ready."""
    resource_summary: ResourceSummary | None = None
    """The member's resources: offered, in use and requested."""
    remedy_actions: list[str] | None = None
    """Actions that Remedies ask for on this cluster, such as TrafficControl."""


@register
class Cluster(Resource):
    """A member cluster; the name is a DNS-1123 label of at most 48 characters."""

    API_VERSION: ClassVar[str] = constants.CLUSTER_API_VERSION
    KIND: ClassVar[str] = "Cluster"
    PLURAL: ClassVar[str] = "clusters"
    NAMESPACED: ClassVar[bool] = False

    spec: ClusterSpec
    """How to reach the member cluster, where it is and its taints."""
    status: ClusterStatus = Field(default_factory=ClusterStatus)
    """What the plane observes about the member cluster."""


__all__ = [
    "APIEnablement", "APIResource", "AllocatableModeling", "Cluster", "ClusterSpec", "ClusterStatus",
    "LocalSecretReference", "NodeSummary", "ResourceModel", "ResourceModelRange",
    "ResourceSummary", "SyncMode",
]
