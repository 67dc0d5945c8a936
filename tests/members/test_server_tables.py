"""A simulated member answers kubectl get's Table requests with kubectl's columns, on the virtual clock."""

from __future__ import annotations

import json
from typing import Any

import httpx

from fleetkeeper.apiserver import InProcessTransport
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.server import MemberServer

from .helpers import on_cluster, workload

#: what kubectl get sends
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _client(cluster: SimulatedCluster) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=InProcessTransport(MemberServer(cluster, token=None)),
                             base_url="http://member.test", headers=TABLE)


def _rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    names = [c["name"] for c in table["columnDefinitions"]]
    return [dict(zip(names, row["cells"], strict=True)) for row in table["rows"]]


def test_lists_and_gets_print_kubectls_columns_with_the_wide_ones() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        async with _client(cluster) as http:
            await cluster.apply(workload("Deployment", "web", replicas=2))
            await clock.sleep(65)
            return {
                "deploy": (await http.get(DEPLOYMENTS)).json(),
                "one": (await http.get(f"{DEPLOYMENTS}/web", params={"includeObject": "Object"})).json(),
                "pods": (await http.get("/api/v1/pods")).json(),
                "nodes": (await http.get("/api/v1/nodes")).json(),
                "plain": (await http.get(DEPLOYMENTS, headers={"Accept": "application/json"})).json(),
                "bad": (await http.get(DEPLOYMENTS, params={"includeObject": "All"})),
            }

    got = on_cluster(main, pod_startup=2.0)
    deploy = got["deploy"]
    assert deploy["kind"] == "Table" and deploy["metadata"]["resourceVersion"].isdigit()
    assert [(c["name"], c["priority"]) for c in deploy["columnDefinitions"]] == [
        ("Name", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0), ("Age", 0),
        ("Containers", 1), ("Images", 1), ("Selector", 1)]
    assert _rows(deploy) == [{"Name": "web", "Ready": "2/2", "Up-to-date": 2, "Available": 2, "Age": "65s",
                              "Containers": "main", "Images": "app:v1", "Selector": "app=web"}]
    assert deploy["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert got["one"]["rows"][0]["object"]["spec"]["replicas"] == 2  # includeObject=Object: the whole object
    pods = _rows(got["pods"])
    assert [(p["Ready"], p["Status"], p["Restarts"]) for p in pods] == [("1/1", "Running", 0)] * 2
    assert all(p["Node"].startswith("member1-node-") and p["Nominated Node"] == "<none>" for p in pods)
    assert got["pods"]["rows"][0]["object"]["metadata"]["namespace"] == "default"  # kubectl's -A column
    nodes = _rows(got["nodes"])
    assert [n["Name"] for n in nodes] == [f"member1-node-00{i}" for i in range(3)]
    assert {(n["Status"], n["Version"]) for n in nodes} == {("Ready", "v1.31.0")}
    assert [c["name"] for c in got["nodes"]["columnDefinitions"]][5:] == [
        "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"]
    assert got["plain"]["kind"] == "DeploymentList"
    assert got["bad"].status_code == 400 and "includeObject" in got["bad"].json()["message"]


def test_a_watch_asked_for_tables_sends_one_row_tables() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[dict[str, Any]]:
        async with _client(cluster) as http:
            await cluster.apply(workload("Deployment", "web"))
            listed = (await http.get(DEPLOYMENTS)).json()
            params = {"watch": "true", "resourceVersion": listed["metadata"]["resourceVersion"]}
            async with http.stream("GET", DEPLOYMENTS, params=params) as answer:
                lines = answer.aiter_lines()
                await cluster.apply(workload("Deployment", "web", replicas=3))
                return [json.loads(await anext(lines))]

    (event,) = on_cluster(main)
    assert event["type"] == "MODIFIED" and event["object"]["kind"] == "Table"
    assert _rows(event["object"])[0]["Name"] == "web" and _rows(event["object"])[0]["Images"] == "app:v1"
