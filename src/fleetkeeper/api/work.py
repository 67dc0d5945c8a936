"""Bindings and Works (``work.karmada.io``): the schedule and what is dispatched.

* :class:`ResourceBinding` / :class:`ClusterResourceBinding` (``v1alpha2``) join a
  resource template to its policy: the detector copies placement/failover/suspension
  from the policy, the scheduler writes ``spec.clusters``, failover producers append
  ``spec.gracefulEvictionTasks``, and the binding-status controller aggregates
  ``status.aggregatedStatus``. Both kinds share :class:`ResourceBindingSpec` and
  :class:`ResourceBindingStatus`, so a controller can be written once for both: :data:`Binding`
  is either kind, :func:`binding_model` the kind a key names, :func:`template_stub` the
  template a binding stands for (to record events on).
* :class:`Work` (``v1alpha1``) is one manifest bound for one cluster, living in that
  cluster's execution namespace (``karmada-es-<cluster>``).

Manifests and reflected statuses are raw JSON (``dict[str, Any]``): they are whatever
the template's kind says, and are never validated here.

*Additive* (fleetkeeper, from the application-failover proposal): ``spec.evictionHistory``
on bindings remembers clusters a workload was evicted from, so that application
failover's ``blockPredecessorSeconds`` outlives the eviction task.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model, Time
from fleetkeeper.api.core import NodeSelector, ResourceList, Toleration
from fleetkeeper.api.meta import Condition, ObjectMeta, Resource, Unstructured
from fleetkeeper.api.placement import Placement
from fleetkeeper.api.policy import FailoverBehavior, PurgeMode, ResourceHealth, Suspension
from fleetkeeper.api.scheme import register


class ObjectReference(Model):
    """The resource template a binding stands for."""

    api_version: str = Field(alias="apiVersion")
    kind: str
    namespace: str | None = None
    name: str
    uid: str | None = None
    resource_version: str | None = None


class NodeClaim(Model):
    hard_node_affinity: NodeSelector | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None


class ReplicaRequirements(Model):
    """What one replica needs (from the GetReplicas interpreter)."""

    node_claim: NodeClaim | None = None
    resource_request: ResourceList | None = None
    namespace: str | None = None
    priority_class_name: str | None = None


class ComponentReplicaRequirements(Model):
    node_claim: NodeClaim | None = None
    resource_request: ResourceList | None = None
    priority_class_name: str | None = None


class Component(Model):
    """One pod template of a multi-template workload (gate ``MultiplePodTemplatesScheduling``)."""

    name: str = Field(max_length=32)
    replicas: int
    replica_requirements: ComponentReplicaRequirements | None = None


class TargetComponent(Model):
    name: str
    replicas: int


class TargetCluster(Model):
    """One entry of the schedule result."""

    name: str
    replicas: int = 0
    components: list[TargetComponent] | None = None


class GracefulEvictionTask(Model):
    """A cluster the workload is leaving, kept until the replacement is healthy."""

    from_cluster: str
    purge_mode: PurgeMode | None = None
    replicas: int | None = None
    reason: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    message: str | None = Field(default=None, max_length=1024)
    producer: str
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: dict[str, str] | None = None
    creation_timestamp: Time | None = None
    clusters_before_failover: list[str] | None = None


class EvictionRecord(Model):
    """*Additive* (fleetkeeper): a past eviction, kept after its task is gone."""

    cluster_name: str
    evicted_at: Time
    reason: str
    producer: str


class BindingSnapshot(Model):
    """An independent binding that requires this (dependency) binding, and its clusters."""

    namespace: str | None = None
    name: str
    clusters: list[TargetCluster] | None = None


class BindingSuspension(Suspension):
    """Policy suspension plus ``scheduling`` (owned by third parties; binding only)."""

    scheduling: bool | None = None


class BindingSchedulePriority(Model):
    priority: int = 0


class WorkloadAffinityGroups(Model):
    affinity_group: str | None = None
    anti_affinity_group: str | None = None


class ResourceBindingSpec(Model):
    resource: ObjectReference
    propagate_deps: bool = False
    replica_requirements: ReplicaRequirements | None = None
    replicas: int = 0
    components: list[Component] | None = None
    clusters: list[TargetCluster] | None = None
    placement: Placement | None = None
    graceful_eviction_tasks: list[GracefulEvictionTask] | None = None
    required_by: list[BindingSnapshot] | None = None
    scheduler_name: str | None = None
    failover: FailoverBehavior | None = None
    conflict_resolution: Literal["Abort", "Overwrite"] = "Abort"
    reschedule_triggered_at: Time | None = None
    suspension: BindingSuspension | None = None
    preserve_resources_on_deletion: bool | None = None
    schedule_priority: BindingSchedulePriority | None = None
    workload_affinity_groups: WorkloadAffinityGroups | None = None
    eviction_history: list[EvictionRecord] | None = None

    def schedule_priority_value(self) -> int:
        """The scheduling priority (0 without ``schedulePriority``), as Karmada reads it."""
        return self.schedule_priority.priority if self.schedule_priority is not None else 0


class AggregatedStatusItem(Model):
    cluster_name: str
    status: dict[str, Any] | None = None
    applied: bool = False
    applied_message: str | None = None
    health: ResourceHealth | None = None


class ResourceBindingStatus(Model):
    scheduler_observed_generation: int = 0
    scheduler_observed_affinity_name: str | None = Field(default=None, alias="schedulerObservingAffinityName")
    last_scheduled_time: Time | None = None
    conditions: list[Condition] | None = None
    aggregated_status: list[AggregatedStatusItem] | None = None


class _Binding(Resource):
    spec: ResourceBindingSpec
    status: ResourceBindingStatus = Field(default_factory=ResourceBindingStatus)


@register
class ResourceBinding(_Binding):
    """Binding of a namespaced template (same namespace as the template)."""

    API_VERSION: ClassVar[str] = constants.WORK_V1ALPHA2
    KIND: ClassVar[str] = "ResourceBinding"
    PLURAL: ClassVar[str] = "resourcebindings"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("rb",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)


@register
class ClusterResourceBinding(_Binding):
    """Binding of a cluster-scoped template."""

    API_VERSION: ClassVar[str] = constants.WORK_V1ALPHA2
    KIND: ClassVar[str] = "ClusterResourceBinding"
    PLURAL: ClassVar[str] = "clusterresourcebindings"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("crb",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)


# --- a binding of either kind -------------------------------------------------------------------

#: either binding kind (they share spec and status, so code over bindings is written once for both)
Binding = ResourceBinding | ClusterResourceBinding
#: the class of either binding kind
BindingModel = type[ResourceBinding] | type[ClusterResourceBinding]


def binding_model(namespace: str | None) -> BindingModel:
    """The binding kind a key names: namespaced → ResourceBinding, cluster-scoped → ClusterResourceBinding
    (a binding lives in its template's namespace, a ClusterResourceBinding in none)."""
    return ResourceBinding if namespace else ClusterResourceBinding


def template_stub(binding: Binding) -> Unstructured:
    """An object standing for the binding's template (its ``spec.resource``), to record events about it."""
    resource = binding.spec.resource
    return Unstructured.for_kind(resource.api_version, resource.kind)(
        metadata=ObjectMeta(name=resource.name, namespace=resource.namespace, uid=resource.uid))


# --- Work ---------------------------------------------------------------------------------------


class WorkloadTemplate(Model):
    manifests: list[dict[str, Any]] | None = None


class WorkSpec(Model):
    workload: WorkloadTemplate = Field(default_factory=WorkloadTemplate)
    suspend_dispatching: bool | None = None
    preserve_resources_on_deletion: bool | None = None


class ResourceIdentifier(Model):
    ordinal: int
    group: str | None = None
    version: str
    kind: str
    resource: str
    namespace: str | None = None
    name: str


class ManifestStatus(Model):
    identifier: ResourceIdentifier
    status: dict[str, Any] | None = None
    health: ResourceHealth | None = None


class WorkStatus(Model):
    conditions: list[Condition] | None = None
    manifest_statuses: list[ManifestStatus] | None = None


@register
class Work(Resource):
    """Manifests to apply to one member cluster (namespace ``karmada-es-<cluster>``)."""

    API_VERSION: ClassVar[str] = constants.WORK_V1ALPHA1
    KIND: ClassVar[str] = "Work"
    PLURAL: ClassVar[str] = "works"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("wk",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)

    spec: WorkSpec = Field(default_factory=WorkSpec)
    status: WorkStatus = Field(default_factory=WorkStatus)


__all__ = [
    "AggregatedStatusItem", "Binding", "BindingModel", "BindingSchedulePriority", "BindingSnapshot",
    "BindingSuspension", "ClusterResourceBinding", "Component", "ComponentReplicaRequirements",
    "EvictionRecord", "GracefulEvictionTask", "ManifestStatus", "NodeClaim", "ObjectReference",
    "ReplicaRequirements", "ResourceBinding", "ResourceBindingSpec", "ResourceBindingStatus",
    "ResourceIdentifier", "TargetCluster", "TargetComponent", "Work", "WorkSpec", "WorkStatus",
    "WorkloadAffinityGroups", "WorkloadTemplate", "binding_model", "template_stub",
]
