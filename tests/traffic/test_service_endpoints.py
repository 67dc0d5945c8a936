"""A simulated member's load balancers: LoadBalancer Services answer over real HTTP on
loopback with the cluster's name, and publish where in ``status.loadBalancer``."""

from __future__ import annotations

import asyncio

import httpx

from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated.http import CLUSTER_HEADER

from .helpers import SERVICE, serving

REF = ObjectRef("v1", "Service", "default", "web")


def test_each_service_port_answers_with_the_cluster_name() -> None:
    async def body() -> None:
        async with serving("member1") as fleet:
            member = fleet.members["member1"]
            ports = [{"name": "http", "port": 80}, {"name": "alt", "port": 81}]
            two_ports = {**SERVICE, "spec": {"type": "LoadBalancer", "ports": ports}}
            await member.apply(two_ports)
            for _ in range(200):
                ingress = (member.peek(REF) or {})["status"]["loadBalancer"]["ingress"]
                if len(ingress[0]["ports"]) == 2:
                    break
                await asyncio.sleep(0.01)
            assert ingress[0]["ip"] == "127.0.0.1"
            async with httpx.AsyncClient(trust_env=False) as client:
                for port in ingress[0]["ports"]:
                    url = f"http://127.0.0.1:{port['port']}/any/path"
                    response = await client.post(url, content=b"x" * 10)
                    assert (response.status_code, response.text) == (200, "member1\n")
                    assert response.headers[CLUSTER_HEADER] == "member1"
            assert fleet.endpoints["member1"].served == 2

    asyncio.run(body())


def test_a_deleted_service_stops_answering_and_other_types_never_answer() -> None:
    async def body() -> None:
        async with serving("member1") as fleet:
            member = fleet.members["member1"]
            port = fleet.published["member1"]
            await member.apply({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]},
                                "metadata": {"name": "internal", "namespace": "default"}})
            await member.delete(REF)
            async with httpx.AsyncClient(trust_env=False) as client:
                for _ in range(200):
                    try:
                        await client.get(f"http://127.0.0.1:{port}/")
                    except httpx.ConnectError:
                        break
                    await asyncio.sleep(0.01)
                else:
                    raise AssertionError("the endpoint of a deleted Service still answers")
            internal = member.peek(ObjectRef("v1", "Service", "default", "internal")) or {}
            assert not (internal.get("status") or {}).get("loadBalancer")

    asyncio.run(body())


def test_the_data_plane_keeps_serving_while_the_api_is_down() -> None:
    async def body() -> None:
        async with serving("member1") as fleet:
            fleet.members["member1"].down()
            async with httpx.AsyncClient(trust_env=False) as client:
                response = await client.get(f"http://127.0.0.1:{fleet.published['member1']}/")
            assert response.text == "member1\n"

    asyncio.run(body())
