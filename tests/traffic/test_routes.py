"""Route tables: computed from MCIs, bindings and Service templates; matched like Ingress."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.networking import MultiClusterIngress
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.traffic import routes
from fleetkeeper.traffic.routes import Backend, Route, RouteTable


def mci(name: str, spec: dict[str, Any], locations: dict[str, list[str]],
        blocked: list[str] | None = None) -> MultiClusterIngress:
    return MultiClusterIngress.from_dict({
        "metadata": {"name": name, "namespace": "default"}, "spec": spec,
        "status": {"serviceLocations": [{"name": s, "clusters": c} for s, c in locations.items()],
                   "trafficBlockClusters": blocked}})


def binding(service: str, addresses: dict[str, list[int]]) -> ResourceBinding:
    def status(ports: list[int]) -> dict[str, Any]:
        published = [{"port": p, "protocol": "TCP"} for p in ports]
        return {"loadBalancer": {"ingress": [{"ip": "127.0.0.1", "ports": published}]}}

    items = [{"clusterName": c, "applied": True, "status": status(ports)} for c, ports in addresses.items()]
    return ResourceBinding.from_dict({
        "metadata": {"name": f"{service}-service", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Service", "name": service,
                              "namespace": "default"}},
        "status": {"aggregatedStatus": items}})


def service(name: str, ports: list[dict[str, Any]]) -> Resource:
    return BUILTIN["Service"].from_dict({"metadata": {"name": name, "namespace": "default"},
                                         "spec": {"type": "LoadBalancer", "ports": ports}})


def path(p: str, svc: str, port: dict[str, Any], path_type: str = "Prefix") -> dict[str, Any]:
    return {"path": p, "pathType": path_type, "backend": {"service": {"name": svc, "port": port}}}


def test_backends_are_the_published_addresses_of_the_located_clusters() -> None:
    ingress = mci("shop", {"rules": [{"host": "shop.example.com", "http": {"paths": [
        path("/api", "api", {"name": "grpc"}), path("/", "web", {"number": 80})]}}]},
        {"api": ["member1", "member2", "member3"], "web": ["member2"]}, blocked=["member2"])
    bindings = {"default/api-service": binding("api", {"member1": [7001, 7002], "member2": [8001, 8002]}),
                "default/web-service": binding("web", {"member2": [9001]})}
    services = {"default/api": service("api", [{"name": "http", "port": 80}, {"name": "grpc", "port": 81}]),
                "default/web": service("web", [{"port": 80}])}
    table = routes.compute([ingress], bindings, services)
    assert table.routes == (
        Route("default/shop", "shop.example.com", "/api", "Prefix", "default/api", (
            Backend("member1", "127.0.0.1", 7002), Backend("member2", "127.0.0.1", 8002, blocked=True))),
        Route("default/shop", "shop.example.com", "/", "Prefix", "default/web", (
            Backend("member2", "127.0.0.1", 9001, blocked=True),)),
    )
    assert table.routes[0].serving == (Backend("member1", "127.0.0.1", 7002),)


def test_no_binding_or_no_published_address_means_no_backend() -> None:
    ingress = mci("shop", {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
                  {"web": ["member1"]})
    assert routes.compute([ingress], {}, {}).routes[0].backends == ()
    empty = {"default/web-service": binding("web", {"member1": []})}
    assert routes.compute([ingress], empty, {}).routes[0].backends == ()


def route(host: str, p: str, path_type: str = "Prefix", name: str = "") -> Route:
    return Route("default/x", host, p, path_type, name or f"{host}{p}", ())


TABLE = RouteTable(tuple(sorted([
    route("", "/"), route("", "/api"), route("", "/api/v1", "Exact", name="exact"),
    route("*.example.com", "/"),
    route("shop.example.com", "/"), route("", "/api/v1"),
], key=routes.precedence)))


@pytest.mark.parametrize(
    ("host", "target", "chosen"),
    [
        pytest.param("shop.example.com", "/x", "shop.example.com/", id="an exact host beats the rest"),
        pytest.param("SHOP.example.com:8080", "/", "shop.example.com/", id="hosts ignore case and the port"),
        pytest.param("blog.example.com", "/api", "*.example.com/", id="a wildcard host beats any host"),
        pytest.param("a.b.example.com", "/", "/", id="a wildcard matches exactly one more label"),
        pytest.param("other", "/api/v1", "exact", id="an exact path beats a prefix of the same path"),
        pytest.param("other", "/api/v1/x", "/api/v1", id="the longest prefix wins"),
        pytest.param("other", "/apis", "/", id="prefixes match whole path elements"),
        pytest.param("other", "/api?x=1", "/api", id="the query does not count"),
    ],
)
def test_matching(host: str, target: str, chosen: str) -> None:
    found = TABLE.match(host, target)
    assert found is not None and found.service == chosen


def test_no_route_matches_nothing() -> None:
    assert RouteTable((route("shop.example.com", "/"),)).match("other", "/") is None
