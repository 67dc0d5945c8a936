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
    """API version of the resource template."""
    kind: str
    """Kind of the resource template."""
    namespace: str | None = None
    """Namespace of the resource template; empty for a cluster-scoped one."""
    name: str
    """Name of the resource template."""
    uid: str | None = None
    """UID of the resource template."""
    resource_version: str | None = None
    """Resource version of the template the binding was last built from."""


class NodeClaim(Model):
    hard_node_affinity: NodeSelector | None = None
    """Node affinity a replica requires; a member cluster must have nodes that satisfy it."""
    node_selector: dict[str, str] | None = None
    """Node labels a replica requires."""
    tolerations: list[Toleration] | None = None
    """Node taints a replica tolerates."""


class ReplicaRequirements(Model):
    """What one replica needs (from the GetReplicas interpreter)."""

    node_claim: NodeClaim | None = None
    """The nodes one replica may run on."""
    resource_request: ResourceList | None = None
    """CPU, memory and other resources one replica requests, by resource name."""
    namespace: str | None = None
    """Namespace the replicas run in."""
    priority_class_name: str | None = None
    """PriorityClass of the replicas."""


class ComponentReplicaRequirements(Model):
    node_claim: NodeClaim | None = None
    """The nodes one replica of the component may run on."""
    resource_request: ResourceList | None = None
    """Resources one replica of the component requests, by resource name."""
    priority_class_name: str | None = None
    """PriorityClass of the component's replicas."""


class Component(Model):
    """One pod template of a multi-template workload (gate ``MultiplePodTemplatesScheduling``)."""

    name: str = Field(max_length=32)
    """Name of the component, at most 32 characters."""
    replicas: int
    """Number of replicas of the component."""
    replica_requirements: ComponentReplicaRequirements | None = None
    """What one replica of the component needs."""


class TargetComponent(Model):
    name: str
    """Name of the component."""
    replicas: int
    """Replicas of the component assigned to the cluster."""


class TargetCluster(Model):
    """One entry of the schedule result."""

    name: str
    """Name of the member cluster."""
    replicas: int = 0
    """Replicas assigned to the cluster. Defaults to 0."""
    components: list[TargetComponent] | None = None
    """Replicas of each component assigned to the cluster."""


class GracefulEvictionTask(Model):
    """A cluster the workload is leaving, kept until the replacement is healthy."""

    from_cluster: str
    """The member cluster the workload is leaving."""
    purge_mode: PurgeMode | None = None
    """How the workload is removed from that cluster: Directly, Gracefully or Never."""
    replicas: int | None = None
    """Replicas the workload had on that cluster, so they are rescheduled elsewhere."""
    reason: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    """One CamelCase word saying why the workload leaves: 1 to 32 letters, digits, underscores, commas or
    colons, starting with a letter."""
    message: str | None = Field(default=None, max_length=1024)
    """Details for people about the eviction, at most 1024 characters."""
    producer: str
    """The controller that started the eviction."""
    grace_period_seconds: int | None = None
    """Longest time, in seconds, the old copy is kept; without it the controller's default applies."""
    suppress_deletion: bool | None = None
    """While true, the task and the old copy are kept whatever the health of the new copies; setting it to
    false ends the task."""
    preserved_label_state: dict[str, str] | None = None
    """Labels, read from the old copy's status, that the new copies carry."""
    creation_timestamp: Time | None = None
    """When the eviction started."""
    clusters_before_failover: list[str] | None = None
    """The clusters the workload ran on when the eviction started."""


class EvictionRecord(Model):
    """*Additive* (fleetkeeper): a past eviction, kept after its task is gone."""

    cluster_name: str
    """The member cluster the workload was evicted from."""
    evicted_at: Time
    """When the workload was evicted."""
    reason: str
    """Why the workload was evicted."""
    producer: str
    """The controller that evicted the workload."""


class BindingSnapshot(Model):
    """An independent binding that requires this (dependency) binding, and its clusters."""

    namespace: str | None = None
    """Namespace of the binding that requires this one."""
    name: str
    """Name of the binding that requires this one."""
    clusters: list[TargetCluster] | None = None
    """The clusters the requiring binding is scheduled to, which this one follows."""


class BindingSuspension(Suspension):
    """Policy suspension plus ``scheduling`` (owned by third parties; binding only)."""

    scheduling: bool | None = None
    """When true, the binding is not scheduled until it is set back to false."""


class BindingSchedulePriority(Model):
    priority: int = 0
    """Place of the binding in the scheduling queue: higher goes first. Defaults to 0."""


class WorkloadAffinityGroups(Model):
    affinity_group: str | None = None
    """Group of workloads this one is placed with."""
    anti_affinity_group: str | None = None
    """Group of workloads this one is kept away from."""


class ResourceBindingSpec(Model):
    resource: ObjectReference
    """The resource template the binding stands for."""
    propagate_deps: bool = False
    """Whether the objects the workload refers to follow it to its clusters, copied from the policy. Defaults
    to false."""
    replica_requirements: ReplicaRequirements | None = None
    """What one replica of the workload needs, used to find clusters with room for it."""
    replicas: int = 0
    """Replicas the workload asks for. Defaults to 0."""
    components: list[Component] | None = None
    """The pod templates of a workload that has several, each with its replicas and needs."""
    clusters: list[TargetCluster] | None = None
    """The scheduler's result: the member clusters the workload runs on and the replicas of each."""
    placement: Placement | None = None
    """Where the workload may run, copied from the policy."""
    graceful_eviction_tasks: list[GracefulEvictionTask] | None = None
    """Clusters the workload is leaving; each is kept until the workload is healthy elsewhere or the task
    ends."""
    required_by: list[BindingSnapshot] | None = None
    """Bindings whose workloads refer to this one's resource; this one follows their clusters."""
    scheduler_name: str | None = None
    """Scheduler that schedules the binding, copied from the policy."""
    failover: FailoverBehavior | None = None
    """How the workload moves away from failed clusters and unhealthy copies, copied from the policy."""
    conflict_resolution: Literal["Abort", "Overwrite"] = "Abort"
    """What happens when the resource already exists in a member cluster: Abort or Overwrite, copied from the
    policy. Defaults to Abort."""
    reschedule_triggered_at: Time | None = None
    """When a rescheduling was asked for; a time after the last scheduling makes the scheduler run again."""
    suspension: BindingSuspension | None = None
    """Hold dispatching or scheduling of the binding."""
    preserve_resources_on_deletion: bool | None = None
    """When true, the resources stay in the member clusters when the template is deleted."""
    schedule_priority: BindingSchedulePriority | None = None
    """Place of the binding in the scheduling queue."""
    workload_affinity_groups: WorkloadAffinityGroups | None = None
    """The groups the workload belongs to for workload affinity and anti-affinity."""
    eviction_history: list[EvictionRecord] | None = None
    """Past evictions of the workload, kept after their tasks end (a fleetkeeper addition)."""

    def schedule_priority_value(self) -> int:
        """The scheduling priority (0 without ``schedulePriority``), as Karmada reads it."""
        return self.schedule_priority.priority if self.schedule_priority is not None else 0


class AggregatedStatusItem(Model):
    cluster_name: str
    """The member cluster this entry is about."""
    status: dict[str, Any] | None = None
    """The resource's status as reported by the cluster."""
    applied: bool = False
    """Whether the resource was applied to the cluster. Defaults to false."""
    applied_message: str | None = None
    """Why applying failed, when it did."""
    health: ResourceHealth | None = None
    """Health of the resource in the cluster: Healthy, Unhealthy or Unknown."""


class ResourceBindingStatus(Model):
    scheduler_observed_generation: int = 0
    """The binding's generation the scheduler last scheduled. Defaults to 0."""
    scheduler_observed_affinity_name: str | None = Field(default=None, alias="schedulerObservingAffinityName")
    """The cluster affinity group the scheduler last used."""
    last_scheduled_time: Time | None = None
    """When the binding was last scheduled."""
    conditions: list[Condition] | None = None
    """The binding's conditions, such as Scheduled and FullyApplied."""
    aggregated_status: list[AggregatedStatusItem] | None = None
    """The resource's status in each member cluster."""


class _Binding(Resource):
    spec: ResourceBindingSpec
    """The template, its schedule and what was copied from its policy."""
    status: ResourceBindingStatus = Field(default_factory=ResourceBindingStatus)
    """Where the scheduling stands and the resource's status in each cluster."""


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
    """The resources to create in the member cluster, as complete objects."""


class WorkSpec(Model):
    workload: WorkloadTemplate = Field(default_factory=WorkloadTemplate)
    """The resources to create in the member cluster."""
    suspend_dispatching: bool | None = None
    """When true, the resources are not created or updated in the member cluster."""
    preserve_resources_on_deletion: bool | None = None
    """When true, the resources stay in the member cluster when the Work is deleted."""


class ResourceIdentifier(Model):
    ordinal: int
    """Position of the resource in the manifests list."""
    group: str | None = None
    """API group of the resource; empty for the core group."""
    version: str
    """API version of the resource."""
    kind: str
    """Kind of the resource."""
    resource: str
    """Plural resource name, for example deployments."""
    namespace: str | None = None
    """Namespace of the resource; empty for a cluster-scoped one."""
    name: str
    """Name of the resource."""


class ManifestStatus(Model):
    identifier: ResourceIdentifier
    """Which resource of the manifests this is."""
    status: dict[str, Any] | None = None
    """The resource's status as reported by the member cluster."""
    health: ResourceHealth | None = None
    """Health of the resource: Healthy, Unhealthy or Unknown."""


class WorkStatus(Model):
    conditions: list[Condition] | None = None
    """The Work's conditions, such as Applied."""
    manifest_statuses: list[ManifestStatus] | None = None
    """The status of each resource in the member cluster."""


@register
class Work(Resource):
    """Manifests to apply to one member cluster (namespace ``karmada-es-<cluster>``)."""

    API_VERSION: ClassVar[str] = constants.WORK_V1ALPHA1
    KIND: ClassVar[str] = "Work"
    PLURAL: ClassVar[str] = "works"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("wk",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)

    spec: WorkSpec = Field(default_factory=WorkSpec)
    """The resources to create in the member cluster."""
    status: WorkStatus = Field(default_factory=WorkStatus)
    """Whether the resources were applied, and their status in the member cluster."""


__all__ = [
    "AggregatedStatusItem", "Binding", "BindingModel", "BindingSchedulePriority", "BindingSnapshot",
    "BindingSuspension", "ClusterResourceBinding", "Component", "ComponentReplicaRequirements",
    "EvictionRecord", "GracefulEvictionTask", "ManifestStatus", "NodeClaim", "ObjectReference",
    "ReplicaRequirements", "ResourceBinding", "ResourceBindingSpec", "ResourceBindingStatus",
    "ResourceIdentifier", "TargetCluster", "TargetComponent", "Work", "WorkSpec", "WorkStatus",
    "WorkloadAffinityGroups", "WorkloadTemplate", "binding_model", "template_stub",
]
