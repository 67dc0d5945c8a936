"""A simulated member selects by the fields kube-apiserver indexes: ``kubectl describe pod`` finds its
Events by ``involvedObject``, a list of Pods by ``spec.nodeName``; other fields are a 400."""

from __future__ import annotations

from typing import Any

import httpx

from fleetkeeper.apiserver import InProcessTransport
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.server import MemberServer

from .helpers import on_cluster, workload


def test_events_and_pods_are_selected_by_their_indexed_fields() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        transport = InProcessTransport(MemberServer(cluster, token=None))
        async with httpx.AsyncClient(transport=transport, base_url="http://member.test") as http:
            await cluster.apply(workload("Deployment", "web", replicas=2))
            await clock.sleep(30)
            pods = (await http.get("/api/v1/namespaces/default/pods")).json()["items"]
            first = pods[0]["metadata"]["name"]
            node = pods[0]["spec"]["nodeName"]
            about = ",".join([f"involvedObject.name={first}", "involvedObject.namespace=default",
                              "involvedObject.kind=Pod"])
            return {
                "all": (await http.get("/api/v1/namespaces/default/events")).json()["items"],
                "about": (await http.get("/api/v1/namespaces/default/events",
                                         params={"fieldSelector": about})).json()["items"],
                "on_node": (await http.get("/api/v1/pods", params={"fieldSelector": f"spec.nodeName={node}"})
                            ).json()["items"],
                "pods": pods, "first": first, "node": node,
                "bad": await http.get("/api/v1/pods", params={"fieldSelector": "spec.containers=x"}),
            }

    got = on_cluster(main, pod_startup=2.0)
    assert {e["involvedObject"]["name"] for e in got["about"]} == {got["first"]}
    assert {e["reason"] for e in got["about"]} >= {"Scheduled", "Started"}
    assert len(got["all"]) > len(got["about"])
    assert {p["spec"]["nodeName"] for p in got["on_node"]} == {got["node"]}
    assert len(got["on_node"]) == sum(p["spec"]["nodeName"] == got["node"] for p in got["pods"])
    assert got["bad"].status_code == 400
    assert "field label not supported: spec.containers" in got["bad"].json()["message"]
