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
    """Name of a backend Service of the ingress."""
    clusters: list[str] | None = None
    """Member clusters the Service runs in."""


class MultiClusterIngressStatus(Model):
    load_balancer: dict[str, Any] | None = None
    """The load balancer's addresses, as in an Ingress status."""
    traffic_block_clusters: list[str] | None = None
    """Member clusters whose backends are taken out of the load balancer, from TrafficControl remedy actions.
    """
    service_locations: list[ServiceLocation] | None = None
    """The member clusters each backend Service runs in."""


@register
class MultiClusterIngress(Resource):
    """An Ingress whose backends run in several member clusters."""

    API_VERSION: ClassVar[str] = constants.NETWORKING_API_VERSION
    KIND: ClassVar[str] = "MultiClusterIngress"
    PLURAL: ClassVar[str] = "multiclusteringresses"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("mci",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)

    spec: dict[str, Any] = Field(default_factory=dict)
    """The ingress rules, written as the spec of a Kubernetes Ingress."""
    status: MultiClusterIngressStatus = Field(default_factory=MultiClusterIngressStatus)
    """The load balancer and where each backend runs."""


__all__ = ["MultiClusterIngress", "MultiClusterIngressStatus", "ServiceLocation"]
