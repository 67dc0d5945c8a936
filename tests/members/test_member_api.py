"""A simulated member's Kubernetes API (the plane's API server over the member's store), in-process
on the virtual clock: kubectl's columns for lists, gets and watches; the fields kube-apiserver indexes
(``kubectl describe pod`` finds its Events by ``involvedObject``); ``pods/NAME/log`` told from the pod's
status, followed through a crash loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import httpx

from fleetkeeper.apiserver import InProcessTransport
from fleetkeeper.apiserver.crds import REWATCH_MAX_SECONDS
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.member_api import member_app
from fleetkeeper.members.simulated import SimulatedCluster

from .helpers import every_log, on_cluster, workload

#: what kubectl get sends
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"


def _client(cluster: SimulatedCluster, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=InProcessTransport(member_app(cluster, token=None).app),
                             base_url="http://member.test", headers=headers)


def _rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    names = [c["name"] for c in table["columnDefinitions"]]
    return [dict(zip(names, row["cells"], strict=True)) for row in table["rows"]]


async def _pod(http: httpx.AsyncClient) -> str:
    items = (await http.get(PODS, params={"labelSelector": "app=web"})).json()["items"]
    return str(items[0]["metadata"]["name"])


def test_lists_and_gets_print_kubectls_columns_with_the_wide_ones() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        async with _client(cluster, TABLE) as http:
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
        async with _client(cluster, TABLE) as http:
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


def test_events_and_pods_are_selected_by_their_indexed_fields() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        async with _client(cluster) as http:
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


def test_a_pod_logs_its_start_and_readiness_and_not_before_it_starts() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[str, str, str, str]:
        async with _client(cluster) as http:
            await cluster.apply(workload("Deployment", "web"))
            name = await _pod(http)
            waiting = (await http.get(f"{PODS}/{name}/log")).json()["message"]
            await clock.sleep(5)
            plain = (await http.get(f"{PODS}/{name}/log")).text
            last = {"timestamps": "true", "tailLines": "1"}
            stamped = (await http.get(f"{PODS}/{name}/log", params=last)).text
            wrong = (await http.get(f"{PODS}/{name}/log", params={"container": "nope"})).json()["message"]
            return waiting.replace(name, "POD"), plain, stamped, wrong.replace(name, "POD")

    waiting, plain, stamped, wrong = on_cluster(main, pod_startup=2.0)
    assert waiting == 'container "main" in pod "POD" is waiting to start: ContainerCreating'
    assert plain == "container main started (image app:v1)\ncontainer main is ready\n"
    assert stamped.endswith("Z container main is ready\n") and stamped.count("\n") == 1
    assert wrong == "container nope is not valid for pod POD"


def test_following_a_log_streams_the_crash_loop_of_a_crashed_workload() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[str]:
        async with _client(cluster) as http:
            await cluster.apply(workload("Deployment", "web"))
            await clock.sleep(5)
            name = await _pod(http)
            seen: list[str] = []
            async with http.stream("GET", f"{PODS}/{name}/log", params={"follow": "true"}) as answer:
                lines = answer.aiter_lines()
                seen += [await anext(lines), await anext(lines)]
                cluster.crash_workload("apps/v1", "Deployment", "default", "web")
                for _ in range(2):
                    seen.append(await asyncio.wait_for(anext(lines), 60))
            return seen

    seen = on_cluster(main, pod_startup=2.0)
    assert seen[:2] == ["container main started (image app:v1)", "container main is ready"]
    assert seen[2] == ("container main exited with code 1 (Error): its workload is crashed "
                       "(fault crashWorkload); restart 1, back-off 10s")
    assert seen[3].endswith("restart 2, back-off 20s")


def test_the_api_serves_every_resource_the_cluster_reports_in_its_api_enablements() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[Any, dict[str, set[str]], Any]:
        async with _client(cluster) as http:
            summary = await cluster.summary()
            served: dict[str, set[str]] = {}
            for enablement in summary.api_enablements:
                version = enablement["groupVersion"]
                path = f"/api/{version}" if "/" not in version else f"/apis/{version}"
                answer = await http.get(path)
                served[version] = {r["name"] for r in answer.json().get("resources", [])} \
                    if answer.status_code == 200 else set()
            lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                     "metadata": {"name": "holder", "namespace": "default"}, "spec": {"holderIdentity": "a"}}
            made = await http.post("/apis/coordination.k8s.io/v1/namespaces/default/leases", json=lease)
            listed = (await http.get("/apis/coordination.k8s.io/v1/namespaces/default/leases")).json()
            return summary.api_enablements, served, (made.status_code, [i["metadata"]["name"]
                                                                        for i in listed["items"]])

    enablements, served, lease = on_cluster(main)
    assert len(enablements) >= 19
    missing = {e["groupVersion"]: sorted({r["name"] for r in e["resources"]} - served[e["groupVersion"]])
               for e in enablements}
    assert not {version: names for version, names in missing.items() if names}, "reported but not served"
    assert lease == (201, ["holder"])


def test_a_down_or_silent_member_answers_503_or_504_not_an_internal_error() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[tuple[int, str]]:
        async with _client(cluster) as http:
            answers = []
            for fault in (cluster.down, cluster.blackhole):
                fault()
                answer = await http.get(PODS)
                answers.append((answer.status_code, answer.json()["reason"]))
                cluster.up()
            return answers

    assert on_cluster(main, call_timeout=5.0) == [(503, "ServiceUnavailable"), (504, "Timeout")]


def test_a_member_down_for_a_minute_is_retried_with_back_off_and_one_warning() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[MutableMapping[str, Any]]:
        async with _client(cluster) as http:
            assert (await http.get(PODS)).status_code == 200  # its CRDs followed from the first answer on
            with every_log() as seen:
                cluster.down()
                await clock.sleep(60)
                cluster.up()
                await clock.sleep(REWATCH_MAX_SECONDS + 1)
                assert (await http.get(PODS)).status_code == 200
            return [e for e in seen if e["event"] == "CRD watch failed; listing again"]

    failed = on_cluster(main)
    assert [e["log_level"] for e in failed].count("warning") == 1
    assert 3 <= len(failed) <= 12, len(failed)  # 0.4 s, 0.8 s, … up to 10 s apart, not every 0.2 s


def test_a_member_says_why_it_issues_no_serviceaccount_tokens() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[int, str]:
        async with _client(cluster) as http:
            answer = await http.post("/api/v1/namespaces/default/serviceaccounts/default/token",
                                     json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"})
            return answer.status_code, answer.json()["message"]

    code, message = on_cluster(main)
    assert code == 405 and "a member cluster accepts its one bearer token only" in message, message
