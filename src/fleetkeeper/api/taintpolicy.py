"""ClusterTaintPolicy (``policy.karmada.io/v1alpha1``, cluster-scoped): taints from conditions.

When every ``addOnConditions`` entry matches a cluster's status conditions the policy's
``taints`` are added to the cluster; when every ``removeOnConditions`` entry matches they
are removed. Taints here carry no ``timeAdded`` (the cluster's copy gets one). Deleting
a policy never removes the taints it added.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.core import TaintEffect
from fleetkeeper.api.meta import ConditionStatus, Resource
from fleetkeeper.api.placement import ClusterAffinity
from fleetkeeper.api.scheme import register


class MatchCondition(Model):
    """``conditionType`` status ``In`` / ``NotIn`` ``statusValues`` (other operators never match)."""

    condition_type: str
    """Type of the cluster status condition to look at, for example Ready."""
    operator: str
    """In matches when the condition's status is one of the values; NotIn when it is none of them. Only In and
    NotIn are allowed."""
    status_values: list[ConditionStatus]
    """Condition statuses to compare with: True, False or Unknown."""


class PolicyTaint(Model):
    key: str
    """Key of the taint, a qualified name."""
    effect: TaintEffect
    """NoSchedule keeps new workloads off the cluster; NoExecute also moves running ones away. Only these two
    are allowed."""
    value: str | None = None
    """Value of the taint, optional; a valid label value."""


class ClusterTaintPolicySpec(Model):
    target_clusters: ClusterAffinity | None = None
    """The member clusters the policy watches. Without it, every cluster."""
    add_on_conditions: list[MatchCondition] | None = None
    """When all of these match a cluster's conditions, the taints are added to it."""
    remove_on_conditions: list[MatchCondition] | None = None
    """When all of these match a cluster's conditions, the taints are removed from it."""
    taints: list[PolicyTaint] = Field(min_length=1)
    """Taints added and removed. At least one; each key and effect pair only once."""


@register
class ClusterTaintPolicy(Resource):
    """Adds taints to member clusters, and removes them, as their status conditions change."""

    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "ClusterTaintPolicy"
    PLURAL: ClassVar[str] = "clustertaintpolicies"
    NAMESPACED: ClassVar[bool] = False
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: ClusterTaintPolicySpec
    """Which clusters are tainted, with what, and on which conditions."""


__all__ = ["ClusterTaintPolicy", "ClusterTaintPolicySpec", "MatchCondition", "PolicyTaint"]
