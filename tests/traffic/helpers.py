"""Real backends for traffic tests: simulated members serving a LoadBalancer Service over
HTTP on loopback, a route table over them, and a bounded client."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx

from fleetkeeper.clock import SystemClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.http import CLUSTER_HEADER, ServiceEndpoints
from fleetkeeper.traffic.routes import Backend, Route, RouteTable

SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"type": "LoadBalancer", "ports": [{"name": "http", "port": 80}]}}


@dataclass
class Fleet:
    """Members serving ``default/web``; ``published[cluster]`` is its HTTP port."""

    members: dict[str, SimulatedCluster]
    endpoints: dict[str, ServiceEndpoints]
    published: dict[str, int] = field(default_factory=dict)

    def table(self, blocked: tuple[str, ...] = (), *, path: str = "/",
              only: tuple[str, ...] | None = None) -> RouteTable:
        """One route to ``default/web`` in every member (or ``only`` these)."""
        backends = tuple(Backend(name, "127.0.0.1", port, blocked=name in blocked)
                         for name, port in sorted(self.published.items()) if only is None or name in only)
        return RouteTable((Route("default/web", "", path, "Prefix", "default/web", backends),))


async def published_port(member: SimulatedCluster) -> int:
    for _ in range(200):
        svc = member.peek(ObjectRef("v1", "Service", "default", "web"))
        ingress = ((svc or {}).get("status") or {}).get("loadBalancer", {}).get("ingress") or []
        if ingress:
            return int(ingress[0]["ports"][0]["port"])
        await asyncio.sleep(0.01)
    raise AssertionError(f"{member.name} never published the address of default/web")


@contextlib.asynccontextmanager
async def serving(*names: str) -> AsyncIterator[Fleet]:
    """Members ``names`` serving ``default/web`` until the block ends."""
    clock = SystemClock()
    members = {n: SimulatedCluster(n, clock=clock, nodes=1) for n in names}
    fleet = Fleet(members, {n: ServiceEndpoints(m) for n, m in members.items()})
    tasks = [asyncio.get_running_loop().create_task(e.run()) for e in fleet.endpoints.values()]
    try:
        for name, member in members.items():
            await member.apply(SERVICE)
            fleet.published[name] = await published_port(member)
        yield fleet
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class Load:
    """What a bounded client saw: who served each request, and the failures."""

    served: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    #: (send time, serving cluster) per successful request
    log: list[tuple[float, str]] = field(default_factory=list)

    @property
    def sent(self) -> int:
        return sum(self.served.values()) + len(self.failures)


async def send(client: httpx.AsyncClient, url: str, load: Load, *, host: str = "web.example.com") -> None:
    started = asyncio.get_running_loop().time()
    try:
        response = await client.get(url, headers={"Host": host})
    except httpx.HTTPError as exc:
        load.failures.append(repr(exc))
        return
    if response.status_code != 200:
        load.failures.append(f"{response.status_code} {response.text.strip()}")
        return
    cluster = response.headers[CLUSTER_HEADER]
    assert response.text == f"{cluster}\n"
    load.served[cluster] += 1
    load.log.append((started, cluster))


async def steady(url: str, load: Load, *, count: int, interval: float, concurrency: int = 4) -> None:
    """Send ``count`` requests, one every ``interval`` seconds, at most ``concurrency`` at once."""
    limit = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=5.0, trust_env=False) as client:
        async def one() -> None:
            async with limit:
                await send(client, url, load)

        tasks = []
        for _ in range(count):
            tasks.append(asyncio.get_running_loop().create_task(one()))
            await asyncio.sleep(interval)
        await asyncio.gather(*tasks)
