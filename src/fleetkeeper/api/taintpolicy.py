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
    operator: str
    status_values: list[ConditionStatus]


class PolicyTaint(Model):
    key: str
    effect: TaintEffect
    value: str | None = None


class ClusterTaintPolicySpec(Model):
    target_clusters: ClusterAffinity | None = None
    add_on_conditions: list[MatchCondition] | None = None
    remove_on_conditions: list[MatchCondition] | None = None
    taints: list[PolicyTaint] = Field(min_length=1)


@register
class ClusterTaintPolicy(Resource):
    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "ClusterTaintPolicy"
    PLURAL: ClassVar[str] = "clustertaintpolicies"
    NAMESPACED: ClassVar[bool] = False
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: ClusterTaintPolicySpec


__all__ = ["ClusterTaintPolicy", "ClusterTaintPolicySpec", "MatchCondition", "PolicyTaint"]
