"""``pods/NAME/log`` of a simulated member: lines told from the pod's status, on the virtual clock."""

from __future__ import annotations

import asyncio

import httpx

from fleetkeeper.apiserver import InProcessTransport
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.server import MemberServer

from .helpers import on_cluster, workload

PODS = "/api/v1/namespaces/default/pods"


def _client(cluster: SimulatedCluster) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=InProcessTransport(MemberServer(cluster, token=None)),
                             base_url="http://member.test")


async def _pod(http: httpx.AsyncClient) -> str:
    items = (await http.get(PODS, params={"labelSelector": "app=web"})).json()["items"]
    return str(items[0]["metadata"]["name"])


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
