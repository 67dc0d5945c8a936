"""MultiClusterIngress (``networking.karmada.io/v1alpha1``, namespaced, short ``mci``).

``spec`` is a Kubernetes ``IngressSpec``, kept as raw JSON (fleetkeeper only reads
backends from it). ``status`` is an ``IngressStatus`` (``loadBalancer``) plus where each
backend Service runs (``serviceLocations``) and which clusters' backends must be taken
out of the load balancer (``trafficBlockClusters``, written from remedy actions).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register


class ServiceLocation(Model):
    name: str
    clusters: list[str] | None = None


class MultiClusterIngressStatus(Model):
    load_balancer: dict[str, Any] | None = None
    traffic_block_clusters: list[str] | None = None
    service_locations: list[ServiceLocation] | None = None


@register
class MultiClusterIngress(Resource):
    API_VERSION: ClassVar[str] = constants.NETWORKING_API_VERSION
    KIND: ClassVar[str] = "MultiClusterIngress"
    PLURAL: ClassVar[str] = "multiclusteringresses"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("mci",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)

    spec: dict[str, Any] = Field(default_factory=dict)
    status: MultiClusterIngressStatus = Field(default_factory=MultiClusterIngressStatus)


__all__ = ["MultiClusterIngress", "MultiClusterIngressStatus", "ServiceLocation"]
