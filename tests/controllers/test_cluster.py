"""The cluster controller on virtual time: execution spaces, system taints, the heartbeat
monitor of Pull clusters (with a real in-process agent renewing the Lease) and deletion."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.agent import lease
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.work import ResourceBinding, Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import cluster, cluster_status, namespaces
from fleetkeeper.runtime.context import Scope

from .failover_world import World, cluster_body, make_world


def run(body: Callable[[World], Awaitable[None]], clusters: tuple[str, ...] = ("member1",)) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, clusters)
        try:
            await body(world)
        finally:
            await world.close()

    clock.run(main())


async def set_ready(world: World, name: str, status: str, reason: str = "Test") -> None:
    current = await world.cluster(name)
    conds = [c for c in current.status.conditions or () if c.type != "Ready"]
    conds.append(Condition(type="Ready", status=status, reason=reason))  # type: ignore[arg-type]
    current.status.conditions = conds
    await world.client.update_status(current)


def test_a_new_cluster_gets_its_execution_space_finalizer_and_not_ready_taint() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        world.start([cluster.SPEC])
        await world.settle()
        ns = await world.client.get(Namespace, "karmada-es-member1")
        assert ns.labels() == {"karmada.io/system": "true",
                               "kubernetes.io/metadata.name": "karmada-es-member1"}
        got = await world.cluster("member1")
        assert got.metadata.finalizers == ["karmada.io/cluster-controller"]
        assert await world.taints("member1") == ["cluster.karmada.io/not-ready:NoSchedule"]
        assert await world.events("CreateExecutionSpaceSucceed", "member1")
        assert await world.events("TaintClusterSucceed", "member1")

    run(body)


@pytest.mark.parametrize(
    ("sequence", "expected"),
    [
        (["True"], []),
        (["False"], ["cluster.karmada.io/not-ready:NoSchedule"]),
        (["Unknown"], ["cluster.karmada.io/unreachable:NoSchedule"]),
        (["False", "Unknown"], ["cluster.karmada.io/unreachable:NoSchedule"]),
        (["Unknown", "False"], ["cluster.karmada.io/not-ready:NoSchedule"]),
        (["False", "True"], []),
    ],
    ids=[
        "ready: no taint",
        "not ready: not-ready",
        "unknown: unreachable",
        "false to unknown swaps",
        "unknown to false swaps",
        "back to ready removes",
    ],
)
def test_system_taints_follow_ready(sequence: list[str], expected: list[str]) -> None:
    async def body(world: World) -> None:
        await world.client.create(
            cluster_body("member1", taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}])
        )
        world.start([cluster.SPEC])
        await world.settle()
        for status in sequence:
            await set_ready(world, "member1", status)
            await world.settle()
        assert await world.taints("member1") == ["cluster.karmada.io/not-ready:NoExecute", *expected]

    run(body)


def test_taint_changes_are_on_the_timeline() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        world.start([cluster.SPEC])
        await world.settle()
        await set_ready(world, "member1", "Unknown")
        await world.settle()
        messages = [e.message for e in await world.timeline("member1")]
        assert "taint cluster.karmada.io/unreachable:NoSchedule added (Ready=Unknown)" in messages
        assert "taint cluster.karmada.io/not-ready:NoSchedule removed (Ready=Unknown)" in messages

    run(body)


def test_a_taint_entry_gives_the_ready_reason_as_its_reason_and_the_controller_as_its_component() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        world.start([cluster.SPEC])
        await world.settle()
        await set_ready(world, "member1", "Unknown", reason="ClusterStatusUnknown")
        await world.settle()
        rows = [(e.message.split()[2], e.reason, e.component) for e in await world.timeline("member1")
                if e.action in (tl.TAINT_ADDED, tl.TAINT_REMOVED)]
        assert sorted(rows) == [("added", "ClusterStatusUnknown", "cluster-controller"),
                                ("added", "NoReadyCondition", "cluster-controller"),
                                ("removed", "ClusterStatusUnknown", "cluster-controller")], rows

    run(body)


def test_a_pull_cluster_whose_agent_dies_becomes_unknown_after_the_grace_period() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member3", mode="Pull"))
        world.start([cluster.SPEC, namespaces.SPEC])
        agent = world.start([cluster_status.SPEC, lease.SPEC], scope=Scope(agent_cluster="member3"))
        await world.until(25)
        ready = await world.ready("member3")
        assert ready is not None and ready.status == "True"
        held = await world.client.get(Lease, "member3", "karmada-cluster")
        assert held.spec.holder_identity == "member3" and held.spec.lease_duration_seconds == 40
        owner = (held.metadata.owner_references or [])[0]
        assert (owner.kind, owner.name) == ("Cluster", "member3")
        last_renewal = held.spec.renew_time
        await world.stop(agent)  # the agent dies at t=25; it last renewed at t=20
        await world.until(59)
        ready = await world.ready("member3")
        assert ready is not None and ready.status == "True"
        await world.until(70.5)
        ready = await world.ready("member3")
        assert ready is not None and (ready.status, ready.reason) == ("Unknown", "ClusterStatusUnknown")
        assert (await world.client.get(Lease, "member3", "karmada-cluster")).spec.renew_time == last_renewal
        assert await world.taints("member3") == ["cluster.karmada.io/unreachable:NoSchedule"]
        assert "Ready=Unknown (ClusterStatusUnknown)" in [
            e.message for e in await world.timeline("member3", tl.CONDITION_CHANGED)
        ]
        # the agent comes back: the lease and its status controller make it Ready again
        world.start([cluster_status.SPEC, lease.SPEC], scope=Scope(agent_cluster="member3"))
        await world.until(72)
        ready = await world.ready("member3")
        assert ready is not None and ready.status == "True"
        assert await world.taints("member3") == []

    run(body, clusters=("member3",))


def test_a_pull_cluster_that_never_reports_gets_the_startup_grace() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member3", mode="Pull"))
        world.start([cluster.SPEC, namespaces.SPEC])
        await world.until(59)
        assert await world.ready("member3") is None
        await world.until(66)
        ready = await world.ready("member3")
        assert ready is not None and (ready.status, ready.reason) == ("Unknown", "ClusterStatusNeverUpdated")

    run(body, clusters=("member3",))


def test_push_clusters_never_become_unknown() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        world.start([cluster.SPEC])
        await set_ready(world, "member1", "True")
        await world.until(300)
        ready = await world.ready("member1")
        assert ready is not None and ready.status == "True"

    run(body)


def binding_on(name: str) -> ResourceBinding:
    return ResourceBinding.from_dict(
        {
            "metadata": {"name": "nginx-deployment", "namespace": "default"},
            "spec": {
                "resource": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "namespace": "default",
                    "name": "nginx",
                },
                "clusters": [{"name": name, "replicas": 1}],
            },
        }
    )


def work_in(cluster_name: str, finalizers: list[str] | None = None) -> Work:
    meta: dict[str, Any] = {
        "name": "nginx-687f7fb96f",
        "namespace": f"karmada-es-{cluster_name}",
        "finalizers": finalizers,
    }
    return Work.from_dict({"metadata": meta, "spec": {"workload": {"manifests": []}}})


def test_deleting_a_cluster_cleans_its_execution_space_then_waits_for_bindings() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        world.start([cluster.SPEC, namespaces.SPEC])  # the namespace cleanup lets the execution space go
        await world.settle()
        await world.client.create(work_in("member1"))
        placed = await world.client.create(binding_on("member1"))
        await world.client.delete(Cluster, "member1")
        await world.until(25)
        assert not (await world.client.list(Work, "karmada-es-member1")).items
        with pytest.raises(errors.NotFound):
            await world.client.get(Namespace, "karmada-es-member1")
        assert (await world.cluster("member1")).metadata.deletion_timestamp is not None, (
            "a binding still uses it"
        )
        await world.client.delete(ResourceBinding, placed.name, "default")
        await world.until(40)
        with pytest.raises(errors.NotFound):
            await world.cluster("member1")
        assert await world.events("RemoveExecutionSpaceSucceed", "member1")

    run(body)


def test_deleting_an_unready_pull_cluster_releases_its_works() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member3", mode="Pull"))
        world.start([cluster.SPEC, namespaces.SPEC])
        await world.settle()
        await set_ready(world, "member3", "Unknown")
        await world.client.create(work_in("member3", ["karmada.io/execution-controller"]))
        await world.client.delete(Cluster, "member3")
        await world.until(30)
        assert not (await world.client.list(Work, "karmada-es-member3")).items
        with pytest.raises(errors.NotFound):
            await world.cluster("member3")

    run(body, clusters=("member3",))


def test_a_deleted_execution_space_comes_back_once_the_old_one_is_gone() -> None:
    async def body(world: World) -> None:
        await world.client.create(cluster_body("member1"))
        world.start([cluster.SPEC, namespaces.SPEC])
        await world.settle()
        first = await world.client.get(Namespace, "karmada-es-member1")
        await world.client.create(work_in("member1"))
        await world.client.delete(Namespace, "karmada-es-member1")
        await world.until(world.now + 30)
        again = await world.client.get(Namespace, "karmada-es-member1")
        assert again.metadata.uid != first.metadata.uid
        assert again.metadata.deletion_timestamp is None
        assert not (await world.client.list(Work, "karmada-es-member1")).items, "emptied on the way"
        created = await world.events("CreateExecutionSpaceSucceed", "member1")
        assert sum(e.count or 0 for e in created) == 2, "twice, counted on one Event"

    run(body)
