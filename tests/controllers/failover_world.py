"""A small world for failover controller tests: a memory store, simulated members and a
control plane with exactly the controllers a test names, all on one VirtualClock.

Tests read the world back through the real client (``world.cluster("member1")``) and
move time with ``await world.until(t)`` (absolute virtual seconds) — nothing here waits
on wall time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.admission import admit
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.core import Event
from fleetkeeper.api.meta import Condition
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.members.simulated import SimulatedCluster, SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.runtime.context import Scope
from fleetkeeper.runtime.gcpause import Collector
from fleetkeeper.runtime.spec import ControllerSpec
from fleetkeeper.scheduler import controller as scheduler
from fleetkeeper.store import open_store
from fleetkeeper.store.interface import StoreProtocol


def cluster_body(
    name: str,
    *,
    mode: str = "Push",
    finalized: bool = False,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
) -> Cluster:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if finalized:
        meta["finalizers"] = ["karmada.io/cluster-controller"]
    return Cluster.from_dict(
        {"metadata": meta, "spec": {"syncMode": mode, "apiEndpoint": f"simulated://{name}", "taints": taints}}
    )


@dataclass
class World:
    clock: VirtualClock
    store: StoreProtocol
    fleet: SimulatedFleet
    options: Options
    planes: list[tuple[ControlPlane, asyncio.Task[None]]] = field(default_factory=list)
    #: the process's collector, shared by every plane started (as in a simulation)
    collector: Collector = field(default_factory=Collector)

    def __post_init__(self) -> None:
        self.client = LocalClient(self.store, admission=admit, clock=self.clock)

    def start(
        self, specs: Sequence[ControllerSpec], *, scope: Scope | None = None, with_scheduler: bool = False
    ) -> ControlPlane:
        plane = ControlPlane(
            store=self.store,
            clock=self.clock,
            members=self.fleet,
            options=self.options,
            specs=[*specs, scheduler.SPEC] if with_scheduler else list(specs),
            scope=scope or Scope(),
            collector=self.collector,
        )
        task = asyncio.get_running_loop().create_task(plane.run())
        self.planes.append((plane, task))
        return plane

    async def stop(self, plane: ControlPlane) -> None:
        for i, (p, task) in enumerate(self.planes):
            if p is plane:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                del self.planes[i]
                return

    async def close(self) -> None:
        for plane, _ in list(self.planes):
            await self.stop(plane)
        await self.store.close()

    async def settle(self) -> None:
        for _ in range(10):
            await self.clock.settle()
            await asyncio.sleep(0)

    async def until(self, t: float) -> None:
        """Run until virtual second ``t``, then let everything due at ``t`` settle."""
        await self.clock.sleep_until(t)
        await self.settle()

    @property
    def now(self) -> float:
        return self.clock.elapsed()

    # ---------------------------------------------------------------- reads
    async def cluster(self, name: str) -> Cluster:
        return await self.client.get(Cluster, name)

    async def ready(self, name: str) -> Condition | None:
        return get_condition((await self.cluster(name)).status.conditions, "Ready")

    async def taints(self, name: str) -> list[str]:
        return [f"{t.key}:{t.effect}" for t in (await self.cluster(name)).spec.taints or ()]

    async def timeline(self, name: str | None = None, action: str | None = None) -> list[tl.TimelineEntry]:
        items = (await self.client.list(tl.TimelineEntry)).items
        return sorted(
            (
                e
                for e in items
                if (name is None or e.subject.name == name) and (action is None or e.action == action)
            ),
            key=lambda e: (e.time, e.name),
        )

    async def events(self, reason: str, name: str | None = None) -> list[Event]:
        items = (await self.client.list(Event)).items
        return [e for e in items if e.reason == reason and (name is None or e.involved_object.name == name)]


async def make_world(
    clock: VirtualClock,
    clusters: Sequence[str] = ("member1", "member2"),
    *,
    options: Options | None = None,
    **member_options: Any,
) -> World:
    store = open_store("memory://", clock=clock)
    fleet = SimulatedFleet(clock)
    for name in clusters:
        fleet.add(name, **member_options)
    return World(clock, store, fleet, options or Options(leader_elect=False))


def member(world: World, name: str) -> SimulatedCluster:
    return world.fleet[name]
