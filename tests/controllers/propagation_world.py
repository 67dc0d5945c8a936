"""A running propagation pipeline for tests: real store, real controllers, simulated members.

``running(clock, "member1", "member2")`` builds a :class:`~fleetkeeper.cmd.app.ControlPlane`
over a memory (or sqlite) store with the propagation controllers (and the plane's scheduler),
registers Push clusters ``simulated://<name>`` marked Ready (the cluster-status
controller is not part of these tests), and yields a :class:`World` to drive it.
Everything runs on the test's VirtualClock; waiting means letting virtual time pass
until a condition holds (``wait_for``), so no test depends on wall time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster, ClusterStatus
from fleetkeeper.api.meta import Condition, Resource
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.controllers import (
    binding,
    binding_status,
    customizations,
    dependencies,
    detector,
    execution,
    policy_ids,
    work_status,
)
from fleetkeeper.members.interface import Member, ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster, SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.runtime.spec import ControllerSpec
from fleetkeeper.scheduler import controller as scheduler
from fleetkeeper.store import open_store

T = TypeVar("T")

PIPELINE: tuple[ControllerSpec, ...] = (
    customizations.SPEC, policy_ids.SPEC, detector.SPEC, binding.SPEC, execution.SPEC,
    work_status.SPEC, binding_status.SPEC, dependencies.SPEC,
)


class FleetPool:
    """The simulated fleet as a MemberPool (clusters by name)."""

    def __init__(self, fleet: SimulatedFleet) -> None:
        self.fleet = fleet

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> Member:
        if cluster_name not in self.fleet:
            raise errors.MemberUnreachable(f"no simulated cluster {cluster_name!r}")
        return self.fleet[cluster_name]


def ready_condition(status: str = "True") -> Condition:
    reason = constants.REASON_CLUSTER_READY if status == "True" else constants.REASON_CLUSTER_NOT_REACHABLE
    return Condition.model_validate({"type": constants.COND_READY, "status": status, "reason": reason})


@dataclass
class World:
    clock: VirtualClock
    plane: ControlPlane
    fleet: SimulatedFleet
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    @property
    def client(self) -> Any:
        return self.plane.client

    def member(self, name: str) -> SimulatedCluster:
        return self.fleet[name]

    async def member_object(self, cluster: str, api_version: str, kind: str, namespace: str,
                            name: str) -> dict[str, Any] | None:
        return await self.member(cluster).get(ObjectRef(api_version, kind, namespace, name))

    async def apply(self, manifest: dict[str, Any]) -> Resource:
        """Create the object (the store's typed model for its kind)."""
        model = SCHEME.model_for(manifest["apiVersion"], manifest["kind"])
        created: Resource = await self.client.create(model.from_dict(manifest))
        return created

    async def get(self, model: type[T], name: str, namespace: str = "") -> T | None:
        try:
            return await self.client.get(model, name, namespace)  # type: ignore[no-any-return]
        except errors.NotFound:
            return None

    async def set_ready(self, cluster: str, status: str = "True") -> None:
        current = await self.client.get(Cluster, cluster)
        current.status.conditions = [c for c in current.status.conditions or () if c.type != "Ready"]
        current.status.conditions.append(ready_condition(status))
        await self.client.update_status(current)

    async def wait_for(self, check: Callable[[], Awaitable[T | None]], *, within: float = 120.0,
                       step: float = 0.5) -> T:
        """Let virtual time pass until ``check()`` returns something truthy; fail after ``within`` s."""
        deadline = self.clock.monotonic() + within
        while True:
            for task in self.tasks:
                if task.done():
                    task.result()  # the control plane stopped: surface why
                    raise AssertionError("the control plane stopped")
            value = await check()
            if value:
                return value
            if self.clock.monotonic() >= deadline:
                raise AssertionError(f"condition not met within {within}s of virtual time")
            await self.clock.sleep(step)

    async def settle(self, seconds: float = 5.0) -> None:
        """Let ``seconds`` of virtual time pass."""
        await self.clock.sleep(seconds)


#: an API the simulated members serve in these tests besides the built-in ones (a CRD-like kind)
WORKLOAD_API = {"groupVersion": "apps.example.io/v1", "resources": [{"name": "workloads",
                                                                     "kind": "Workload"}]}


async def add_cluster(client: Any, member: SimulatedCluster, *, ready: bool = True) -> Cluster:
    """Register ``member`` as a Push cluster and report what the cluster-status controller would."""
    created: Cluster = await client.create(Cluster.from_dict({
        "metadata": {"name": member.name},
        "spec": {"syncMode": "Push", "apiEndpoint": f"simulated://{member.name}"},
    }))
    summary = await member.summary()
    created.status = ClusterStatus.from_dict({
        "kubernetesVersion": summary.kubernetes_version,
        "apiEnablements": [*summary.api_enablements, WORKLOAD_API],
        "conditions": [ready_condition("True" if ready else "False").to_dict()],
    })
    updated: Cluster = await client.update_status(created)
    return updated


@asynccontextmanager
async def running(clock: VirtualClock, *clusters: str, store_url: str = "memory://",
                  options: Options | None = None, specs: Sequence[ControllerSpec] = PIPELINE,
                  pod_startup: float = 1.0, before_start: Callable[[Any], Awaitable[None]] | None = None,
                  ) -> AsyncIterator[World]:
    """A started control plane over ``clusters``: the propagation pipeline (``specs``) and the scheduler."""
    store = open_store(store_url, clock=clock)
    fleet = SimulatedFleet(clock)
    for name in clusters:
        fleet.add(name, pod_startup=pod_startup)
    plane = ControlPlane(store=store, clock=clock, members=FleetPool(fleet),
                         options=options or Options(leader_elect=False),
                         specs=[*specs, scheduler.SPEC])
    for name in clusters:
        await add_cluster(plane.client, fleet[name])
    if before_start is not None:
        await before_start(plane.client)
    world = World(clock, plane, fleet)
    world.tasks.append(asyncio.get_running_loop().create_task(plane.run()))
    try:
        await plane.wait_started()
        yield world
    finally:
        for task in world.tasks:
            task.cancel()
        await asyncio.gather(*world.tasks, return_exceptions=True)
        await store.close()


def run(main: Callable[[VirtualClock], Awaitable[None]]) -> None:
    clock = VirtualClock()
    clock.run(main(clock))




# --- manifests the controller tests share ---------------------------------------------------------

def deployment(name: str = "nginx", replicas: int = 3, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}},
    }


def propagation_policy(name: str = "nginx", *clusters: str, namespace: str = "default",
                       selector: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A PropagationPolicy duplicating Deployment ``name`` to ``clusters``."""
    sel = selector or {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    return {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": f"{name}-propagation", "namespace": namespace},
        "spec": {"resourceSelectors": [sel],
                 "placement": {"clusterAffinity": {"clusterNames": list(clusters or ("member1", "member2"))}},
                 **spec},
    }


__all__ = [
    "PIPELINE", "FleetPool", "World", "add_cluster", "deployment", "propagation_policy", "ready_condition",
    "run", "running",
]
