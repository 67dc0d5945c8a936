"""The ClusterTaintPolicy controller and the default-policy installer on virtual time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import cluster, default_policy, taint_policy
from fleetkeeper.options import Options

from .failover_world import World, cluster_body, make_world

NOT_READY_EXEC = "cluster.karmada.io/not-ready:NoExecute"
NOT_READY_SCHED = "cluster.karmada.io/not-ready:NoSchedule"


def run(body: Callable[[World], Awaitable[None]], *, options: Options | None = None) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1", "member2"), options=options)
        try:
            await body(world)
        finally:
            await world.close()

    clock.run(main())


async def set_ready(world: World, name: str, status: str) -> None:
    current = await world.cluster(name)
    current.status.conditions = [Condition(type="Ready", status=status, reason="Test")]  # type: ignore[arg-type]
    await world.client.update_status(current)


def test_the_default_policy_is_installed_once_and_left_alone_after() -> None:
    async def body(world: World) -> None:
        world.start([default_policy.SPEC])
        await world.settle()
        installed = await world.client.get(ClusterTaintPolicy, "fleetkeeper-default-not-ready")
        edited = installed.deep_copy()
        edited.metadata.labels = {**installed.labels(), "edited": "yes"}
        await world.client.update(edited)
        assert not await default_policy.Installer(world.planes[0][0].context).install()
        got = await world.client.get(ClusterTaintPolicy, "fleetkeeper-default-not-ready")
        assert got.labels()["edited"] == "yes"

    run(body)


def test_the_default_policy_can_be_turned_off() -> None:
    async def body(world: World) -> None:
        world.start([default_policy.SPEC])
        await world.settle()
        assert not (await world.client.list(ClusterTaintPolicy)).items

    run(body, options=Options(leader_elect=False, default_cluster_taint_policy=False))


def test_policy_taints_follow_conditions_beside_the_system_taints() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        await world.client.create(cluster_body("member2"))
        world.start([cluster.SPEC, taint_policy.SPEC, default_policy.SPEC])
        await world.settle()
        await set_ready(world, "member1", "True")
        await set_ready(world, "member2", "True")
        await world.settle()
        assert await world.taints("member1") == []
        await set_ready(world, "member1", "False")
        await world.settle()
        assert sorted(await world.taints("member1")) == [NOT_READY_EXEC, NOT_READY_SCHED]
        assert await world.taints("member2") == []
        added = next(t for t in (await world.cluster("member1")).spec.taints or () if t.effect == "NoExecute")
        assert added.time_added == world.clock.now()
        await set_ready(world, "member1", "Unknown")
        await world.settle()
        assert sorted(await world.taints("member1")) == [
            NOT_READY_EXEC,
            "cluster.karmada.io/unreachable:NoSchedule",
        ]
        current = (await world.cluster("member1")).spec.taints or ()
        assert next(t for t in current if t.effect == "NoExecute") == added
        await set_ready(world, "member1", "True")
        await world.settle()
        assert await world.taints("member1") == []
        messages = [e.message for e in await world.timeline("member1", tl.TAINT_ADDED)]
        assert (
            "taint cluster.karmada.io/not-ready:NoExecute added by ClusterTaintPolicy "
            "fleetkeeper-default-not-ready (Ready=False)"
        ) in messages
        removed = [e.message for e in await world.timeline("member1", tl.TAINT_REMOVED)]
        assert (
            "taint cluster.karmada.io/not-ready:NoExecute removed by ClusterTaintPolicy "
            "fleetkeeper-default-not-ready (Ready=True)"
        ) in removed
        events = await world.events("TaintClusterSucceed", "member1")
        assert any(e.message and e.message.startswith("Update Cluster(member1) with taints(") for e in events)

    run(body)


def test_a_new_policy_wakes_the_clusters_it_targets_and_deleting_it_keeps_its_taints() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        await world.client.create(cluster_body("member2"))
        world.start([taint_policy.SPEC])
        await set_ready(world, "member1", "False")
        await set_ready(world, "member2", "False")
        await world.settle()
        assert await world.taints("member1") == []
        await world.client.create(
            ClusterTaintPolicy.from_dict(
                {
                    "metadata": {"name": "member1-only"},
                    "spec": {
                        "targetClusters": {"clusterNames": ["member1"]},
                        "addOnConditions": [
                            {"conditionType": "Ready", "operator": "In", "statusValues": ["False"]}
                        ],
                        "taints": [{"key": "failover", "effect": "NoExecute"}],
                    },
                }
            )
        )
        await world.settle()
        assert await world.taints("member1") == ["failover:NoExecute"]
        assert await world.taints("member2") == []
        await world.client.delete(ClusterTaintPolicy, "member1-only")
        await set_ready(world, "member1", "True")
        await world.settle()
        assert await world.taints("member1") == ["failover:NoExecute"]

    run(body)
