"""Where a workload may run: ``Placement`` and the selectors it is built from.

``policy.karmada.io/v1alpha1`` sub-types shared by propagation policies (and copied
verbatim onto bindings), ClusterTaintPolicy (``targetClusters``) and override rules
(``targetCluster``): :class:`ResourceSelector`, :class:`ClusterAffinity` and the
scheduling knobs (tolerations, spread constraints, replica scheduling).

Defaults here are the CRD defaults, which Karmada's API server applies on every write
(``replicaSchedulingType: Divided`` when ``replicaScheduling`` is present). Webhook
defaults (``minGroups: 1``, ``replicaDivisionPreference: Weighted`` …) are applied by
:func:`fleetkeeper.api.admission.admit`, because they depend on other fields. A ``None``
list means "not set", which Karmada sometimes treats differently from an empty list.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleetkeeper.api.base import Model
from fleetkeeper.api.core import NodeSelectorRequirement, Toleration
from fleetkeeper.api.meta import LabelSelector

SpreadField = Literal["cluster", "region", "zone", "provider"]
ReplicaSchedulingType = Literal["Duplicated", "Divided"]
ReplicaDivisionPreference = Literal["Aggregated", "Weighted"]
DynamicWeightFactor = Literal["AvailableReplicas"]


class ResourceSelector(Model):
    """Which resource templates a policy claims.

    ``name`` set: match by name only (``labelSelector`` ignored); otherwise the label
    selector (``None`` = every object of the kind)."""

    api_version: str = Field(alias="apiVersion")
    """API version of the resource templates to select, for example apps/v1."""
    kind: str
    """Kind of the resource templates to select, for example Deployment."""
    namespace: str | None = None
    """Namespace of the templates to select. In a namespaced policy it must be the policy's own namespace, and
    it defaults to it when left empty."""
    name: str | None = None
    """Name of the one template to select. When set, the label selector is ignored."""
    label_selector: LabelSelector | None = None
    """Labels the templates must carry. Used only when name is empty; when both are empty every template of
    the kind matches."""


class FieldSelector(Model):
    """Cluster fields to match: keys ``provider``, ``region``, ``zone``; operators ``In``/``NotIn``."""

    match_expressions: list[NodeSelectorRequirement] | None = None
    """Requirements on the cluster's provider, region or zone, all of which must hold. Only the keys provider,
    region and zone and the operators In and NotIn are allowed."""


class ClusterAffinity(Model):
    """A cluster filter: all clauses ANDed, ``exclude`` first; empty matches every cluster."""

    label_selector: LabelSelector | None = None
    """Labels a member cluster must carry to be selected."""
    field_selector: FieldSelector | None = None
    """Requirements on the member cluster's provider, region or zone."""
    cluster_names: list[str] | None = None
    """Names of the member clusters to select. An empty list does not restrict the choice."""
    exclude: list[str] | None = None
    """Names of member clusters never to select, whatever the other clauses say."""


class OverflowClusterAffinity(ClusterAffinity):
    affinity_name: str = Field(min_length=1, max_length=32)
    """Name of this overflow group: 1 to 32 characters, a qualified name, unique within the term and different
    from the term's own name."""


class ClusterAffinityTerm(ClusterAffinity):
    """One named group of ``placement.clusterAffinities`` (tried in order)."""

    affinity_name: str = Field(min_length=1, max_length=32)
    """Name of this group of clusters: 1 to 32 characters, a qualified name, unique in the placement. The
    binding's status reports the group the scheduler is using."""
    overflow_affinities: list[OverflowClusterAffinity] | None = None
    """Further groups of clusters that receive the replicas this group cannot hold. Allowed only with dynamic-
    weight or aggregated replica division, and only beside a non-empty affinity."""


class SpreadConstraint(Model):
    spread_by_field: SpreadField | None = None
    """Cluster property to spread over: cluster, region, zone or provider. Cannot be set together with
    spreadByLabel; with neither set, admission spreads by cluster. When any field constraint is given, one
    of them must spread by cluster, and each field may appear only once."""
    spread_by_label: str | None = None
    """Cluster label whose values form the groups to spread over. Cannot be set together with spreadByField.
    """
    max_groups: int = 0
    """Most groups the workload may be spread over. Must not be negative, and when greater than 0 must not
    be lower than minGroups."""
    min_groups: int = 0
    """Fewest groups the workload must be spread over; scheduling fails when fewer are available. Admission
    turns 0 into 1. Must not be negative."""


class StaticClusterWeight(Model):
    target_cluster: ClusterAffinity
    """The member clusters this weight applies to."""
    weight: int = Field(ge=1)
    """Relative share of the replicas the selected clusters receive. At least 1."""


class ClusterPreferences(Model):
    """``weightPreference``: static weights, or ``dynamicWeight`` (then static weights are ignored)."""

    static_weight_list: list[StaticClusterWeight] | None = None
    """Fixed weights per group of clusters. A cluster no entry selects gets no replicas (when no entry
    selects any cluster, all share equally); one that several entries select takes the largest weight."""
    dynamic_weight: DynamicWeightFactor | None = None
    """Factor that sets each cluster's weight when the replicas are divided. The only value is
    AvailableReplicas: weights follow how many replicas each cluster can still hold. When set, the static
    weight list is ignored."""


class ReplicaSchedulingStrategy(Model):
    replica_scheduling_type: ReplicaSchedulingType = "Divided"
    """Duplicated runs the full replica count on every selected cluster; Divided splits the replicas among
    them. Defaults to Divided."""
    replica_division_preference: ReplicaDivisionPreference | None = None
    """How Divided replicas are split: Aggregated packs them into as few clusters as possible, Weighted
    follows the weight preference. Admission sets Weighted when Divided is chosen and this is empty."""
    weight_preference: ClusterPreferences | None = None
    """The weights used when the division preference is Weighted. Without it, every selected cluster gets an
    equal share."""


class WorkloadAffinityTerm(Model):
    group_by_label_key: str
    """Label key of the workload whose value names its group. Must be a qualified label key."""


class WorkloadAffinity(Model):
    """Alpha (gate ``WorkloadAffinity``): co-locate / separate workloads by a label's value."""

    affinity: WorkloadAffinityTerm | None = None
    """Place this workload on the clusters that already run workloads of the same group."""
    anti_affinity: WorkloadAffinityTerm | None = None
    """Keep this workload away from the clusters that run workloads of the same group. Its label key must
    differ from the affinity's."""


class Placement(Model):
    """Where to schedule: candidate clusters, tolerations, spreading, replica division."""

    cluster_affinity: ClusterAffinity | None = None
    """The member clusters the workload may be scheduled to. Cannot be set together with clusterAffinities."""
    cluster_affinities: list[ClusterAffinityTerm] | None = None
    """Groups of member clusters tried in order: the scheduler uses the first group that can hold the workload
    and moves to the next when it cannot. Cannot be set together with clusterAffinity."""
    cluster_tolerations: list[Toleration] | None = None
    """Cluster taints the workload tolerates. A cluster with a NoSchedule or NoExecute taint that is not
    tolerated is not chosen."""
    spread_constraints: list[SpreadConstraint] | None = None
    """How many clusters, regions, zones or providers the workload is spread over."""
    replica_scheduling: ReplicaSchedulingStrategy | None = None
    """How replicas are assigned to the selected clusters. Without it every selected cluster runs the full
    replica count (Duplicated)."""
    workload_affinity: WorkloadAffinity | None = None
    """Co-locate or separate workloads by the value of one of their labels (alpha)."""

    def replica_scheduling_type(self) -> ReplicaSchedulingType:
        """``Duplicated`` when ``replicaScheduling`` is absent (Karmada's rule)."""
        strategy = self.replica_scheduling
        return "Duplicated" if strategy is None else strategy.replica_scheduling_type


__all__ = [
    "ClusterAffinity", "ClusterAffinityTerm", "ClusterPreferences", "DynamicWeightFactor", "FieldSelector",
    "OverflowClusterAffinity", "Placement", "ReplicaDivisionPreference", "ReplicaSchedulingStrategy",
    "ReplicaSchedulingType", "ResourceSelector", "SpreadConstraint", "SpreadField", "StaticClusterWeight",
    "WorkloadAffinity", "WorkloadAffinityTerm",
]
