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


class ClusterConditionRequirement(Model):
    condition_type: str
    operator: Literal["Equal", "NotEqual"]
    condition_status: str


class DecisionMatch(Model):
    cluster_condition_match: ClusterConditionRequirement | None = None


class RemedySpec(Model):
    cluster_affinity: RemedyClusterAffinity | None = None
    decision_matches: list[DecisionMatch] | None = None
    actions: list[str] | None = None


@register
class Remedy(Resource):
    API_VERSION: ClassVar[str] = constants.REMEDY_API_VERSION
    KIND: ClassVar[str] = "Remedy"
    PLURAL: ClassVar[str] = "remedies"
    NAMESPACED: ClassVar[bool] = False
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: RemedySpec = Field(default_factory=RemedySpec)


__all__ = ["ClusterConditionRequirement", "DecisionMatch", "Remedy", "RemedyClusterAffinity", "RemedySpec"]
