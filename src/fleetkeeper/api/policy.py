"""PropagationPolicy and ClusterPropagationPolicy (``policy.karmada.io/v1alpha1``).

A propagation policy claims resource templates (``resourceSelectors``) and says where
they run (``placement``, re-exported here from :mod:`fleetkeeper.api.placement`) and how
they fail over (``failover``). The other policy kinds of the group live in
:mod:`~fleetkeeper.api.override` and :mod:`~fleetkeeper.api.taintpolicy` and are
re-exported here. The resource detector copies most of the spec onto the
binding, so :class:`FailoverBehavior` and :class:`Suspension` are shared with
:mod:`fleetkeeper.api.work`.

Purge modes accept the seed spellings ``Immediately`` and ``Graciously`` on input and
store the current names ``Directly`` and ``Gracefully``.

fleetkeeper additions beyond Karmada (from the application-failover proposal, which
Karmada never built) are marked *additive* below: ``preConditions`` and
``blockPredecessorSeconds`` on :class:`ApplicationFailoverBehavior`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.override import ClusterOverridePolicy, OverridePolicy, OverrideSpec
from fleetkeeper.api.placement import (
    ClusterAffinity,
    ClusterAffinityTerm,
    ClusterPreferences,
    FieldSelector,
    OverflowClusterAffinity,
    Placement,
    ReplicaSchedulingStrategy,
    ResourceSelector,
    SpreadConstraint,
    StaticClusterWeight,
    WorkloadAffinity,
    WorkloadAffinityTerm,
)
from fleetkeeper.api.scheme import register
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy, ClusterTaintPolicySpec


def normalise_purge_mode(value: Any) -> Any:
    """Map the legacy spellings (``Immediately``, ``Graciously``) to today's names."""
    if isinstance(value, str):
        return constants.LEGACY_PURGE_MODES.get(value, value)
    return value


#: ``Directly`` | ``Gracefully`` | ``Never`` (legacy spellings normalised on input).
PurgeMode = Annotated[Literal["Directly", "Gracefully", "Never"], BeforeValidator(normalise_purge_mode)]
#: cluster failover allows only ``Directly`` | ``Gracefully``.
ClusterPurgeMode = Annotated[Literal["Directly", "Gracefully"], BeforeValidator(normalise_purge_mode)]
ResourceHealth = Literal["Healthy", "Unhealthy", "Unknown"]


class StatePreservationRule(Model):
    """Extract ``jsonPath`` from the reflected status into label ``aliasLabelName``."""

    alias_label_name: str
    """Label the extracted value is written to on the workload in the cluster it moves to. A qualified label
    key, unique among the rules."""
    json_path: str
    """JSONPath template that picks the value from the workload's status as reflected from the cluster it
    leaves, for example {.replicas}."""


class StatePreservation(Model):
    rules: list[StatePreservationRule]
    """Values to carry over, each read from the old status and written as a label. At least one."""


class DecisionConditions(Model):
    """When an unhealthy application is failed over: after ``tolerationSeconds`` (CRD default 300).

    ``healthyState`` is *additive* (the application-failover proposal's example shape): the
    health states whose time counts toward the toleration — ``[Unhealthy]`` by default;
    listing ``Unknown`` makes time with no health report count too (otherwise it pauses
    the clock)."""

    toleration_seconds: int = constants.DEFAULT_TOLERATION_SECONDS
    """Seconds the workload may stay unhealthy on a cluster before it is moved away. Defaults to 300; must not
    be negative."""
    healthy_state: list[Literal["Unhealthy", "Unknown"]] | None = None
    """Health states whose time counts toward the toleration: Unhealthy, Unknown, or both. Defaults to
    Unhealthy only, so time without a health report pauses the count."""


class PreConditions(Model):
    """*Additive* (fleetkeeper): when application failover starts to watch a workload.

    ``delaySeconds``: only after this long since the status was first collected;
    ``healthyState: Healthy``: only once the workload has been Healthy at least once."""

    delay_seconds: int | None = None
    """Seconds to wait after the workload's status was first collected before its health is watched. Must not
    be negative."""
    healthy_state: Literal["Healthy"] | None = None
    """Set to Healthy to watch the workload only after it has been healthy once."""


class ApplicationFailoverBehavior(Model):
    """Fail over a workload that stays Unhealthy on a cluster past the toleration.

    ``gracePeriodSeconds`` applies only to ``Gracefully`` (admission defaults it to 600).
    ``preConditions`` and ``blockPredecessorSeconds`` (default 600: how long the cluster a
    workload was evicted from stays unschedulable for it) are *additive* fleetkeeper fields."""

    pre_conditions: PreConditions | None = None
    """When failover starts to watch a workload's health (a fleetkeeper addition). Without it, watching starts
    at once."""
    decision_conditions: DecisionConditions
    """When an unhealthy workload is moved away from a cluster."""
    purge_mode: PurgeMode = "Gracefully"
    """How the workload is removed from the cluster it leaves: Directly removes it at once; Gracefully keeps
    it until the new copies are healthy or the grace period ends; Never keeps it until removed by hand.
    Defaults to Gracefully. The older spellings Immediately and Graciously are accepted."""
    grace_period_seconds: int | None = None
    """Longest time, in seconds, the old copy is kept with purgeMode Gracefully. Admission sets 600 when
    empty; allowed only with Gracefully and must be greater than 0."""
    block_predecessor_seconds: int | None = None
    """Seconds the cluster a workload was moved away from stays unschedulable for it (a fleetkeeper addition).
    Defaults to 600; must not be negative."""
    state_preservation: StatePreservation | None = None
    """Values to carry from the old copy's status to the new copies, as labels."""

    def block_seconds(self) -> int:
        """``blockPredecessorSeconds``, or its default when unset (not written into the object,
        so a policy read back is one Karmada's own schema accepts)."""
        if self.block_predecessor_seconds is None:
            return constants.DEFAULT_BLOCK_PREDECESSOR_SECONDS
        return self.block_predecessor_seconds


class ClusterFailoverBehavior(Model):
    """How a workload leaves a cluster tainted NoExecute."""

    purge_mode: ClusterPurgeMode = "Gracefully"
    """How the workload is removed from a failed cluster: Directly or Gracefully. Defaults to Gracefully. The
    older spellings Immediately and Graciously are accepted."""
    state_preservation: StatePreservation | None = None
    """Values to carry from the copy on the failed cluster to the new copies, as labels."""


class FailoverBehavior(Model):
    """``nil`` application = application failover off; ``nil`` cluster = controller default."""

    application: ApplicationFailoverBehavior | None = None
    """Move a workload that stays unhealthy on a cluster. Without it, application failover is off; with it,
    propagateDeps must be true."""
    cluster: ClusterFailoverBehavior | None = None
    """How workloads leave a cluster that failed. Without it, the controller's defaults apply."""


class SuspendClusters(Model):
    cluster_names: list[str] | None = None
    """Member clusters to which dispatching is held."""


class Suspension(Model):
    """Hold dispatching to all clusters (``dispatching: true``) or to some (``dispatchingOnClusters``)."""

    dispatching: bool | None = None
    """When true, changes are not dispatched to any member cluster. Cannot be combined with cluster names in
    dispatchingOnClusters."""
    dispatching_on_clusters: SuspendClusters | None = None
    """Hold dispatching to the named member clusters only."""


class SchedulePriority(Model):
    priority_class_source: Literal["KubePriorityClass"]
    """Where the priority class is looked up. The only value is KubePriorityClass: a Kubernetes PriorityClass
    of the plane."""
    priority_class_name: str
    """Name of the PriorityClass whose value orders the scheduling queue."""


class PropagationSpec(Model):
    """The shared spec of PropagationPolicy and ClusterPropagationPolicy."""

    resource_selectors: list[ResourceSelector] = Field(min_length=1)
    """The resource templates this policy applies to. At least one."""
    association: bool = False
    """Deprecated and not used; use propagateDeps instead. Defaults to false."""
    propagate_deps: bool = False
    """When true, the ConfigMaps, Secrets and other objects the workload refers to follow it to the same
    clusters. Defaults to false; must be true when application failover is set, and is set for
    ServiceImport selectors."""
    placement: Placement = Field(default_factory=Placement)
    """Where the selected templates are scheduled."""
    priority: int = 0
    """When several policies match a template, the one with the highest priority claims it. Defaults to 0."""
    preemption: Literal["Always", "Never"] = "Never"
    """Always lets this policy take templates from a policy of lower priority; Never does not. Defaults to
    Never. With Always, every resource selector must name its template."""
    dependent_overrides: list[str] | None = None
    """OverridePolicies that must exist before the templates are propagated."""
    scheduler_name: str = constants.DEFAULT_SCHEDULER_NAME
    """Scheduler that schedules the templates. Defaults to default-scheduler; cannot be changed later."""
    failover: FailoverBehavior | None = None
    """How workloads move away from failed clusters and unhealthy copies."""
    conflict_resolution: Literal["Abort", "Overwrite"] = "Abort"
    """What happens when the resource already exists in a member cluster: Abort stops and reports the
    conflict, Overwrite takes the resource over. Defaults to Abort."""
    activation_preference: Literal["Lazy"] | None = None
    """Lazy makes changes of this policy apply to a template only when the template itself next changes. Empty
    applies them at once."""
    suspension: Suspension | None = None
    """Hold dispatching of the selected templates to member clusters."""
    preserve_resources_on_deletion: bool | None = None
    """When true, the resources stay in the member clusters when the template is deleted."""
    schedule_priority: SchedulePriority | None = None
    """Where the scheduling priority of the selected templates comes from."""


@register
class PropagationPolicy(Resource):
    """Namespaced policy: claims templates of its own namespace."""

    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "PropagationPolicy"
    PLURAL: ClassVar[str] = "propagationpolicies"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("pp",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: PropagationSpec
    """What the policy selects, where it places it and how it fails over."""


@register
class ClusterPropagationPolicy(Resource):
    """Cluster-scoped policy: claims cluster-scoped templates and templates in any namespace."""

    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "ClusterPropagationPolicy"
    PLURAL: ClassVar[str] = "clusterpropagationpolicies"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("cpp",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: PropagationSpec
    """What the policy selects, where it places it and how it fails over."""


__all__ = [
    "ApplicationFailoverBehavior",
    "ClusterAffinity",
    "ClusterAffinityTerm",
    "ClusterFailoverBehavior",
    "ClusterOverridePolicy",
    "ClusterPreferences",
    "ClusterPropagationPolicy",
    "ClusterPurgeMode",
    "ClusterTaintPolicy",
    "ClusterTaintPolicySpec",
    "DecisionConditions",
    "FailoverBehavior",
    "FieldSelector",
    "OverflowClusterAffinity",
    "OverridePolicy",
    "OverrideSpec",
    "Placement",
    "PreConditions",
    "PropagationPolicy",
    "PropagationSpec",
    "PurgeMode",
    "ReplicaSchedulingStrategy",
    "ResourceHealth",
    "ResourceSelector",
    "SchedulePriority",
    "SpreadConstraint",
    "StatePreservation",
    "StatePreservationRule",
    "StaticClusterWeight",
    "SuspendClusters",
    "Suspension",
    "WorkloadAffinity",
    "WorkloadAffinityTerm",
    "normalise_purge_mode",
]
