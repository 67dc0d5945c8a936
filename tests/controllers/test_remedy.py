"""The remedy controller on virtual time, over the real store: remedy actions follow the
cluster conditions and the Remedies, are cleared when either stops calling for them,
and every change is on the timeline."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fleetkeeper.api import conditions
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.remedy import Remedy
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import remedy

from .failover_world import World, cluster_body, make_world

DNS = "ServiceDomainNameResolutionReady"


def run(body: Callable[[World], Awaitable[None]]) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1", "member2"))
        try:
            await world.client.create(cluster_body("member1"))
            await world.client.create(cluster_body("member2"))
            world.start([remedy.SPEC])
            await world.settle()
            await body(world)
        finally:
            await world.close()

    clock.run(main())


def dns_remedy(name: str = "dns-broken", **spec: Any) -> Remedy:
    body: dict[str, Any] = {
        "decisionMatches": [{"clusterConditionMatch": {"conditionType": DNS, "operator": "Equal",
                                                       "conditionStatus": "False"}}],
        "actions": ["TrafficControl"],
        **spec,
    }
    return Remedy.from_dict({"metadata": {"name": name}, "spec": body})


async def set_dns(world: World, name: str, status: str) -> None:
    current = await world.cluster(name)
    current.status.conditions = conditions.set_condition(
        current.status.conditions, Condition(type=DNS, status=status, reason="Test"),  # type: ignore[arg-type]
        world.clock.now())
    await world.client.update_status(current)
    await world.settle()


async def actions(world: World, name: str) -> list[str] | None:
    return (await world.cluster(name)).status.remedy_actions


async def both(world: World) -> tuple[list[str] | None, list[str] | None]:
    return await actions(world, "member1"), await actions(world, "member2")


def test_actions_follow_the_condition_and_clear_when_it_recovers() -> None:
    async def body(world: World) -> None:
        await world.client.create(dns_remedy())
        await world.settle()
        assert await actions(world, "member1") is None
        await set_dns(world, "member1", "False")
        assert await actions(world, "member1") == ["TrafficControl"]
        assert await actions(world, "member2") is None
        await set_dns(world, "member1", "True")
        assert await actions(world, "member1") is None
        entries = sorted(await world.timeline("member1", tl.REMEDY),
                         key=lambda e: int(e.metadata.resource_version or 0))
        texts = [e.message for e in entries]
        assert texts == ["remedy actions [TrafficControl] by Remedy dns-broken", "remedy actions cleared"]

    run(body)


def test_deleting_the_remedy_clears_its_actions() -> None:
    async def body(world: World) -> None:
        await world.client.create(dns_remedy(clusterAffinity={"clusterNames": ["member1"]}))
        await set_dns(world, "member1", "False")
        await set_dns(world, "member2", "False")
        assert await actions(world, "member1") == ["TrafficControl"]
        assert await actions(world, "member2") is None  # not selected by the affinity
        await world.client.delete(Remedy, "dns-broken")
        await world.settle()
        assert await actions(world, "member1") is None

    run(body)


def test_an_immediate_remedy_acts_at_once_and_an_empty_affinity_on_nobody() -> None:
    async def body(world: World) -> None:
        immediate = Remedy.from_dict({"metadata": {"name": "upgrade"}, "spec": {
            "clusterAffinity": {"clusterNames": ["member2"]}, "actions": ["TrafficControl"]}})
        nobody = Remedy.from_dict({"metadata": {"name": "nobody"}, "spec": {
            "clusterAffinity": {}, "actions": ["Other"]}})
        await world.client.create(immediate)
        await world.client.create(nobody)
        await world.settle()
        assert await actions(world, "member2") == ["TrafficControl"]
        assert await actions(world, "member1") is None

    run(body)


def test_actions_edited_by_someone_else_are_put_back() -> None:
    async def body(world: World) -> None:
        await world.client.create(dns_remedy(decisionMatches=None))
        await world.settle()
        assert await actions(world, "member1") == ["TrafficControl"]
        edited = await world.cluster("member1")
        edited.status.remedy_actions = ["Bogus"]
        await world.client.update_status(edited)
        await world.settle()
        assert await actions(world, "member1") == ["TrafficControl"]

    run(body)


def test_changing_a_remedy_moves_its_actions_between_clusters() -> None:
    async def body(world: World) -> None:
        await world.client.create(dns_remedy(decisionMatches=None,
                                             clusterAffinity={"clusterNames": ["member1"]}))
        await world.settle()
        assert await both(world) == (["TrafficControl"], None)
        current = await world.client.get(Remedy, "dns-broken")
        current.spec.cluster_affinity.cluster_names = ["member2"]  # type: ignore[union-attr]
        await world.client.update(current)
        await world.settle()
        assert await both(world) == (None, ["TrafficControl"])

    run(body)
