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
    kind: str
    namespace: str | None = None
    name: str | None = None
    label_selector: LabelSelector | None = None


class FieldSelector(Model):
    """Cluster fields to match: keys ``provider``, ``region``, ``zone``; operators ``In``/``NotIn``."""

    match_expressions: list[NodeSelectorRequirement] | None = None


class ClusterAffinity(Model):
    """A cluster filter: all clauses ANDed, ``exclude`` first; empty matches every cluster."""

    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    cluster_names: list[str] | None = None
    exclude: list[str] | None = None


class OverflowClusterAffinity(ClusterAffinity):
    affinity_name: str = Field(min_length=1, max_length=32)


class ClusterAffinityTerm(ClusterAffinity):
    """One named group of ``placement.clusterAffinities`` (tried in order)."""

    affinity_name: str = Field(min_length=1, max_length=32)
    overflow_affinities: list[OverflowClusterAffinity] | None = None


class SpreadConstraint(Model):
    spread_by_field: SpreadField | None = None
    spread_by_label: str | None = None
    max_groups: int = 0
    min_groups: int = 0


class StaticClusterWeight(Model):
    target_cluster: ClusterAffinity
    weight: int = Field(ge=1)


class ClusterPreferences(Model):
    """``weightPreference``: static weights, or ``dynamicWeight`` (then static weights are ignored)."""

    static_weight_list: list[StaticClusterWeight] | None = None
    dynamic_weight: DynamicWeightFactor | None = None


class ReplicaSchedulingStrategy(Model):
    replica_scheduling_type: ReplicaSchedulingType = "Divided"
    replica_division_preference: ReplicaDivisionPreference | None = None
    weight_preference: ClusterPreferences | None = None


class WorkloadAffinityTerm(Model):
    group_by_label_key: str


class WorkloadAffinity(Model):
    """Alpha (gate ``WorkloadAffinity``): co-locate / separate workloads by a label's value."""

    affinity: WorkloadAffinityTerm | None = None
    anti_affinity: WorkloadAffinityTerm | None = None


class Placement(Model):
    """Where to schedule: candidate clusters, tolerations, spreading, replica division."""

    cluster_affinity: ClusterAffinity | None = None
    cluster_affinities: list[ClusterAffinityTerm] | None = None
    cluster_tolerations: list[Toleration] | None = None
    spread_constraints: list[SpreadConstraint] | None = None
    replica_scheduling: ReplicaSchedulingStrategy | None = None
    workload_affinity: WorkloadAffinity | None = None

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
