"""MultiClusterIngress rules: the routes of an IngressSpec, where backends run, what to block."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.networking import MultiClusterIngress, MultiClusterIngressStatus, ServiceLocation
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.controllers import multicluster_ingress_rules as rules


def mci(spec: dict[str, Any], status: dict[str, Any] | None = None) -> MultiClusterIngress:
    return MultiClusterIngress.from_dict({"metadata": {"name": "web", "namespace": "default"}, "spec": spec,
                                         "status": status or {}})


def backend(name: str, port: dict[str, Any] | None = None) -> dict[str, Any]:
    service: dict[str, Any] = {"name": name}
    if port is not None:
        service["port"] = port
    return {"service": service}


SPEC = {
    "defaultBackend": backend("fallback", {"name": "http"}),
    "rules": [
        {"host": "shop.example.com", "http": {"paths": [
            {"path": "/api", "pathType": "Prefix", "backend": backend("api", {"number": 8080})},
            {"path": "/", "pathType": "Exact", "backend": backend("web", {"number": 80})},
            {"path": "/s", "pathType": "Prefix", "backend": {"resource": {"kind": "Bucket", "name": "b"}}},
        ]}},
        {"http": {"paths": [{"backend": backend("web")}]}},
    ],
}


def binding(service: str, clusters: list[str], required_by: list[list[str]] | None = None) -> ResourceBinding:
    return ResourceBinding.from_dict({
        "metadata": {"name": f"{service}-service", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Service", "namespace": "default", "name": service},
            "clusters": [{"name": c} for c in clusters],
            "requiredBy": [{"name": f"dep{i}", "clusters": [{"name": c} for c in cs]}
                           for i, cs in enumerate(required_by or [])],
        },
    })


def cluster(name: str, actions: list[str] | None = None) -> Cluster:
    return Cluster.from_dict({"metadata": {"name": name}, "spec": {"syncMode": "Push"},
                              "status": {"remedyActions": actions}})


def test_paths_are_the_service_rules_in_order_then_the_default_backend() -> None:
    assert rules.paths(SPEC) == [
        rules.IngressPath("shop.example.com", "/api", "Prefix", "api", 8080),
        rules.IngressPath("shop.example.com", "/", "Exact", "web", 80),
        rules.IngressPath("", "/", "Prefix", "web", None),
        rules.IngressPath("", "/", "Prefix", "fallback", "http"),
    ]
    assert rules.backend_services(SPEC) == ["api", "fallback", "web"]
    assert rules.paths({}) == []


def test_service_locations_come_from_the_bindings_with_required_by() -> None:
    bindings = {
        "api-service": binding("api", ["member2", "member1"]),
        "web-service": binding("web", ["member1"], required_by=[["member3"], ["member1"]]),
        "fallback-service": binding("fallback", []),
    }
    assert rules.service_locations(mci(SPEC), bindings) == [
        ServiceLocation(name="api", clusters=["member1", "member2"]),
        ServiceLocation(name="fallback", clusters=None),
        ServiceLocation(name="web", clusters=["member1", "member3"]),
    ]


def test_a_service_without_a_binding_has_no_location() -> None:
    assert rules.service_locations(mci(SPEC), {"api-service": binding("api", ["member1"])}) == [
        ServiceLocation(name="api", clusters=["member1"])]
    assert rules.service_locations(mci(SPEC), {}) is None


LOCATIONS = [ServiceLocation(name="api", clusters=["member1", "member2"]),
             ServiceLocation(name="web", clusters=["member2"])]


@pytest.mark.parametrize(
    ("clusters", "blocked"),
    [
        pytest.param([cluster("member1"), cluster("member2")], None, id="no traffic control blocks nothing"),
        pytest.param([cluster("member1", ["TrafficControl"]), cluster("member2")], ["member1"],
                     id="a controlled cluster holding a backend is blocked"),
        pytest.param([cluster("member3", ["TrafficControl"])], None,
                     id="a controlled cluster without a backend is not"),
        pytest.param([cluster("member1", ["Other"])], None, id="other actions block nothing"),
        pytest.param([cluster("member2", ["TrafficControl"]), cluster("member1", ["TrafficControl"])],
                     ["member1", "member2"], id="blocked clusters are sorted"),
    ],
)
def test_traffic_block_clusters(clusters: list[Cluster], blocked: list[str] | None) -> None:
    assert rules.traffic_block_clusters(LOCATIONS, clusters) == blocked


def test_desired_status_keeps_the_load_balancer_field() -> None:
    status = MultiClusterIngressStatus.from_dict({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}})
    desired = rules.desired_status(status, LOCATIONS, ["member1"])
    assert desired.load_balancer == {"ingress": [{"ip": "1.2.3.4"}]}
    assert desired.traffic_block_clusters == ["member1"]
    assert desired.service_locations == LOCATIONS


def test_block_changes_name_the_newly_blocked_and_restored() -> None:
    assert rules.block_changes(["a", "b"], ["b", "c"]) == (["c"], ["a"])
    assert rules.block_changes(None, None) == ([], [])
