"""A member cluster's API server: Kubernetes' kinds only (no Karmada group, no cluster proxy), its
own namespaces, its one token, the CRDs it is given served in its own scheme, its version and health."""

from __future__ import annotations

from typing import Any

from fleetkeeper.api.scheme import SCHEME, GroupKind
from fleetkeeper.apiserver.health import Check
from fleetkeeper.apiserver.state import ServerState
from fleetkeeper.clock import VirtualClock

from .member_api import TABLE, member_api

SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api"
WIDGETS = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.io"},
           "spec": {"group": "example.io", "scope": "Namespaced",
                    "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": SCHEMA}]}}


def test_a_member_serves_kubernetes_kinds_only_and_no_cluster_proxy() -> None:
    clock = VirtualClock()

    async def main() -> dict[str, Any]:
        async with member_api(clock) as member:
            http = member.http
            return {
                "groups": [g["name"] for g in (await http.get("/apis")).json()["groups"]],
                "core": {r["name"] for r in (await http.get("/api/v1")).json()["resources"]},
                "openapi": sorted((await http.get("/openapi/v3")).json()["paths"]),
                "clusters": (await http.get("/apis/cluster.karmada.io/v1alpha1/clusters")).status_code,
                "proxy": (await http.get(PROXY)).status_code,
                "namespaces": [n["metadata"]["name"]
                               for n in (await http.get("/api/v1/namespaces")).json()["items"]],
                "version": (await http.get("/version")).json(),
            }

    got = clock.run(main())
    assert {"apps", "batch", "rbac.authorization.k8s.io", "apiextensions.k8s.io"} <= set(got["groups"])
    assert not [g for g in got["groups"] if g.endswith("karmada.io") or g == "fleetkeeper.io"]
    assert {"pods", "pods/status", "nodes", "services", "events", "namespaces"} <= got["core"]
    assert not [p for p in got["openapi"] if "karmada" in p or "fleetkeeper" in p]
    assert "apis/apps/v1" in got["openapi"]
    assert got["clusters"] == 404 and got["proxy"] == 404
    assert sorted(got["namespaces"]) == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert (got["version"]["gitVersion"], got["version"]["minor"]) == ("v1.31.0", "31")


def test_a_members_token_is_its_admin_and_no_rbac_is_written_into_it() -> None:
    clock = VirtualClock()

    async def main() -> tuple[int, int, int, int, list[str], list[str]]:
        async with member_api(clock) as member:
            http = member.http
            anonymous = (await http.get("/api/v1/pods", headers={"Authorization": ""})).status_code
            wrong = (await http.get("/api/v1/pods", headers={"Authorization": "Bearer nope"})).status_code
            health = (await http.get("/healthz", headers={"Authorization": ""})).status_code
            pods = (await http.get("/api/v1/pods")).status_code
            roles = (await http.get("/apis/rbac.authorization.k8s.io/v1/clusterroles")).json()["items"]
            secrets = (await http.get("/api/v1/secrets")).json()["items"]
            return anonymous, wrong, health, pods, [r["metadata"]["name"] for r in roles], \
                [s["metadata"]["name"] for s in secrets]

    anonymous, wrong, health, pods, roles, secrets = clock.run(main())
    assert (anonymous, wrong, health, pods) == (401, 401, 200, 200)
    assert roles == [] and secrets == []


def test_a_crd_given_to_a_member_is_served_there_and_not_by_the_plane() -> None:
    clock = VirtualClock()

    async def main() -> tuple[int, int, list[str], int]:
        async with member_api(clock) as member:
            http = member.http
            created = (await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                       json=WIDGETS)).status_code
            widget = {"apiVersion": "example.io/v1", "kind": "Widget",
                      "metadata": {"name": "w1", "namespace": "default"}, "spec": {"size": 3}}
            made = (await http.post("/apis/example.io/v1/namespaces/default/widgets",
                                    json=widget)).status_code
            groups = [g["name"] for g in (await http.get("/apis")).json()["groups"]]
            deleted = (await http.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                         "widgets.example.io")).status_code
            return created, made, groups, deleted

    created, made, groups, deleted = clock.run(main())
    assert (created, made, deleted) == (201, 201, 200)
    assert "example.io" in groups
    assert SCHEME.by_plural("example.io", "v1", "widgets") is None


def _gadgets(scope: str, plural: str, **version: Any) -> dict[str, Any]:
    """A CRD of ``Gadget.pair.example.io`` with ``scope`` and ``plural``."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.pair.example.io"},
            "spec": {"group": "pair.example.io", "scope": scope,
                     "names": {"kind": "Gadget", "plural": plural},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": SCHEMA,
                                   **version}]}}


def test_two_members_given_one_kind_with_another_scope_and_plural_serve_each_their_own() -> None:
    clock = VirtualClock()
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    size = {"additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}

    def gadget(name: str, namespace: str | None = None) -> dict[str, Any]:
        meta = {"name": name, **({"namespace": namespace} if namespace else {})}
        return {"apiVersion": "pair.example.io/v1", "kind": "Gadget", "metadata": meta, "spec": {"size": 3}}

    async def main() -> dict[str, Any]:
        async with member_api(clock) as one, member_api(clock) as two:
            assert (await one.http.post(crds, json=_gadgets("Cluster", "rigs", **size))).status_code == 201
            assert (await two.http.post(crds, json=_gadgets("Namespaced", "gadgets"))).status_code == 201
            made = await one.http.post("/apis/pair.example.io/v1/rigs", json=gadget("g1"))
            theirs = await two.http.post("/apis/pair.example.io/v1/namespaces/default/gadgets",
                                         json=gadget("g1", "default"))
            table = (await one.http.get("/apis/pair.example.io/v1/rigs", headers=TABLE)).json()
            assert (await two.http.delete(f"{crds}/gadgets.pair.example.io")).status_code == 200
            again = await one.http.post("/apis/pair.example.io/v1/rigs", json=gadget("g2"))
            return {"made": (made.status_code, made.json()["metadata"].get("namespace")),
                    "theirs": (theirs.status_code, theirs.json()["metadata"].get("namespace")),
                    "columns": [c["name"] for c in table["columnDefinitions"]],
                    "again": (again.status_code, again.json()["metadata"].get("namespace")),
                    "one": [g["metadata"]["name"]
                            for g in (await one.http.get("/apis/pair.example.io/v1/rigs")).json()["items"]]}

    found = clock.run(main())
    assert found["made"] == (201, None) and found["again"] == (201, None), "cluster-scoped on the first"
    assert found["theirs"] == (201, "default"), "namespaced on the second"
    assert found["columns"] == ["Name", "Size"], "the first member's printer columns"
    assert found["one"] == ["g1", "g2"]
    assert SCHEME.by_group_kind(GroupKind("pair.example.io", "Gadget")) is None


def test_a_members_health_checks_fail_every_health_endpoint() -> None:
    clock = VirtualClock()
    unhealthy = {"now": False}

    async def member_check(state: ServerState) -> str | None:
        return "the member is unhealthy" if unhealthy["now"] else None

    async def main() -> list[int]:
        async with member_api(clock, health=(Check("member", member_check),)) as member:
            codes = [(await member.http.get(path)).status_code for path in ("/readyz", "/livez")]
            unhealthy["now"] = True
            codes += [(await member.http.get(path)).status_code for path in ("/readyz", "/livez", "/healthz")]
            codes.append((await member.http.get("/readyz/member")).status_code)
            return codes

    assert clock.run(main()) == [200, 200, 500, 500, 500, 500]
