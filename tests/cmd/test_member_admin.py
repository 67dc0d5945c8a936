"""member-sim's fault-injection API on its own port, in-process on the virtual clock: the member's
token is needed, faults and node counts are set, bad input is refused naming the field, a compaction
makes a resuming watch 410, and neither port serves the other's paths."""

from __future__ import annotations

import json
from typing import Any

import httpx

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper.apiserver import InProcessTransport
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.member_admin import MAX_BODY, AdminApi, MemberSite
from fleetkeeper.cmd.member_api import member_app
from fleetkeeper.members.simulated import SimulatedCluster

TOKEN = "member-token"
ADMIN_PORT = 7443
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def test_the_admin_api_sets_faults_and_nodes_and_refuses_bad_input() -> None:
    clock = VirtualClock()

    async def main() -> dict[str, Any]:
        cluster = SimulatedCluster("member1", clock=clock, create_namespaces=False)
        member = member_app(cluster, token=TOKEN)
        site = MemberSite(member.app, AdminApi(cluster, member.store, token=TOKEN, door=None),
                          admin_port=ADMIN_PORT)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        admin = httpx.AsyncClient(transport=InProcessTransport(site),
                                  base_url=f"http://member.test:{ADMIN_PORT}", headers=auth)
        api = httpx.AsyncClient(transport=InProcessTransport(site), base_url="http://member.test",
                                headers=auth)
        try:
            got: dict[str, Any] = {
                "anonymous": (await admin.get("/admin/state", headers={"Authorization": ""})).status_code,
                "wrong": (await admin.get("/admin/state", headers={"Authorization": "Bearer x"})).status_code,
                "state": (await admin.get("/admin/state")).json(),
                "unhealthy": (await admin.post("/admin/state", json={"state": "unhealthy"})).json()["state"],
                "readyz": (await api.get("/readyz")).status_code,
                "up": (await admin.post("/admin/state", json={"state": "up"})).json()["state"],
                "readyz_up": (await api.get("/readyz")).status_code,
                "nodes": (await admin.post("/admin/nodes", json={"count": 5})).json()["nodes"],
                "listed": len((await api.get("/api/v1/nodes")).json()["items"]),
            }
            bad = [await admin.post("/admin/state", json={"state": "sideways"}),
                   await admin.post("/admin/state", json={"state": "down"}),  # no relay in front of it
                   await admin.post("/admin/nodes", json={"count": -1}),
                   await admin.post("/admin/nodes", json={"count": True}),
                   await admin.post("/admin/nodes", json={"count": 10**6}),
                   await admin.post("/admin/nodes", content=b"[1]"),
                   await admin.post("/admin/nodes", content=b"{"),
                   await admin.post("/admin/nodes", content=b" " * (MAX_BODY + 1))]
            got["bad"] = [(r.status_code, r.json()["message"]) for r in bad]
            got["admin_on_api"] = (await api.get("/admin/state")).status_code
            got["api_on_admin"] = (await admin.get("/api/v1/nodes")).status_code
            return got
        finally:
            await admin.aclose()
            await api.aclose()
            await member.close()
            await cluster.close()

    got = clock.run(main())
    assert (got["anonymous"], got["wrong"]) == (401, 401)
    assert got["state"] == {"name": "member1", "state": "up", "nodes": 3}
    assert (got["unhealthy"], got["readyz"], got["up"], got["readyz_up"]) == ("unhealthy", 500, "up", 200)
    assert (got["nodes"], got["listed"]) == (5, 5)
    codes = [code for code, _ in got["bad"]]
    assert codes == [400, 400, 400, 400, 400, 400, 400, 413]
    assert "state 'sideways': expected one of down, blackhole, unhealthy, up" in got["bad"][0][1]
    assert "needs the member's relay" in got["bad"][1][1]
    assert all("count" in message for _, message in got["bad"][2:5])
    assert (got["admin_on_api"], got["api_on_admin"]) == (404, 404)


def test_a_compaction_makes_a_watch_resuming_from_before_it_410() -> None:
    clock = VirtualClock()

    async def main() -> tuple[list[dict[str, Any]], int]:
        cluster = SimulatedCluster("member1", clock=clock)
        member = member_app(cluster, token=None)
        site = MemberSite(member.app, AdminApi(cluster, member.store, token=None, door=None),
                          admin_port=ADMIN_PORT)
        http = httpx.AsyncClient(transport=InProcessTransport(site), base_url="http://member.test")
        try:
            created = (await http.post(CONFIGMAPS, json=_configmap("a"))).json()
            revision = created["metadata"]["resourceVersion"]
            await http.post(f"http://member.test:{ADMIN_PORT}/admin/compact")
            await http.post(CONFIGMAPS, json=_configmap("b"))
            answer = await http.get(CONFIGMAPS, params={"watch": "true", "resourceVersion": revision})
            events = [json.loads(line) for line in answer.text.splitlines()]
            listed = (await http.get(CONFIGMAPS)).json()
            since = listed["metadata"]["resourceVersion"]
            fresh = await http.get(CONFIGMAPS, params={"watch": "true", "timeoutSeconds": "1",
                                                        "resourceVersion": since})
            return events, fresh.status_code
        finally:
            await http.aclose()
            await member.close()
            await cluster.close()

    events, fresh = clock.run(main())
    assert [(e["type"], e["object"]["code"], e["object"]["reason"]) for e in events] == [
        ("ERROR", 410, "Expired")]
    assert fresh == 200
