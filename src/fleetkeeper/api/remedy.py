"""Remedy (``remedy.karmada.io/v1alpha1``, cluster-scoped): actions for clusters in a bad state.

When a cluster's conditions match (``decisionMatches``, ORed), the remedy controller
lists the Remedy's ``actions`` in ``Cluster.status.remedyActions``; a traffic provider
acts on ``TrafficControl``. ``None`` and empty lists differ on purpose, as in Karmada:
an absent ``clusterAffinity`` selects every cluster while ``clusterAffinity: {}``
selects none; absent ``decisionMatches`` act at once while ``[]`` never does.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register


class RemedyClusterAffinity(Model):
    cluster_names: list[str] | None = None
    """Names of the member clusters the Remedy applies to. Empty applies it to none."""


class ClusterConditionRequirement(Model):
    condition_type: str
    """Type of the cluster condition to look at, for example Ready."""
    operator: Literal["Equal", "NotEqual"]
    """Equal matches when the condition's status is conditionStatus; NotEqual when it is not."""
    condition_status: str
    """Condition status to compare with: True, False or Unknown."""


class DecisionMatch(Model):
    cluster_condition_match: ClusterConditionRequirement | None = None
    """A requirement on one of the cluster's conditions."""


class RemedySpec(Model):
    cluster_affinity: RemedyClusterAffinity | None = None
    """The member clusters the Remedy applies to. Without it, every cluster; an empty one selects none."""
    decision_matches: list[DecisionMatch] | None = None
    """Cases in which the actions are taken; any one matching is enough. Without it, the actions are taken at
    once; an empty list never takes them."""
    actions: list[str] | None = None
    """Actions listed in the matching clusters' status, for example TrafficControl, which takes the cluster
    out of multi-cluster load balancing."""


@register
class Remedy(Resource):
    """Actions to take on member clusters whose conditions show a problem."""

    API_VERSION: ClassVar[str] = constants.REMEDY_API_VERSION
    KIND: ClassVar[str] = "Remedy"
    PLURAL: ClassVar[str] = "remedies"
    NAMESPACED: ClassVar[bool] = False
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: RemedySpec = Field(default_factory=RemedySpec)
    """Which clusters, in which state, get which actions."""


__all__ = ["ClusterConditionRequirement", "DecisionMatch", "Remedy", "RemedyClusterAffinity", "RemedySpec"]
