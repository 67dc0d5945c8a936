"""Hostile Lua on a control plane in real time: the API keeps its pace and unrelated workloads
converge as fast as without it.

One event loop runs what ``fleetkeeper up`` runs — the API server on a loopback port, every
controller and the scheduler over one store, three simulated Push members — on the system clock.
Logs go to stderr at ``warning`` as ``up`` sends them. A ResourceInterpreterCustomization for
StatefulSets spins in every hook (the ones the pipeline needs to go on slowly but successfully,
the others to their one-second time limit), over five StatefulSets propagated to the three
members. While it spins, ``/readyz`` is probed from another thread (p99 under 100 ms), then
twenty Deployments converge within twice the time twenty others took before the customization
existed. Every wait is bounded; the whole test takes about twenty seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import structlog

from fleetkeeper import errors
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.apiserver import bind, build_app, serve
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.cmd.member_pool import member_pool
from fleetkeeper.cmd.up import member_cluster
from fleetkeeper.options import Options
from fleetkeeper.store import open_store

pytestmark = pytest.mark.slow

CLUSTERS = ["member1", "member2", "member3"]
UNRELATED = 20
STATEFULSETS = 5
PROBES = 50
#: bound on any one wait (seconds)
WITHIN = 60.0

#: a loop the instruction budget and the one-second time limit end
SPIN = "while true do end"
#: work that ends on its own, in a fraction of the limits
SLOW = "local n = 0 for i = 1, 3000000 do n = n + i end"
HOSTILE: dict[str, Any] = {
    "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
    "metadata": {"name": "hostile"},
    "spec": {"target": {"apiVersion": "apps/v1", "kind": "StatefulSet"}, "customizations": {
        "replicaResource": {"luaScript": f"function GetReplicas(o) {SLOW} return o.spec.replicas end"},
        "replicaRevision": {"luaScript": f"function ReviseReplica(o, n) {SLOW} o.spec.replicas = n "
                                         "return o end"},
        "retention": {"luaScript": f"function Retain(desired, observed) {SPIN} end"},
        "statusReflection": {"luaScript": f"function ReflectStatus(o) {SPIN} end"},
        "healthInterpretation": {"luaScript": f"function InterpretHealth(o) {SPIN} end"},
        "statusAggregation": {"luaScript": f"function AggregateStatus(o, items) {SPIN} end"},
        "dependencyInterpretation": {"luaScript": f"function GetDependencies(o) {SPIN} end"},
    }},
}


def workload(kind: str, namespace: str, name: str) -> dict[str, Any]:
    labels = {"app": name}
    template = {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}
    spec: dict[str, Any] = {"replicas": 1, "selector": {"matchLabels": labels}, "template": template}
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


def policy(namespace: str, kind: str, *, propagate_deps: bool = False) -> dict[str, Any]:
    """Every ``kind`` of ``namespace`` to the three members."""
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": f"all-{kind.lower()}s", "namespace": namespace},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": kind}],
                     "propagateDeps": propagate_deps,
                     "placement": {"clusterAffinity": {"clusterNames": CLUSTERS}}}}


@dataclass
class Plane:
    plane: ControlPlane
    url: str

    async def apply(self, manifest: dict[str, Any]) -> None:
        model = SCHEME.model_for(manifest["apiVersion"], manifest["kind"])
        await self.plane.client.create(model.from_dict(manifest))

    async def converged(self, namespace: str) -> bool:
        """Whether every Deployment of ``namespace`` runs Healthy in all three members."""
        bindings = (await self.plane.client.list(ResourceBinding, namespace=namespace)).items

        def healthy(rb: ResourceBinding) -> list[str]:
            return sorted(i.cluster_name for i in rb.status.aggregated_status or [] if i.health == "Healthy")

        return len([rb for rb in bindings if healthy(rb) == CLUSTERS]) == UNRELATED

    async def clusters_ready(self) -> bool:
        clusters = (await self.plane.client.list(Cluster)).items
        ready = [c for c in clusters
                 if any(x.type == "Ready" and x.status == "True" for x in c.status.conditions or ())]
        return len(ready) == len(CLUSTERS)


async def wait_for(check: Callable[[], Awaitable[bool]], what: str) -> float:
    """Seconds until ``check()`` holds (polled every 50 ms); fails after :data:`WITHIN` s."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > WITHIN:
            raise AssertionError(f"{what}: not within {WITHIN} s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


@contextlib.asynccontextmanager
async def running() -> AsyncIterator[Plane]:
    """The API server, the control plane and three simulated members on one loop, in real time."""
    clock = SystemClock()
    saved = structlog.get_config()
    logs.configure(level="warning", clock=clock)
    store = open_store("memory://", clock=clock)
    stop = asyncio.Event()
    started = asyncio.Event()
    sock = bind("127.0.0.1", 0)
    app = build_app(store, clock=clock)
    members, credentials = member_pool(clock)
    options = Options(cluster_status_update_frequency=1.0, cluster_monitor_period=1.0, leader_elect=False)
    plane = ControlPlane(store=store, clock=clock, members=members, options=options)
    credentials.client = plane.client
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(serve(app, sock=sock, tls=None, stop=stop, started=started)),
             loop.create_task(plane.run())]
    try:
        await asyncio.wait_for(started.wait(), WITHIN)
        await asyncio.wait_for(plane.wait_started(), WITHIN)
        for name in CLUSTERS:
            await plane.client.create(member_cluster(name))
        world = Plane(plane, f"http://127.0.0.1:{sock.getsockname()[1]}")
        await wait_for(world.clusters_ready, "members Ready")
        yield world
    finally:
        stop.set()
        for task in reversed(tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, errors.FleetkeeperError):
                await task
        assert plane.interpreter is not None
        plane.interpreter.close()
        await store.close()
        structlog.configure(**saved)


class Probes(threading.Thread):
    """``GET /readyz`` :data:`PROBES` times, 50 ms apart, from a thread of its own; the latencies."""

    def __init__(self, url: str) -> None:
        super().__init__(name="readyz-probes", daemon=True)
        self.url = url
        self.latencies: list[float] = []
        self.failures: list[str] = []

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=10.0) as http:
            for _ in range(PROBES):
                started = time.monotonic()
                try:
                    response = http.get("/readyz")
                    if response.status_code != 200:
                        self.failures.append(f"{response.status_code} {response.text}")
                except httpx.HTTPError as exc:
                    self.failures.append(repr(exc))
                self.latencies.append(time.monotonic() - started)
                time.sleep(0.05)

    def p99(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def deployments(world: Plane, namespace: str) -> float:
    """Create :data:`UNRELATED` Deployments in ``namespace``; seconds until all converged."""
    await world.apply(policy(namespace, "Deployment"))
    started = time.monotonic()
    for index in range(UNRELATED):
        await world.apply(workload("Deployment", namespace, f"web-{index}"))
    await wait_for(lambda: world.converged(namespace), f"Deployments of {namespace} converged")
    return time.monotonic() - started


async def test_hostile_lua_slows_only_its_own_workloads() -> None:
    async with running() as world:
        baseline = await deployments(world, "before")

        await world.apply(HOSTILE)
        await world.apply(policy("hostile", "StatefulSet", propagate_deps=True))
        for index in range(STATEFULSETS):
            await world.apply(workload("StatefulSet", "hostile", f"db-{index}"))
        await asyncio.sleep(1.0)  # the hostile scripts reach the controllers that interpret

        probes = Probes(world.url)
        probes.start()
        await asyncio.to_thread(probes.join, WITHIN)
        slowest = max(probes.latencies, default=0.0)
        assert not probes.is_alive() and len(probes.latencies) == PROBES, (
            f"{len(probes.latencies)} of {PROBES} probes in {WITHIN} s, the slowest {slowest:.1f} s")
        assert probes.p99() < 0.1, f"/readyz p99 {probes.p99() * 1000:.0f} ms: {sorted(probes.latencies)}"
        assert not probes.failures, probes.failures

        meanwhile = await deployments(world, "during")
        assert meanwhile <= 2 * baseline, (
            f"converged in {meanwhile:.1f} s, in {baseline:.1f} s without hostile Lua")
