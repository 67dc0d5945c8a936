"""CustomResourceDefinitions written elsewhere are served too: stored before the server started, or
written by another server over the same store (replicas sharing etcd). And the documents derived
from them: discovery's ETag, OpenAPI from the CRD's schema, Tables from its printer columns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import orjson
import pytest

from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import CustomResourceDefinition
from fleetkeeper.api.crd import CRD
from fleetkeeper.apiserver import InProcessTransport, build_app
from fleetkeeper.clock import SystemClock

from .crd_data import CLUSTER_WIDE, CRDS, GUESTBOOKS, guestbook, guestbook_crd, rack, rack_crd
from .helpers import Api

pytestmark = pytest.mark.usefixtures("forget_crds")
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
POLLS = 500  # × 10 ms


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(POLLS):
        if await check():
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"timed out waiting for {what}")


def admitted(body: dict[str, Any]) -> dict[str, Any]:
    """A CRD as admission stores it (what another server would have written)."""
    return admit(CustomResourceDefinition.from_dict(body), None, operation="CREATE",
                 now=SystemClock().now()).to_dict()


async def test_a_crd_stored_before_the_server_started_is_served_from_the_first_answer(api: Api) -> None:
    await api.store.create(admitted(guestbook_crd()))
    later = build_app(api.store, clock=SystemClock())
    transport = InProcessTransport(later)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://later.test") as http:
            assert (await http.get("/apis/webapp.my.domain/v1")).status_code == 200
            crd = (await http.get(f"{CRDS}/guestbooks.webapp.my.domain")).json()
            assert {c["type"]: c["status"] for c in crd["status"]["conditions"]} == {
                "NamesAccepted": "True", "Established": "True"}
    finally:
        later.close()


async def test_a_crd_written_by_another_server_is_served_here(api: Api) -> None:
    assert (await api.http.get("/version")).status_code == 200  # this server follows the store from now on
    await api.store.create(admitted(guestbook_crd()))  # as a replica sharing the store writes it

    async def served() -> bool:
        return (await api.http.get(GUESTBOOKS)).status_code == 200

    await eventually(served, "the guestbooks another server defined to be served")
    crd = (await api.http.get(f"{CRDS}/guestbooks.webapp.my.domain")).json()
    assert {c["type"]: c["status"] for c in crd["status"]["conditions"]}["Established"] == "True"
    assert (await api.http.post(GUESTBOOKS, json=guestbook("g"))).status_code == 201
    await api.store.delete(CRD, "", "guestbooks.webapp.my.domain")

    async def dropped() -> bool:
        return (await api.http.get(GUESTBOOKS)).status_code == 404

    await eventually(dropped, "the guestbooks to stop being served once another server deleted the CRD")


async def test_aggregated_discovery_has_an_etag_that_changes_with_the_crds(api: Api) -> None:
    first = await api.http.get("/apis", headers={"Accept": AGGREGATED})
    etag = first.headers["etag"]
    same = await api.http.get("/apis", headers={"Accept": AGGREGATED, "If-None-Match": etag})
    assert same.status_code == 304 and same.headers["etag"] == etag
    assert (await api.http.post(CRDS, json=guestbook_crd())).status_code == 201
    changed = await api.http.get("/apis", headers={"Accept": AGGREGATED, "If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert "webapp.my.domain" in {g["metadata"]["name"] for g in changed.json()["items"]}


async def test_openapi_describes_a_custom_kind_by_its_crd_schema(api: Api) -> None:
    assert (await api.http.post(CRDS, json=guestbook_crd())).status_code == 201
    index = (await api.http.get("/openapi/v3")).json()["paths"]
    url = index["apis/webapp.my.domain/v1"]["serverRelativeURL"]
    doc = (await api.http.get(url)).json()
    schema = doc["components"]["schemas"]["domain.my.webapp.v1.Guestbook"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "webapp.my.domain", "version": "v1", "kind": "Guestbook"}]
    assert schema["properties"]["spec"]["required"] == ["configMapName", "size"]
    assert schema["properties"]["spec"]["properties"]["size"]["maximum"] == 10
    assert "x-kubernetes-preserve-unknown-fields" not in schema
    assert "$ref" in orjson.dumps(schema["properties"]["metadata"]).decode(), "metadata stays typed"
    patch = doc["paths"]["/apis/webapp.my.domain/v1/namespaces/{namespace}/guestbooks/{name}"]["patch"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]


async def test_tables_of_a_custom_kind_use_its_printer_columns(api: Api) -> None:
    assert (await api.http.post(CRDS, json=rack_crd())).status_code == 201
    assert (await api.http.post(CLUSTER_WIDE, json=rack("r1", units=3))).status_code == 201
    table = (await api.http.get(CLUSTER_WIDE, headers={"Accept": TABLE})).json()
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", 0), ("Units", "integer", 0), ("Room", "string", 1), ("Age", "date", 0)]
    name, units, room, age = table["rows"][0]["cells"]
    assert (name, units, room) == ("r1", 3, "b2") and age.endswith("s")
    assert (await api.http.post(CRDS, json=guestbook_crd())).status_code == 201
    assert (await api.http.post(GUESTBOOKS, json=guestbook("g"))).status_code == 201
    plain = (await api.http.get(GUESTBOOKS, headers={"Accept": TABLE})).json()
    assert [c["name"] for c in plain["columnDefinitions"]] == ["Name", "Age"]
