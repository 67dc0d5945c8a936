"""Cluster failover end to end (spec §5.1, §5.2; docs/architecture.md, Failover safety): every controller, the
scheduler and simulated members on one VirtualClock.

The story of the seed blog: nginx, 3 replicas Divided with static weights member1:1 /
member2:2. member1 goes down → NotReady after the failure threshold → NoSchedule and
NoExecute taints → eviction task → {member2: 3} → member2 runs 3 ready replicas → the
task ends only then → member1's Work waits, terminating, while member1 is unreachable →
member1 comes back → Ready after the success threshold, taints gone, its Deployment and
Work deleted, member2 keeps its 3 replicas (no move back). Plus: a Pull cluster whose
agent dies, a black-holed member, a workload with nowhere else to go, and a partition.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from controllers.failover_world import World, cluster_body, make_world
from fleetkeeper import errors
from fleetkeeper.agent import lease
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.policy import PropagationPolicy, Suspension
from fleetkeeper.api.work import ResourceBinding, Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import (
    binding,
    binding_status,
    cluster,
    cluster_status,
    default_policy,
    detector,
    execution,
    graceful_eviction,
    policy_ids,
    taint_manager,
    taint_policy,
    work_status,
)
from fleetkeeper.options import Options
from fleetkeeper.runtime.context import Scope
from fleetkeeper.runtime.spec import ControllerSpec
from fleetkeeper.scheduler import controller as scheduler

T = TypeVar("T")

FAILOVER: tuple[ControllerSpec, ...] = (
    cluster.SPEC,
    cluster_status.SPEC,
    taint_policy.SPEC,
    default_policy.SPEC,
    taint_manager.SPEC,
    graceful_eviction.SPEC,
)
PIPELINE: tuple[ControllerSpec, ...] = (
    policy_ids.SPEC,
    detector.SPEC,
    binding.SPEC,
    execution.SPEC,
    work_status.SPEC,
    binding_status.SPEC,
)
AGENT: tuple[ControllerSpec, ...] = (cluster_status.SPEC, lease.SPEC, execution.SPEC, work_status.SPEC)


def nginx(replicas: int = 3, name: str = "nginx") -> Deployment:
    return Deployment.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
                },
            },
        }
    )


def weighted(name: str, weights: dict[str, int], *, purge_mode: str | None = None) -> PropagationPolicy:
    failover = None if purge_mode is None else {"cluster": {"purgeMode": purge_mode}}
    return PropagationPolicy.from_dict(
        {
            "metadata": {"name": f"{name}-propagation", "namespace": "default"},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                "failover": failover,
                "placement": {
                    "clusterAffinity": {"clusterNames": list(weights)},
                    "replicaScheduling": {
                        "replicaSchedulingType": "Divided",
                        "replicaDivisionPreference": "Weighted",
                        "weightPreference": {
                            "staticWeightList": [
                                {"targetCluster": {"clusterNames": [c]}, "weight": w}
                                for c, w in weights.items()
                            ]
                        },
                    },
                },
            },
        }
    )


class Story:
    """A running fleet with helpers to wait in virtual time."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.client = world.client

    async def wait_for(
        self, check: Callable[[], Awaitable[T | None]], *, within: float = 120.0, step: float = 0.5
    ) -> T:
        deadline = self.world.now + within
        while True:
            for _, task in self.world.planes:
                if task.done():
                    task.result()
                    raise AssertionError("a control plane stopped")
            value = await check()
            if value:
                return value
            if self.world.now >= deadline:
                raise AssertionError(f"not met within {within}s of virtual time (now {self.world.now:g})")
            await self.world.clock.sleep(step)

    async def rb(self, name: str = "nginx-deployment") -> ResourceBinding | None:
        try:
            return await self.client.get(ResourceBinding, name, "default")
        except errors.NotFound:
            return None

    async def schedule(self, name: str = "nginx-deployment") -> dict[str, int]:
        got = await self.rb(name)
        return {} if got is None else {t.name: t.replicas for t in got.spec.clusters or ()}

    async def tasks(self, name: str = "nginx-deployment") -> list[str]:
        got = await self.rb(name)
        return [] if got is None else [t.from_cluster for t in got.spec.graceful_eviction_tasks or ()]

    async def ready_replicas(self, member: str, name: str = "nginx") -> int | None:
        sim = self.world.fleet[member]
        obj = sim.engine.store.get(_deployment_key(name))
        if obj is None:
            return None
        return int((obj.get("status") or {}).get("readyReplicas") or 0)

    async def work(self, member: str) -> Work | None:
        works = (await self.client.list(Work, f"karmada-es-{member}")).items
        return works[0] if works else None

    async def health(self, member: str, name: str = "nginx-deployment") -> str | None:
        got = await self.rb(name)
        items = [] if got is None else got.status.aggregated_status or []
        return next((i.health for i in items if i.cluster_name == member), None)


def _deployment_key(name: str) -> Any:
    from fleetkeeper.members.simulated.objects import ObjectKey

    return ObjectKey("apps", "Deployment", "default", name)


@asynccontextmanager
async def fleet(
    clock: VirtualClock, push: Sequence[str], *, pull: Sequence[str] = (), options: Options | None = None
) -> AsyncIterator[Story]:
    world = await make_world(clock, [*push, *pull], options=options, pod_startup=1.0)
    for name in push:
        await world.client.create(cluster_body(name))
    for name in pull:
        await world.client.create(cluster_body(name, mode="Pull"))
    world.start([*FAILOVER, *PIPELINE, scheduler.SPEC])
    for name in pull:
        world.start(AGENT, scope=Scope(agent_cluster=name))
    try:
        yield Story(world)
    finally:
        await world.close()


async def deploy(
    story: Story, weights: dict[str, int], name: str = "nginx", *, purge_mode: str | None = None
) -> None:
    await story.wait_for(lambda: _all_ready(story, list(weights)), within=30)
    await story.client.create(nginx(3, name))
    await story.client.create(weighted(name, weights, purge_mode=purge_mode))


async def _all_ready(story: Story, names: list[str]) -> bool:
    for name in names:
        cond = await story.world.ready(name)
        if cond is None or cond.status != "True":
            return False
    return True


def test_the_seed_story_member1_fails_and_comes_back() -> None:
    clock = VirtualClock()

    async def main() -> None:
        async with fleet(clock, ["member1", "member2"]) as story:
            world = story.world
            await deploy(story, {"member1": 1, "member2": 2})
            await story.wait_for(lambda: _replicas(story, {"member1": 1, "member2": 2}))
            down_at = world.now
            world.fleet["member1"].down()

            # NotReady only after the failure threshold, then both taints
            await story.wait_for(lambda: _ready_is(story, "member1", "False"), within=60)
            assert world.now - down_at >= 30
            cond = await world.ready("member1")
            assert cond is not None and cond.reason == "ClusterNotReachable"
            await story.wait_for(
                lambda: _has_taints(
                    story,
                    "member1",
                    {"cluster.karmada.io/not-ready:NoSchedule", "cluster.karmada.io/not-ready:NoExecute"},
                )
            )

            # eviction, rescheduling, and the task kept until member2 is Healthy
            await story.wait_for(lambda: _schedule_is(story, {"member2": 3}), within=10)
            assert await story.tasks() == ["member1"]
            while await story.tasks():
                await clock.sleep(0.05)
                assert world.now - down_at < 200, "the task never ended"
            # the very instant the task is gone, the replacement already runs every replica
            assert await story.ready_replicas("member2") == 3
            assert await story.health("member2") == "Healthy"
            messages = [e.message for e in await world.timeline("nginx-deployment")]
            assert "evicted from member1 (TaintUntolerated, Gracefully)" in messages
            assert "eviction from member1 completed: member2 healthy" in messages

            # member1's Work waits, terminating, while member1 is unreachable
            await clock.sleep(120)
            old = await story.work("member1")
            assert old is not None and old.metadata.deletion_timestamp is not None

            # member1 comes back: Ready after the success threshold, taints gone, old copy deleted
            up_at = world.now
            world.fleet["member1"].up()
            await story.wait_for(lambda: _ready_is(story, "member1", "True"), within=60)
            assert world.now - up_at >= 30
            await story.wait_for(lambda: _has_taints(story, "member1", set()), within=10)
            await story.wait_for(lambda: _gone(story, "member1"), within=1200)
            assert await story.schedule() == {"member2": 3}, "no move back"
            assert await story.ready_replicas("member2") == 3

    clock.run(main())


def test_purge_mode_directly_removes_the_old_copy_before_the_new_one_grows() -> None:
    clock = VirtualClock()

    async def main() -> None:
        async with fleet(clock, ["member1", "member2"]) as story:
            world = story.world
            await deploy(story, {"member1": 1, "member2": 2}, purge_mode="Directly")
            await story.wait_for(lambda: _replicas(story, {"member1": 1, "member2": 2}))
            world.fleet["member1"].down()
            await story.wait_for(lambda: _tasks_are(story, ["member1"]), within=60)
            got = await story.rb()
            assert got is not None and [t.purge_mode for t in got.spec.graceful_eviction_tasks or ()] == [
                "Directly"
            ]
            old = await story.wait_for(lambda: _terminating_work(story, "member1"), within=10)
            assert old.metadata.deletion_timestamp is not None, "Directly: the old Work goes at once"
            await clock.sleep(60)
            assert await story.ready_replicas("member2") == 2, "no new replicas while the old copy exists"
            assert await story.work("member1") is not None, "member1 is unreachable: its Work cannot finish"
            waits = [e.message for e in await world.timeline("nginx-deployment", tl.DISPATCH_WAITING)]
            assert waits == ["new Works wait until the old copy in member1 is removed (purge mode Directly); "
                             "member1 is not Ready: its copy is removed once it answers again"], "said once"
            world.fleet["member1"].up()
            await story.wait_for(lambda: _gone(story, "member1"), within=600)
            await story.wait_for(lambda: _replicas_at(story, "member2", 3), within=60)
            await story.wait_for(lambda: _tasks_are(story, []), within=60)
            assert await story.schedule() == {"member2": 3}

    clock.run(main())


def test_a_pull_cluster_whose_agent_dies_is_failed_over() -> None:
    clock = VirtualClock()

    async def main() -> None:
        async with fleet(clock, ["member2"], pull=["member3"]) as story:
            world = story.world
            await deploy(story, {"member2": 1, "member3": 2})
            await story.wait_for(lambda: _replicas(story, {"member2": 1, "member3": 2}))
            agent = next(p for p, _ in world.planes if p.context.scope.agent_cluster == "member3")
            last = await world.client.get(lease.Lease, "member3", "karmada-cluster")
            await world.stop(agent)
            await story.wait_for(lambda: _ready_is(story, "member3", "Unknown"), within=70)
            assert last.spec.renew_time is not None
            silent = (world.clock.now() - last.spec.renew_time).total_seconds()
            assert silent == 40, silent  # exactly the grace after the last renewal
            await story.wait_for(
                lambda: _has_taints(
                    story,
                    "member3",
                    {"cluster.karmada.io/unreachable:NoSchedule", "cluster.karmada.io/not-ready:NoExecute"},
                )
            )
            await story.wait_for(lambda: _schedule_is(story, {"member2": 3}), within=10)
            await story.wait_for(lambda: _replicas_at(story, "member2", 3), within=60)
            assert await story.ready_replicas("member3") == 2, "the old copy stays until the agent returns"

    clock.run(main())


def test_a_black_holed_member_does_not_delay_the_others() -> None:
    clock = VirtualClock()

    async def main() -> None:
        async with fleet(clock, ["member1", "member2", "member3", "member4", "member5"]) as story:
            world = story.world
            await story.wait_for(lambda: _all_ready(story, ["member1", "member2"]), within=30)
            world.fleet["member1"].blackhole()
            world.fleet["member2"].down()
            failed_at = world.now
            await story.wait_for(lambda: _ready_is(story, "member2", "False"), within=60)
            # failure threshold + one status period (the first failing probe) — not delayed by member1
            assert world.now - failed_at <= 30 + 10 + 1
            await story.wait_for(lambda: _ready_is(story, "member1", "False"), within=60)
            # the black hole itself: threshold + one period + one probe timeout
            assert world.now - failed_at <= 30 + 10 + 5 + 1

    clock.run(main())


def test_no_homeless_workload_when_no_other_cluster_fits() -> None:
    clock = VirtualClock()

    async def main() -> None:
        async with fleet(clock, ["member1", "member2"]) as story:
            world = story.world
            await deploy(story, {"member1": 1})
            await story.wait_for(lambda: _replicas(story, {"member1": 3}))
            world.fleet["member1"].down()
            await story.wait_for(lambda: _tasks_are(story, ["member1"]), within=60)
            await clock.sleep(900)  # well past the 600 s graceful-eviction timeout
            assert await story.tasks() == ["member1"], "the task is kept: nowhere else to go"
            old = await story.work("member1")
            assert old is not None and old.metadata.deletion_timestamp is None, "the old copy is kept"
            kept = [e.message for e in await world.timeline("nginx-deployment", tl.EVICTION_BLOCKED)]
            assert kept and kept[0].startswith("eviction from member1 kept:")
            world.fleet["member1"].up()
            await story.wait_for(lambda: _schedule_is(story, {"member1": 3}), within=90)
            assert await story.tasks() == []
            cleared = [e.message for e in await world.timeline("nginx-deployment", tl.EVICTION_CLEARED)]
            assert cleared == ["eviction from member1 cleared: member1 recovered before the workload moved"]
            await story.wait_for(lambda: _replicas_at(story, "member1", 3), within=60)
            work = await story.work("member1")
            assert work is not None and work.metadata.uid == old.metadata.uid, "never deleted and recreated"

    clock.run(main())


def test_a_replacement_whose_dispatch_is_suspended_is_no_replacement_at_the_timeout() -> None:
    """docs/architecture.md: member2 was a target before the failure, so its Work is applied — but its
    dispatch is suspended, so it never runs member1's share: the old copy must stay."""
    clock = VirtualClock()

    async def main() -> None:
        async with fleet(clock, ["member1", "member2"]) as story:
            world = story.world
            await deploy(story, {"member1": 1, "member2": 1})
            before = await story.wait_for(lambda: _scheduled(story))
            await story.wait_for(lambda: _replicas(story, before))
            policy = await story.client.get(PropagationPolicy, "nginx-propagation", "default")
            held = policy.spec.model_copy(update={"suspension": Suspension.from_dict(
                {"dispatchingOnClusters": {"clusterNames": ["member2"]}})})
            await story.client.update(policy.model_copy(update={"spec": held}))
            await story.wait_for(lambda: _suspended(story, "member2"), within=30)
            world.fleet["member1"].down()
            await story.wait_for(lambda: _schedule_is(story, {"member2": 3}), within=90)
            await clock.sleep(900)  # well past the 600 s graceful-eviction timeout
            assert await story.tasks() == ["member1"], "the task is kept: member2 never got member1's share"
            old = await story.work("member1")
            assert old is not None and old.metadata.deletion_timestamp is None, "the old copy is kept"
            assert await story.ready_replicas("member2") == before["member2"], "its dispatch is held"
            kept = [e.message for e in await world.timeline("nginx-deployment", tl.EVICTION_BLOCKED)]
            assert any("member2 not running its new share" in m for m in kept), kept

    clock.run(main())


async def _suspended(story: Story, member: str) -> bool:
    work = await story.work(member)
    return work is not None and bool(work.spec.suspend_dispatching)


def test_the_circuit_breaker_holds_evictions_during_a_partition() -> None:
    clock = VirtualClock()

    async def main() -> None:
        names = ["member1", "member2", "member3", "member4"]
        async with fleet(clock, names) as story:
            world = story.world
            await deploy(story, {"member1": 1, "member2": 1, "member3": 1, "member4": 1})
            placed = await story.wait_for(lambda: _scheduled(story))
            for name in ("member1", "member2", "member3"):
                world.fleet[name].down()
            await story.wait_for(
                lambda: _has_taints(
                    story,
                    "member3",
                    {"cluster.karmada.io/not-ready:NoSchedule", "cluster.karmada.io/not-ready:NoExecute"},
                ),
                within=60,
            )
            await clock.sleep(120)
            assert await story.schedule() == placed and await story.tasks() == []
            paused = await world.events("EvictionPaused")
            assert {e.involved_object.name for e in paused} == {"member1", "member2", "member3"}
            for name in ("member1", "member2", "member3"):
                world.fleet[name].up()
            await story.wait_for(lambda: _all_ready(story, names), within=60)
            await clock.sleep(60)
            assert await story.schedule() == placed and await story.tasks() == [], "nothing moved"

    clock.run(main())


# --------------------------------------------------------------------------- checks


async def _replicas(story: Story, expected: dict[str, int]) -> bool:
    for member, count in expected.items():
        if await story.ready_replicas(member) != count:
            return False
    return True


async def _replicas_at(story: Story, member: str, count: int) -> bool:
    return await story.ready_replicas(member) == count


async def _ready_is(story: Story, name: str, status: str) -> bool:
    cond = await story.world.ready(name)
    return cond is not None and cond.status == status


async def _has_taints(story: Story, name: str, expected: set[str]) -> bool:
    return set(await story.world.taints(name)) == expected


async def _schedule_is(story: Story, expected: dict[str, int]) -> bool:
    return await story.schedule() == expected


async def _scheduled(story: Story) -> dict[str, int] | None:
    got = await story.schedule()
    return got if sum(got.values()) == 3 else None


async def _tasks_are(story: Story, expected: list[str]) -> bool:
    return await story.tasks() == expected


async def _terminating_work(story: Story, member: str) -> Work | None:
    work = await story.work(member)
    return work if work is not None and work.metadata.deletion_timestamp is not None else None


async def _gone(story: Story, member: str) -> bool:
    if await story.work(member) is not None:
        return False
    return story.world.fleet[member].engine.store.get(_deployment_key("nginx")) is None
