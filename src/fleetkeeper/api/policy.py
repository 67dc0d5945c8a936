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
    json_path: str


class StatePreservation(Model):
    rules: list[StatePreservationRule]


class DecisionConditions(Model):
    """When an unhealthy application is failed over: after ``tolerationSeconds`` (CRD default 300).

    ``healthyState`` is *additive* (the application-failover proposal's example shape): the
    health states whose time counts toward the toleration — ``[Unhealthy]`` by default;
    listing ``Unknown`` makes time with no health report count too (otherwise it pauses
    the clock)."""

    toleration_seconds: int = constants.DEFAULT_TOLERATION_SECONDS
    healthy_state: list[Literal["Unhealthy", "Unknown"]] | None = None


class PreConditions(Model):
    """*Additive* (fleetkeeper): when application failover starts to watch a workload.

    ``delaySeconds``: only after this long since the status was first collected;
    ``healthyState: Healthy``: only once the workload has been Healthy at least once."""

    delay_seconds: int | None = None
    healthy_state: Literal["Healthy"] | None = None


class ApplicationFailoverBehavior(Model):
    """Fail over a workload that stays Unhealthy on a cluster past the toleration.

    ``gracePeriodSeconds`` applies only to ``Gracefully`` (admission defaults it to 600).
    ``preConditions`` and ``blockPredecessorSeconds`` (default 600: how long the cluster a
    workload was evicted from stays unschedulable for it) are *additive* fleetkeeper fields."""

    pre_conditions: PreConditions | None = None
    decision_conditions: DecisionConditions
    purge_mode: PurgeMode = "Gracefully"
    grace_period_seconds: int | None = None
    block_predecessor_seconds: int | None = None
    state_preservation: StatePreservation | None = None

    def block_seconds(self) -> int:
        """``blockPredecessorSeconds``, or its default when unset (not written into the object,
        so a policy read back is one Karmada's own schema accepts)."""
        if self.block_predecessor_seconds is None:
            return constants.DEFAULT_BLOCK_PREDECESSOR_SECONDS
        return self.block_predecessor_seconds


class ClusterFailoverBehavior(Model):
    """How a workload leaves a cluster tainted NoExecute."""

    purge_mode: ClusterPurgeMode = "Gracefully"
    state_preservation: StatePreservation | None = None


class FailoverBehavior(Model):
    """``nil`` application = application failover off; ``nil`` cluster = controller default."""

    application: ApplicationFailoverBehavior | None = None
    cluster: ClusterFailoverBehavior | None = None


class SuspendClusters(Model):
    cluster_names: list[str] | None = None


class Suspension(Model):
    """Hold dispatching to all clusters (``dispatching: true``) or to some (``dispatchingOnClusters``)."""

    dispatching: bool | None = None
    dispatching_on_clusters: SuspendClusters | None = None


class SchedulePriority(Model):
    priority_class_source: Literal["KubePriorityClass"]
    priority_class_name: str


class PropagationSpec(Model):
    """The shared spec of PropagationPolicy and ClusterPropagationPolicy."""

    resource_selectors: list[ResourceSelector] = Field(min_length=1)
    association: bool = False
    propagate_deps: bool = False
    placement: Placement = Field(default_factory=Placement)
    priority: int = 0
    preemption: Literal["Always", "Never"] = "Never"
    dependent_overrides: list[str] | None = None
    scheduler_name: str = constants.DEFAULT_SCHEDULER_NAME
    failover: FailoverBehavior | None = None
    conflict_resolution: Literal["Abort", "Overwrite"] = "Abort"
    activation_preference: Literal["Lazy"] | None = None
    suspension: Suspension | None = None
    preserve_resources_on_deletion: bool | None = None
    schedule_priority: SchedulePriority | None = None


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
