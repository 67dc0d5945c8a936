"""The routing table every traffic provider implements: pure, computed from API objects.

A :class:`RouteTable` is what a load balancer in front of the fleet must do, derived
from the control plane only:

* **routes** from each MultiClusterIngress's ``IngressSpec`` (rules, then the default
  backend — parsed by :func:`~fleetkeeper.controllers.multicluster_ingress_rules.paths`,
  the same parser the controller uses);
* **backends** per route: every cluster of the backend Service in the MCI's
  ``status.serviceLocations``, at the address the cluster's load balancer published
  for that Service — ``status.loadBalancer.ingress`` as Karmada reflects it into the
  Service binding's ``aggregatedStatus``. The Service port an MCI names is found in the
  Service template's ``spec.ports``, and the published port at the same index is used
  (the published ports follow ``spec.ports``);
* **blocked** marks the backends of the clusters in ``status.trafficBlockClusters``:
  they take no new requests. They stay in the table so a provider can keep them warm
  (HAProxy puts such servers in maintenance instead of removing them).

:meth:`RouteTable.match` picks the route for a request the way Ingress matching reads:
an exact host beats a wildcard host beats any host; then an ``Exact`` path beats a
``Prefix``; then the longest path wins. Prefixes match whole path elements (``/foo``
matches ``/foo`` and ``/foo/bar``, not ``/foobar``). :func:`precedence` is that order,
for providers that write it into their own configuration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fleetkeeper.api.meta import Resource
from fleetkeeper.api.networking import MultiClusterIngress
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.controllers import multicluster_ingress_rules as mci_rules


@dataclass(frozen=True, slots=True, order=True)
class Backend:
    """One cluster's address for a route's Service."""

    cluster: str
    host: str
    port: int
    blocked: bool = False


@dataclass(frozen=True, slots=True)
class Route:
    """Requests for ``host`` + ``path`` go to ``service`` in these backends."""

    ingress: str
    host: str
    path: str
    path_type: str
    service: str
    backends: tuple[Backend, ...]

    @property
    def serving(self) -> tuple[Backend, ...]:
        """The backends that take requests (not blocked)."""
        return tuple(b for b in self.backends if not b.blocked)

    def matches(self, host: str, path: str) -> bool:
        return host_matches(self.host, host) and path_matches(self.path, self.path_type, path)


def host_matches(pattern: str, host: str) -> bool:
    """Ingress host matching: empty = any, ``*.a.b`` = exactly one more label, else equal."""
    host = host.rsplit(":", 1)[0].lower() if not host.startswith("[") else host.lower()
    if not pattern:
        return True
    pattern = pattern.lower()
    if pattern.startswith("*."):
        suffix = pattern[1:]
        return host.endswith(suffix) and "." not in host[: -len(suffix)]
    return host == pattern


def path_matches(pattern: str, path_type: str, path: str) -> bool:
    """Exact paths match exactly; prefixes match whole path elements."""
    path = path.split("?", 1)[0] or "/"
    if path_type == mci_rules.EXACT:
        return path == pattern
    prefix = pattern.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def precedence(route: Route) -> tuple[int, int, int]:
    """Sort key: the route to try first sorts first."""
    host_rank = 0 if route.host and not route.host.startswith("*.") else (1 if route.host else 2)
    exact = 0 if route.path_type == mci_rules.EXACT else 1
    return host_rank, exact, -len(route.path.rstrip("/"))


@dataclass(frozen=True, slots=True)
class RouteTable:
    """All routes, in precedence order."""

    routes: tuple[Route, ...] = ()

    def match(self, host: str, path: str) -> Route | None:
        """The route a request for ``host`` + ``path`` takes, or None."""
        return next((route for route in self.routes if route.matches(host, path)), None)


def published_addresses(binding: ResourceBinding | None) -> dict[str, tuple[str, list[int]]]:
    """Per cluster, the load-balancer address a Service binding's aggregated status carries."""
    out: dict[str, tuple[str, list[int]]] = {}
    for item in (binding.status.aggregated_status or ()) if binding is not None else ():
        ingress = ((item.status or {}).get("loadBalancer") or {}).get("ingress") or []
        for entry in ingress:
            address = entry.get("ip") or entry.get("hostname")
            if address:
                ports = [int(p["port"]) for p in entry.get("ports") or () if isinstance(p.get("port"), int)]
                out[item.cluster_name] = (str(address), ports)
                break
    return out


def port_index(service: Resource | None, port: int | str | None) -> int:
    """The index of the Service port an MCI backend names in the template's ``spec.ports``."""
    ports: list[Any] = ((service.to_dict().get("spec") or {}).get("ports") or []) if service else []
    for index, entry in enumerate(ports):
        if port is not None and port in (entry.get("port"), entry.get("name")):
            return index
    return 0


def compute(mcis: Iterable[MultiClusterIngress], bindings: Mapping[str, ResourceBinding],
            services: Mapping[str, Resource]) -> RouteTable:
    """The table for ``mcis``; ``bindings`` and ``services`` (templates) by ``ns/name`` key."""
    routes: list[Route] = []
    for mci in sorted(mcis, key=lambda m: m.key):
        locations = {loc.name: loc.clusters or [] for loc in mci.status.service_locations or ()}
        blocked = set(mci.status.traffic_block_clusters or ())
        for path in mci_rules.paths(mci.spec):
            key = f"{mci.namespace}/{path.service}"
            addresses = published_addresses(bindings.get(f"{mci.namespace}/"
                                                         f"{mci_rules.service_binding_name(path.service)}"))
            index = port_index(services.get(key), path.port)
            backends = []
            for cluster in sorted(locations.get(path.service, ())):
                if cluster in addresses and index < len(addresses[cluster][1]):
                    host, ports = addresses[cluster]
                    backends.append(Backend(cluster, host, ports[index], blocked=cluster in blocked))
            routes.append(Route(mci.key, path.host, path.path, path.path_type, key, tuple(backends)))
    routes.sort(key=precedence)  # stable: equal routes keep the MCI and rule order
    return RouteTable(tuple(routes))


__all__ = [
    "Backend", "Route", "RouteTable", "compute", "host_matches", "path_matches", "port_index", "precedence",
    "published_addresses",
]
