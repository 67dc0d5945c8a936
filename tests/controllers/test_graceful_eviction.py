"""The graceful-eviction controller on virtual time: tasks end when it is safe, and only then."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.work import (
    AggregatedStatusItem,
    GracefulEvictionTask,
    ResourceBinding,
)
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import graceful_eviction
from fleetkeeper.options import Options
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.reconcile import Request
from fleetkeeper.runtime.recorder import Sink

from .failover_world import World, cluster_body, make_world

FLEET = ("member1", "member2", "member3")


def run(body: Callable[[World], Awaitable[None]], *, options: Options | None = None) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, FLEET, options=options)
        for name in FLEET:
            await world.client.create(cluster_body(name))
            await set_ready(world, name, "True")
        await set_ready(world, "member1", "False")
        try:
            await body(world)
        finally:
            await world.close()

    clock.run(main())


async def set_ready(world: World, name: str, status: str) -> None:
    current = await world.cluster(name)
    current.status.conditions = [Condition(type="Ready", status=status, reason="Test")]  # type: ignore[arg-type]
    await world.client.update_status(current)


def evicted_binding(clusters: dict[str, int], *, task: dict[str, Any] | None = None) -> ResourceBinding:
    placement = {"clusterAffinity": {"clusterNames": list(FLEET)}}
    fields = {
        "fromCluster": "member1",
        "reason": "TaintUntolerated",
        "producer": "TaintManager",
        "purgeMode": "Gracefully",
        "replicas": 1,
        **(task or {}),
    }
    return ResourceBinding.from_dict(
        {
            "metadata": {
                "name": "web",
                "namespace": "default",
                "annotations": {"policy.karmada.io/applied-placement": json.dumps(placement)},
            },
            "spec": {
                "resource": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "namespace": "default",
                    "name": "web",
                },
                "replicas": 3,
                "placement": placement,
                "clusters": [{"name": n, "replicas": r} for n, r in clusters.items()],
                "gracefulEvictionTasks": [fields],
            },
        }
    )


async def rb(world: World) -> ResourceBinding:
    return await world.client.get(ResourceBinding, "web", "default")


async def report(
    world: World, *, scheduled: bool = True, health: dict[str, str] | None = None, schedule_ok: bool = True
) -> None:
    """What the scheduler and the binding-status controller would write."""
    current = await rb(world)
    status = current.status
    if scheduled:
        status.scheduler_observed_generation = current.metadata.generation or 0
        status.last_scheduled_time = world.clock.now()
        status.conditions = [
            Condition(
                type="Scheduled",
                status="True" if schedule_ok else "False",
                reason="Success" if schedule_ok else "NoClusterFit",
            )
        ]
    status.aggregated_status = [
        AggregatedStatusItem.from_dict({"clusterName": n, "applied": True, "health": h})
        for n, h in (health or {}).items()
    ]
    await world.client.update_status(current)


def tasks(binding: ResourceBinding) -> list[str]:
    return [t.from_cluster for t in binding.spec.graceful_eviction_tasks or ()]


def test_a_task_is_stamped_then_dropped_once_the_new_schedule_is_healthy() -> None:
    async def body(world: World) -> None:
        await world.client.create(evicted_binding({"member2": 3}))
        world.start([graceful_eviction.SPEC])
        await world.until(5)
        stamped = (await rb(world)).spec.graceful_eviction_tasks or []
        assert stamped and stamped[0].creation_timestamp is not None
        await report(world, health={"member2": "Unhealthy"})
        await world.until(30)
        assert tasks(await rb(world)) == ["member1"]
        await report(world, health={"member2": "Healthy"})
        await world.settle()
        assert tasks(await rb(world)) == []
        assert [e.message for e in await world.timeline("web", tl.EVICTION_COMPLETED)] == [
            "eviction from member1 completed: member2 healthy"
        ]
        succeeded = await world.events("EvictWorkloadFromClusterSucceed")
        assert sorted(e.involved_object.kind or "" for e in succeeded) == ["Deployment", "ResourceBinding"]
        assert succeeded[0].message == "Evict from cluster member1 succeed."

    run(body)


def test_a_task_is_never_dropped_while_the_workload_has_no_replacement() -> None:
    async def body(world: World) -> None:
        await world.client.create(evicted_binding({}))
        world.start([graceful_eviction.SPEC])
        await world.settle()
        await report(world, health={}, schedule_ok=False)
        await world.until(3600)
        assert tasks(await rb(world)) == ["member1"], (
            "an empty schedule is never all healthy, not even at timeout"
        )
        blocked = [e.message for e in await world.timeline("web", tl.EVICTION_BLOCKED)]
        assert blocked == ["eviction from member1 kept: scheduling failed (NoClusterFit), no replacement"]

    run(body)


def test_at_the_timeout_a_dispatched_replacement_lets_the_task_go() -> None:
    async def body(world: World) -> None:
        await world.client.create(evicted_binding({"member2": 3}))
        world.start([graceful_eviction.SPEC])
        await world.settle()
        await report(world, health={"member2": "Unhealthy"})
        await world.until(599)
        assert tasks(await rb(world)) == ["member1"]
        await world.until(601)
        assert tasks(await rb(world)) == []
        assert [e.message for e in await world.timeline("web", tl.EVICTION_COMPLETED)] == [
            "eviction from member1 completed: grace period of 600s elapsed; replacement dispatched to member2"
        ]

    run(body)


def test_a_directly_task_times_out_even_without_a_replacement() -> None:
    async def body(world: World) -> None:
        await world.client.create(
            evicted_binding({}, task={"purgeMode": "Directly", "gracePeriodSeconds": 60})
        )
        world.start([graceful_eviction.SPEC])
        await world.settle()
        await report(world, health={}, schedule_ok=False)
        await world.until(61)
        assert tasks(await rb(world)) == []

    run(body)


def test_recovery_before_the_move_clears_the_task_and_restores_the_cluster() -> None:
    async def body(world: World) -> None:
        await world.client.create(evicted_binding({}, task={"replicas": 3}))
        world.start([graceful_eviction.SPEC])
        await world.settle()
        await report(world, health={}, schedule_ok=False)
        await world.until(100)
        assert tasks(await rb(world)) == ["member1"]
        await set_ready(world, "member1", "True")
        await world.settle()
        got = await rb(world)
        assert tasks(got) == []
        assert [(t.name, t.replicas) for t in got.spec.clusters or ()] == [("member1", 3)]
        assert [e.message for e in await world.timeline("web", tl.EVICTION_CLEARED)] == [
            "eviction from member1 cleared: member1 recovered before the workload moved"
        ]

    run(body)


def test_recovery_after_the_move_does_not_bring_the_workload_back() -> None:
    async def body(world: World) -> None:
        await world.client.create(evicted_binding({"member2": 3}))
        world.start([graceful_eviction.SPEC])
        await world.until(1)
        await report(world, health={"member2": "Unhealthy"})
        await set_ready(world, "member1", "True")
        await world.until(30)
        got = await rb(world)
        assert tasks(got) == ["member1"] and [t.name for t in got.spec.clusters or ()] == ["member2"]

    run(body)


def test_suppressed_tasks_wait_for_a_person() -> None:
    async def body(world: World) -> None:
        await world.client.create(
            evicted_binding({"member2": 3}, task={"suppressDeletion": True, "reason": "ApplicationFailure"})
        )
        world.start([graceful_eviction.SPEC])
        await world.settle()
        await report(world, health={"member2": "Healthy"})
        await world.until(7200)
        assert tasks(await rb(world)) == ["member1"]
        confirmed = await rb(world)
        confirmed.spec.graceful_eviction_tasks[0].suppress_deletion = False  # type: ignore[index]
        await world.client.update(confirmed)
        await world.settle()
        assert tasks(await rb(world)) == []

    run(body)


def test_a_stale_read_never_loses_a_task_another_writer_added() -> None:
    """The reconciler decides on its (stale) cache, the write conflicts, it re-reads and decides again."""
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, FLEET)
        for name in FLEET:
            await world.client.create(cluster_body(name))
            await set_ready(world, name, "True")
        await world.client.create(
            evicted_binding({"member2": 3}, task={"creationTimestamp": "2026-01-01T00:00:00Z"})
        )
        await report(world, health={"member2": "Healthy"})
        informers = InformerFactory(world.client, clock=clock)
        clusters = informers.informer_for(Cluster)
        bindings = BindingInformers(informers)
        bindings.add_indexer(graceful_eviction.BY_SOURCE, lambda b: [])
        running = asyncio.get_running_loop().create_task(informers.run())
        await informers.wait_for_sync()
        running.cancel()  # from here on the cache is stale
        with contextlib.suppress(asyncio.CancelledError):
            await running
        newer = await rb(world)
        newer.spec.graceful_eviction_tasks = [
            *(newer.spec.graceful_eviction_tasks or ()),
            GracefulEvictionTask(from_cluster="member3", reason="TaintUntolerated", producer="TaintManager"),
        ]
        await world.client.update(newer)
        await report(world, health={"member2": "Healthy"})
        ctx = Context(
            client=world.client,
            clock=clock,
            options=world.options,
            members=None,  # type: ignore[arg-type]
            interpreter=None,  # type: ignore[arg-type]
            sink=Sink(world.client),
            member_objects=None,  # type: ignore[arg-type]
        )
        reconciler = graceful_eviction.GracefulEvictionReconciler(ctx, clusters, bindings)
        await reconciler.reconcile(Request("default", "web"))
        got = (await rb(world)).spec.graceful_eviction_tasks or []
        assert [(t.from_cluster, t.creation_timestamp is not None) for t in got] == [("member3", True)]
        await world.close()

    clock.run(main())
