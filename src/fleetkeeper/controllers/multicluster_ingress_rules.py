"""MultiClusterIngress decisions: backends, where they run, which clusters to take out.

Pure functions over API values; the controller in
:mod:`~fleetkeeper.controllers.multicluster_ingress` reads caches and writes, and the
traffic providers (:mod:`fleetkeeper.traffic`) reuse :func:`paths` to build their
routes, so the controller and the load balancers read an ``IngressSpec`` one way.

* :func:`paths` — the routes of an ``IngressSpec`` in match order: every rule's HTTP
  paths (host, path, pathType, backend Service and port), then ``defaultBackend`` as a
  catch-all. Resource backends (no Service) are not routes.
* :func:`service_locations` — multicluster-cloud-provider's rule: for each backend
  Service name (sorted), the clusters of its ResourceBinding (``<svc>-service``):
  ``spec.clusters`` plus the clusters of ``spec.requiredBy`` (a Service propagated as a
  dependency), sorted; a Service without a binding is left out.
* :func:`traffic_block_clusters` — the Remedy proposal's rule: the clusters whose
  ``status.remedyActions`` hold ``TrafficControl`` and which hold a backend, sorted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.networking import MultiClusterIngress, MultiClusterIngressStatus, ServiceLocation
from fleetkeeper.api.work import ResourceBinding

SERVICE_KIND = "Service"

#: how a path is matched (``networking.k8s.io/v1`` pathType); ``ImplementationSpecific`` = Prefix here
PREFIX, EXACT, IMPLEMENTATION_SPECIFIC = "Prefix", "Exact", "ImplementationSpecific"


@dataclass(frozen=True, slots=True)
class IngressPath:
    """One route of an IngressSpec: requests for ``host`` + ``path`` go to ``service:port``.

    ``host`` is ``""`` for any host (it may also be a ``*.example.com`` wildcard);
    ``port`` is the Service port number or name (``None`` when the backend names none).
    """

    host: str
    path: str
    path_type: str
    service: str
    port: int | str | None


def _service_backend(backend: Any) -> tuple[str, int | str | None] | None:
    if not isinstance(backend, dict):
        return None
    service = backend.get("service")
    if not isinstance(service, dict) or not service.get("name"):
        return None
    port = service.get("port") or {}
    number = port.get("number") if isinstance(port, dict) else None
    name = port.get("name") if isinstance(port, dict) else None
    return str(service["name"]), (int(number) if isinstance(number, int) else (str(name) if name else None))


def paths(spec: Mapping[str, Any]) -> list[IngressPath]:
    """The Service routes of ``spec`` in match order (rules as written, then the default)."""
    out: list[IngressPath] = []
    for rule in spec.get("rules") or ():
        if not isinstance(rule, dict):
            continue
        host = str(rule.get("host") or "")
        for item in (rule.get("http") or {}).get("paths") or ():
            target = _service_backend(item.get("backend")) if isinstance(item, dict) else None
            if target is None:
                continue
            path = str(item.get("path") or "/")
            out.append(IngressPath(host, path, str(item.get("pathType") or PREFIX), *target))
    default = _service_backend(spec.get("defaultBackend"))
    if default is not None:
        out.append(IngressPath("", "/", PREFIX, *default))
    return out


def backend_services(spec: Mapping[str, Any]) -> list[str]:
    """The names of the Services an IngressSpec routes to, sorted and unique."""
    return sorted({p.service for p in paths(spec)})


def service_binding_name(service: str) -> str:
    """The ResourceBinding of a Service template (``<name>-service``)."""
    return constants.binding_name(SERVICE_KIND, service)


def binding_clusters(binding: ResourceBinding) -> list[str]:
    """The clusters a binding places its resource on: scheduled plus required-by, sorted."""
    names = {target.name for target in binding.spec.clusters or ()}
    for snapshot in binding.spec.required_by or ():
        names.update(target.name for target in snapshot.clusters or ())
    return sorted(names)


def service_locations(mci: MultiClusterIngress,
                      bindings: Mapping[str, ResourceBinding]) -> list[ServiceLocation] | None:
    """``status.serviceLocations``: each backend Service with a binding (``bindings`` by
    binding name, in the MCI's namespace) and its clusters; ``None`` when there is none."""
    out: list[ServiceLocation] = []
    for service in backend_services(mci.spec):
        binding = bindings.get(service_binding_name(service))
        if binding is None:
            continue
        out.append(ServiceLocation(name=service, clusters=binding_clusters(binding) or None))
    return out or None


def traffic_controlled(cluster: Cluster) -> bool:
    """Whether a Remedy asks to take ``cluster``'s traffic out (``TrafficControl``)."""
    return constants.REMEDY_ACTION_TRAFFIC_CONTROL in (cluster.status.remedy_actions or ())


def traffic_block_clusters(locations: Iterable[ServiceLocation] | None,
                           clusters: Iterable[Cluster]) -> list[str] | None:
    """``status.trafficBlockClusters``: controlled clusters holding a backend; ``None`` when none."""
    hosting = {name for location in locations or () for name in location.clusters or ()}
    blocked = {c.name for c in clusters if c.name in hosting and traffic_controlled(c)}
    return sorted(blocked) or None


def desired_status(status: MultiClusterIngressStatus, locations: list[ServiceLocation] | None,
                   blocked: list[str] | None) -> MultiClusterIngressStatus:
    """``status`` with the two fields this controller owns set (``loadBalancer`` kept)."""
    return status.model_copy(update={"service_locations": locations, "traffic_block_clusters": blocked})


def block_changes(before: list[str] | None, after: list[str] | None) -> tuple[list[str], list[str]]:
    """The clusters newly blocked and newly restored between two ``trafficBlockClusters``."""
    old, new = set(before or ()), set(after or ())
    return sorted(new - old), sorted(old - new)


__all__ = [
    "EXACT", "IMPLEMENTATION_SPECIFIC", "PREFIX", "IngressPath", "backend_services", "binding_clusters",
    "block_changes", "desired_status", "paths", "service_binding_name", "service_locations",
    "traffic_block_clusters", "traffic_controlled",
]
