"""The multicluster-ingress controller on virtual time, over the real store: service
locations follow the bindings, traffic blocks follow the clusters' remedy actions, and
each block and restore is on the timeline."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.networking import MultiClusterIngress, ServiceLocation
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import multicluster_ingress

from .failover_world import World, cluster_body, make_world


def run(body: Callable[[World], Awaitable[None]]) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ())
        try:
            for name in ("member1", "member2", "member3"):
                await world.client.create(cluster_body(name))
            world.start([multicluster_ingress.SPEC])
            await world.settle()
            await body(world)
        finally:
            await world.close()

    clock.run(main())


def ingress(*services: str) -> MultiClusterIngress:
    paths = [{"path": f"/{s}", "pathType": "Prefix",
              "backend": {"service": {"name": s, "port": {"number": 80}}}} for s in services]
    return MultiClusterIngress.from_dict({"metadata": {"name": "web", "namespace": "default"},
                                         "spec": {"rules": [{"http": {"paths": paths}}]}})


def binding(service: str, clusters: list[str], *, kind: str = "Service") -> ResourceBinding:
    return ResourceBinding.from_dict({
        "metadata": {"name": f"{service}-{kind.lower()}", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "v1" if kind == "Service" else "apps/v1", "kind": kind,
                              "namespace": "default", "name": service},
                 "clusters": [{"name": c} for c in clusters]},
    })


async def set_actions(world: World, name: str, actions: list[str] | None) -> None:
    current = await world.cluster(name)
    current.status.remedy_actions = actions
    await world.client.update_status(current)
    await world.settle()


async def status(world: World) -> MultiClusterIngress:
    return await world.client.get(MultiClusterIngress, "web", "default")


def test_locations_follow_bindings_and_blocks_follow_remedy_actions() -> None:
    async def body(world: World) -> None:
        await world.client.create(ingress("web", "api"))
        await world.client.create(binding("web", ["member1", "member2"]))
        await world.client.create(binding("web", ["member3"], kind="Deployment"))  # not a Service: ignored
        await world.settle()
        mci = await status(world)
        assert mci.status.service_locations == [ServiceLocation(name="web", clusters=["member1", "member2"])]
        assert mci.status.traffic_block_clusters is None

        await set_actions(world, "member3", ["TrafficControl"])  # holds no backend
        assert (await status(world)).status.traffic_block_clusters is None
        await set_actions(world, "member1", ["TrafficControl"])
        assert (await status(world)).status.traffic_block_clusters == ["member1"]

        await world.client.create(binding("api", ["member3"]))  # now member3 holds a backend too
        await world.settle()
        mci = await status(world)
        assert mci.status.traffic_block_clusters == ["member1", "member3"]
        assert [loc.name for loc in mci.status.service_locations or ()] == ["api", "web"]

        await set_actions(world, "member1", None)
        await set_actions(world, "member3", None)
        assert (await status(world)).status.traffic_block_clusters is None
        entries = sorted(await world.timeline(action=tl.TRAFFIC),
                         key=lambda e: int(e.metadata.resource_version or 0))
        assert [e.message for e in entries] == [
            "traffic to member1 blocked (TrafficControl)", "traffic to member3 blocked (TrafficControl)",
            "traffic to member1 restored", "traffic to member3 restored"]

    run(body)


def test_a_rescheduled_backend_moves_the_block_with_it() -> None:
    async def body(world: World) -> None:
        await set_actions(world, "member2", ["TrafficControl"])
        await world.client.create(ingress("web"))
        await world.client.create(binding("web", ["member1"]))
        await world.settle()
        assert (await status(world)).status.traffic_block_clusters is None
        moved = await world.client.get(ResourceBinding, "web-service", "default")
        moved.spec.clusters = binding("web", ["member2"]).spec.clusters
        await world.client.update(moved)
        await world.settle()
        mci = await status(world)
        assert mci.status.service_locations == [ServiceLocation(name="web", clusters=["member2"])]
        assert mci.status.traffic_block_clusters == ["member2"]
        await world.client.delete(ResourceBinding, "web-service", "default")
        await world.settle()
        mci = await status(world)
        assert (mci.status.service_locations, mci.status.traffic_block_clusters) == (None, None)

    run(body)


def test_editing_the_ingress_recomputes_its_status() -> None:
    async def body(world: World) -> None:
        await world.client.create(binding("web", ["member1"]))
        await world.client.create(binding("api", ["member2"]))
        await world.client.create(ingress("web"))
        await world.settle()
        current = await status(world)
        current.spec = ingress("api").spec
        await world.client.update(current)
        await world.settle()
        locations = (await status(world)).status.service_locations
        assert locations == [ServiceLocation(name="api", clusters=["member2"])]

    run(body)
