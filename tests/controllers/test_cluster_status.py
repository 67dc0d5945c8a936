"""The cluster-status controller on virtual time, against simulated members.

Probes run every 10 s from the moment the cluster controller finalizes the cluster
(t = 0 here), so a member that fails at t = 5 is first seen failing at t = 10 and —
with the 30 s failure threshold — written NotReady at t = 40.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from prometheus_client import REGISTRY

from fleetkeeper import errors
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import cluster, cluster_status, namespaces
from fleetkeeper.options import Options

from .failover_world import World, cluster_body, make_world

SETUPS = [cluster.SPEC, cluster_status.SPEC]


def run(
    body: Callable[[World], Awaitable[None]],
    *,
    clusters: tuple[str, ...] = ("member1", "member2"),
    options: Options | None = None,
) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, clusters, options=options)
        for name in clusters:
            await world.client.create(cluster_body(name))
        world.start(SETUPS)
        try:
            await world.settle()
            await body(world)
        finally:
            await world.close()

    clock.run(main())


def test_a_healthy_member_becomes_ready_with_what_was_collected() -> None:
    async def body(world: World) -> None:
        got = await world.cluster("member1")
        ready = await world.ready("member1")
        assert ready is not None and (ready.status, ready.reason) == ("True", "ClusterReady")
        assert got.status.kubernetes_version == "v1.31.0"
        assert got.status.node_summary is not None and got.status.node_summary.total_num == 3
        assert got.status.resource_summary is not None and got.status.resource_summary.allocatable
        complete = [c for c in got.status.conditions or () if c.type == "CompleteAPIEnablements"]
        assert complete and complete[0].status == "True"
        assert any(g.group_version == "apps/v1" for g in got.status.api_enablements or ())
        assert [e.message for e in await world.timeline("member1", tl.CONDITION_CHANGED)] == [
            "Ready=True (ClusterReady)"
        ]

    run(body)


def test_a_member_that_goes_down_is_not_ready_after_the_failure_threshold() -> None:
    async def body(world: World) -> None:
        await world.until(5)
        world.fleet["member1"].down()
        await world.until(39)
        ready = await world.ready("member1")
        assert ready is not None and ready.status == "True", "held for the failure threshold"
        await world.until(40.5)
        ready = await world.ready("member1")
        assert ready is not None and (ready.status, ready.reason) == ("False", "ClusterNotReachable")
        assert await world.taints("member1") == ["cluster.karmada.io/not-ready:NoSchedule"]
        other = await world.ready("member2")
        assert other is not None and other.status == "True"
        messages = [e.message for e in await world.timeline("member1", tl.CONDITION_CHANGED)]
        assert messages == ["Ready=True (ClusterReady)", "Ready=False (ClusterNotReachable)"]
        assert await world.events("ClusterNotReachable", "member1")

    run(body)


def test_a_transient_failure_never_bypasses_the_threshold() -> None:
    async def body(world: World) -> None:
        member = world.fleet["member1"]
        for start in (5, 45, 85):  # down for 20 s at a time: two failed probes, then recovery
            await world.until(start)
            member.down()
            await world.until(start + 20)
            member.up()
        await world.until(200)
        changes = await world.timeline("member1", tl.CONDITION_CHANGED)
        assert [e.message for e in changes] == ["Ready=True (ClusterReady)"]
        assert await world.taints("member1") == []

    run(body)


def test_an_unhealthy_member_answering_500_is_offline() -> None:
    async def body(world: World) -> None:
        await world.until(5)
        world.fleet["member1"].unhealthy()
        await world.until(41)
        ready = await world.ready("member1")
        assert ready is not None and (ready.status, ready.reason) == ("False", "ClusterNotReachable")

    run(body)


def test_a_recovered_member_is_ready_after_the_success_threshold() -> None:
    async def body(world: World) -> None:
        member = world.fleet["member1"]
        await world.until(5)
        member.down()
        await world.until(41)
        member.up()  # seen up at t = 50
        await world.until(79)
        ready = await world.ready("member1")
        assert ready is not None and ready.status == "False", "held for the success threshold"
        await world.until(80.5)
        ready = await world.ready("member1")
        assert ready is not None and ready.status == "True"
        assert await world.taints("member1") == []

    run(body)


def test_a_black_holed_member_does_not_delay_the_others() -> None:
    async def body(world: World) -> None:
        await world.until(5)
        world.fleet["member1"].blackhole()
        world.fleet["member2"].down()
        world.fleet["member3"].down()
        await world.until(40.5)
        for name in ("member2", "member3"):
            ready = await world.ready(name)
            assert ready is not None and (ready.status, ready.reason) == ("False", "ClusterNotReachable"), (
                name
            )
        # member1's probes time out 5 s after they start: written within threshold + one probe timeout
        ready = await world.ready("member1")
        assert ready is not None and ready.status == "True"
        await world.until(45.5)
        ready = await world.ready("member1")
        assert ready is not None and (ready.status, ready.reason) == ("False", "ClusterNotReachable")
        healthy = await world.ready("member4")
        assert healthy is not None and healthy.status == "True"

    run(body, clusters=("member1", "member2", "member3", "member4"))


def test_a_cluster_without_a_member_client_fails_status_collection() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("ghost"))
        await world.until(1)
        ready = await world.ready("ghost")
        assert ready is not None and (ready.status, ready.reason) == ("False", "StatusCollectionFailed")

    run(body, clusters=("member1",))


def test_pull_clusters_are_left_to_their_agent() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member9", mode="Pull"))
        world.fleet.add("member9")
        await world.until(30)
        assert await world.ready("member9") is None

    run(body, clusters=("member1",))


def test_a_deleted_clusters_sync_duration_series_goes_with_it() -> None:
    def synced(name: str) -> float | None:
        return REGISTRY.get_sample_value("cluster_sync_status_duration_seconds_count",
                                         {"member_cluster": name})

    async def main(clock: VirtualClock) -> None:
        world = await make_world(clock, ("member1", "member2"))
        for name in ("member1", "member2"):
            await world.client.create(cluster_body(name))
        world.start([*SETUPS, namespaces.SPEC])  # the namespace cleanup lets the execution space go
        try:
            await world.until(25)
            assert (synced("member2") or 0) >= 1, "every status sync is timed, per cluster"
            await world.client.delete(Cluster, "member2")
            await world.until(60)
            with pytest.raises(errors.NotFound):
                await world.cluster("member2")
            assert synced("member2") is None
            assert (synced("member1") or 0) >= 1
        finally:
            await world.close()

    clock = VirtualClock()
    clock.run(main(clock))
