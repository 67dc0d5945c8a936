"""The taint-manager on virtual time: who is evicted, when, how, and when nobody is."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Taint
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.work import (
    AggregatedStatusItem,
    BindingSchedulePriority,
    ClusterResourceBinding,
    ResourceBinding,
)
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.controllers import taint_manager
from fleetkeeper.options import Options
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.controller import Controller

from .failover_world import World, cluster_body, make_world

NOT_READY = {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}
FLEET = ("member1", "member2", "member3", "member4")


def run(body: Callable[[World], Awaitable[None]], *, options: Options | None = None) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, FLEET, options=options)
        for name in FLEET:
            await world.client.create(cluster_body(name))
            await set_ready(world, name, "True")
        try:
            await body(world)
        finally:
            await world.close()

    clock.run(main())


async def set_ready(world: World, name: str, status: str) -> None:
    current = await world.cluster(name)
    current.status.conditions = [Condition(type="Ready", status=status, reason="Test")]  # type: ignore[arg-type]
    await world.client.update_status(current)


async def fail(world: World, name: str, *, status: str = "False") -> None:
    """What the status, cluster and policy controllers would do: NotReady plus the NoExecute taint."""
    await set_ready(world, name, status)
    current = await world.cluster(name)
    current.spec.taints = [*(current.spec.taints or ()), Taint.from_dict(NOT_READY)]
    await world.client.update(current)


async def recover(world: World, name: str) -> None:
    await set_ready(world, name, "True")
    current = await world.cluster(name)
    current.spec.taints = None
    await world.client.update(current)


def binding(
    name: str,
    clusters: dict[str, int],
    *,
    tolerations: list[dict[str, Any]] | None = None,
    failover: dict[str, Any] | None = None,
    scheduled: bool = True,
    cluster_scoped: bool = False,
) -> ResourceBinding | ClusterResourceBinding:
    placement = {"clusterAffinity": {"clusterNames": list(FLEET)}, "clusterTolerations": tolerations}
    annotations = {"policy.karmada.io/applied-placement": json.dumps(placement)} if scheduled else None
    data = {
        "metadata": {
            "name": name,
            "namespace": None if cluster_scoped else "default",
            "annotations": annotations,
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": None if cluster_scoped else "default",
                "name": name,
            },
            "replicas": sum(clusters.values()),
            "placement": placement,
            "failover": failover,
            "clusters": [{"name": n, "replicas": r} for n, r in clusters.items()],
        },
    }
    model = ClusterResourceBinding if cluster_scoped else ResourceBinding
    return model.from_dict(data)


async def rb(world: World, name: str) -> ResourceBinding:
    return await world.client.get(ResourceBinding, name, "default")


def targets(b: ResourceBinding | ClusterResourceBinding) -> dict[str, int]:
    return {t.name: t.replicas for t in b.spec.clusters or ()}


def eviction_controller(plane: ControlPlane) -> Controller:
    found = [
        r for r in plane.manager._elected if isinstance(r, Controller) and r.name == "taint-manager-eviction"
    ]
    return found[0]


def test_an_untolerated_noexecute_taint_evicts_at_once_gracefully() -> None:
    async def body(world: World) -> None:
        await world.client.create(binding("web", {"member1": 1, "member2": 2}))
        await world.client.create(binding("ops", {"member1": 2}, cluster_scoped=True))
        await world.client.create(binding("elsewhere", {"member2": 3}))
        world.start([taint_manager.SPEC])
        await world.until(10)
        await fail(world, "member1")
        await world.settle()
        web = await rb(world, "web")
        assert targets(web) == {"member2": 2}
        task = (web.spec.graceful_eviction_tasks or [])[0]
        assert (task.from_cluster, task.reason, task.producer, task.purge_mode, task.replicas) == (
            "member1",
            "TaintUntolerated",
            "TaintManager",
            "Gracefully",
            1,
        )
        assert task.creation_timestamp == world.clock.now()
        ops = await world.client.get(ClusterResourceBinding, "ops")
        assert targets(ops) == {} and [t.from_cluster for t in ops.spec.graceful_eviction_tasks or ()] == [
            "member1"
        ]
        assert targets(await rb(world, "elsewhere")) == {"member2": 3}
        assert [e.message for e in await world.timeline("web", tl.EVICTION_STARTED)] == [
            "evicted from member1 (TaintUntolerated, Gracefully)"
        ]

    run(body)


def test_a_toleration_with_seconds_evicts_exactly_at_its_deadline() -> None:
    async def body(world: World) -> None:
        tolerate = [
            {
                "key": "cluster.karmada.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 120,
            }
        ]
        await world.client.create(binding("web", {"member1": 1, "member2": 2}, tolerations=tolerate))
        world.start([taint_manager.SPEC])
        await world.until(10)
        await fail(world, "member1")
        tainted_at = world.clock.now()
        await world.until(129.9)
        assert targets(await rb(world, "web")) == {"member1": 1, "member2": 2}
        await world.until(130)
        web = await rb(world, "web")
        assert targets(web) == {"member2": 2}
        assert (web.spec.graceful_eviction_tasks or [])[0].creation_timestamp == tainted_at + timedelta(
            seconds=120
        )
        told = [e.message for e in await world.timeline("web", tl.EVICTION_TOLERATED)]
        assert told == ["member1's taint cluster.karmada.io/not-ready:NoExecute is tolerated for 120s more: "
                        "evicted then unless the taint is gone"]

    run(body)


def test_tolerating_forever_is_never_queued() -> None:
    async def body(world: World) -> None:
        tolerate = [{"key": "cluster.karmada.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]
        await world.client.create(binding("web", {"member1": 1, "member2": 2}, tolerations=tolerate))
        plane = world.start([taint_manager.SPEC])
        await world.until(10)
        await fail(world, "member1")
        await world.settle()
        queue = eviction_controller(plane).queue
        assert (len(queue), queue.parked) == (0, 0)
        await world.until(3600)
        assert targets(await rb(world, "web")) == {"member1": 1, "member2": 2}
        told = [e.message for e in await world.timeline("web", tl.EVICTION_TOLERATED)]
        assert told == ["member1's taint cluster.karmada.io/not-ready:NoExecute is tolerated forever: "
                        "never evicted from it"], "said once"
        untainted = await world.cluster("member1")  # the taint goes in one write, nothing else changing
        untainted.spec.taints = None
        await world.client.update(untainted)
        await world.until(3700)
        await fail(world, "member1")  # a new failure: said again
        await world.until(3800)
        got = [(e.time, e.message) for e in await world.timeline("web", tl.EVICTION_TOLERATED)]
        assert len(got) == 2, got

    run(body)


def test_purge_mode_comes_from_the_binding_then_the_option() -> None:
    async def body(world: World) -> None:
        await world.client.create(
            binding("direct", {"member1": 1, "member2": 1}, failover={"cluster": {"purgeMode": "Directly"}})
        )
        await world.client.create(
            binding(
                "graceful", {"member1": 1, "member2": 1}, failover={"cluster": {"purgeMode": "Gracefully"}}
            )
        )
        await world.client.create(binding("default", {"member1": 1, "member2": 1}))
        world.start([taint_manager.SPEC])
        await world.settle()
        await fail(world, "member1")
        await world.settle()
        modes = {}
        for name in ("direct", "graceful", "default"):
            modes[name] = [t.purge_mode for t in (await rb(world, name)).spec.graceful_eviction_tasks or ()]
        assert modes == {"direct": ["Directly"], "graceful": ["Gracefully"], "default": ["Directly"]}

    run(body, options=Options(leader_elect=False, no_execute_taint_eviction_purge_mode="Directly"))


def test_a_binding_scheduled_onto_a_tainted_cluster_later_is_evicted_too() -> None:
    async def body(world: World) -> None:
        world.start([taint_manager.SPEC])
        await fail(world, "member1")
        await world.settle()
        await world.client.create(binding("late", {"member1": 2}))
        await world.client.create(binding("unscheduled", {"member1": 2}, scheduled=False))
        await world.settle()
        assert targets(await rb(world, "late")) == {}
        assert targets(await rb(world, "unscheduled")) == {"member1": 2}, "never scheduled: nothing to evict"

    run(body)


def test_eviction_can_be_switched_off() -> None:
    async def body(world: World) -> None:
        await world.client.create(binding("web", {"member1": 1, "member2": 2}))
        world.start([taint_manager.SPEC])
        await fail(world, "member1")
        await world.until(60)
        assert targets(await rb(world, "web")) == {"member1": 1, "member2": 2}

    run(body, options=Options(leader_elect=False, enable_no_execute_taint_eviction=False))


def test_the_circuit_breaker_pauses_evictions_during_a_partition() -> None:
    async def body(world: World) -> None:
        for i in range(3):
            await world.client.create(binding(f"web{i}", {f"member{i + 1}": 1, "member4": 1}))
        world.start([taint_manager.SPEC])
        await world.settle()
        for name in ("member1", "member2", "member3"):
            await set_ready(world, name, "False")
        for name in ("member1", "member2", "member3"):
            await fail(world, name)
        await world.until(300)
        for i in range(3):
            web = await rb(world, f"web{i}")
            assert targets(web) == {f"member{i + 1}": 1, "member4": 1}
            assert not web.spec.graceful_eviction_tasks
        paused = await world.events("EvictionPaused", "member1")
        assert paused and paused[0].type == "Warning"
        assert paused[0].message
        assert "3 of 4 clusters are not Ready or failing their probes (75% > 55%)" in paused[0].message
        assert await world.timeline("member1", tl.EVICTION_BLOCKED)
        for name in ("member1", "member2", "member3"):
            await recover(world, name)
        await world.until(600)
        for i in range(3):
            assert targets(await rb(world, f"web{i}")) == {f"member{i + 1}": 1, "member4": 1}, "nothing moved"

    run(body)


def test_evictions_resume_when_the_partition_heals_but_the_cluster_stays_down() -> None:
    async def body(world: World) -> None:
        await world.client.create(binding("web", {"member1": 1, "member4": 1}))
        world.start([taint_manager.SPEC])
        await world.settle()
        for name in ("member1", "member2", "member3"):
            await set_ready(world, name, "False")
        await fail(world, "member1")
        await world.until(60)
        assert targets(await rb(world, "web")) == {"member1": 1, "member4": 1}
        await set_ready(world, "member2", "True")
        await world.settle()
        assert targets(await rb(world, "web")) == {"member4": 1}
        paused = [e.message for e in await world.timeline("member1", tl.EVICTION_BLOCKED)]
        resumed = [e.message for e in await world.timeline("member1", tl.EVICTION_RESUMED)]
        assert len(paused) == 1 and not paused[0].startswith("evictions resumed")
        assert len(resumed) == 1 and resumed[0].startswith("evictions resumed")

    run(body)


def test_eviction_is_paced_by_the_eviction_rate() -> None:
    async def body(world: World) -> None:
        for i in range(6):
            await world.client.create(binding(f"web{i}", {"member1": 1, "member2": 1}))
        world.start([taint_manager.SPEC])
        await world.until(10)
        await fail(world, "member1")
        await world.until(20)
        times = []
        for i in range(6):
            created = ((await rb(world, f"web{i}")).spec.graceful_eviction_tasks or [])[0].creation_timestamp
            assert created is not None
            times.append(created)
        times.sort()
        assert [(t - times[0]).total_seconds() for t in times] == [0, 0, 0, 2, 2, 2]

    run(body, options=Options(leader_elect=False, resource_eviction_rate=0.5))


def test_the_bindings_on_a_cluster_come_in_key_order_and_one_removed_meanwhile_is_skipped() -> None:
    async def body(world: World) -> None:
        for name in ("b-web", "a-web", "c-web"):
            await world.client.create(binding(name, {"member1": 1}))
        await world.client.create(binding("ops", {"member1": 2}, cluster_scoped=True))
        await world.client.create(binding("elsewhere", {"member2": 3}))
        plane = world.start([])
        informers = plane.manager.informers
        bindings = BindingInformers(informers)
        manager = taint_manager.TaintManager(plane.context, informers.informer_for(Cluster), bindings)
        bindings.add_indexer(taint_manager.BY_CLUSTER, taint_manager._targets)
        await world.until(5)
        walk = manager.bindings_on("member1")
        assert next(walk).name == "a-web"
        await world.client.delete(ResourceBinding, "b-web", "default")  # while the walk is under way
        await world.settle()
        assert [b.name for b in walk] == ["c-web", "ops"]

    run(body)


def test_the_evictions_of_a_failed_cluster_go_highest_schedule_priority_first() -> None:
    priorities = {"a": 0, "b": 50, "c": None, "d": 1000, "e": -3, "f": 50}

    async def body(world: World) -> None:
        for name, priority in priorities.items():
            made = binding(name, {"member1": 1})
            if priority is not None:
                made.spec.schedule_priority = BindingSchedulePriority(priority=priority)
            await world.client.create(made)
        world.start([taint_manager.SPEC])
        await world.until(10)
        await fail(world, "member1")
        await world.settle()
        evicted = [await rb(world, name) for name in priorities]
        assert all(targets(b) == {} for b in evicted)
        evicted.sort(key=lambda b: int(b.metadata.resource_version or 0))
        assert [b.name for b in evicted] == ["d", "b", "f", "a", "c", "e"]

    run(body)


def test_state_preservation_rules_put_the_failed_cluster_state_into_the_task() -> None:
    preserve = {"cluster": {"purgeMode": "Directly", "statePreservation": {
        "rules": [{"aliasLabelName": "test-alias", "jsonPath": "{.replicas}"}]}}}

    async def body(world: World) -> None:
        await world.client.create(binding("stateful", {"member1": 3}, failover=preserve))
        directly = {"cluster": {"purgeMode": "Directly"}}
        await world.client.create(binding("plain", {"member1": 3}, failover=directly))
        world.start([taint_manager.SPEC])
        await world.until(10)
        await fail(world, "member1")
        await world.until(60)
        assert targets(await rb(world, "plain")) == {}, "no rules: evicted at once"
        assert targets(await rb(world, "stateful")) == {"member1": 3}, "no status reported yet: it waits"
        waits = [e.message for e in await world.timeline("stateful", tl.EVICTION_BLOCKED)]
        assert waits == ["eviction from member1 waits: state preservation failed: the failed cluster has "
                         "reported no status to preserve state from"], "said once, not at every retry"
        assert len(await world.events("EvictWorkloadFromClusterFailed", "stateful")) == 2  # binding, template
        reported = await rb(world, "stateful")
        item = AggregatedStatusItem(cluster_name="member1", status={"replicas": 3})
        reported.status.aggregated_status = [item]
        await world.client.update_status(reported)
        await world.until(61)
        stateful = await rb(world, "stateful")
        assert targets(stateful) == {}
        task = (stateful.spec.graceful_eviction_tasks or [])[0]
        got = (task.from_cluster, task.purge_mode, task.preserved_label_state, task.clusters_before_failover)
        assert got == ("member1", "Directly", {"test-alias": "3"}, None)
        plain = (await rb(world, "plain")).spec.graceful_eviction_tasks or []
        assert [t.preserved_label_state for t in plain] == [None]

    run(body)
