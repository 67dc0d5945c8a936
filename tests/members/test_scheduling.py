"""Placement: first fit by requests, Pending with a reason, preemption, node loss, scale down."""

from __future__ import annotations

from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster

from .helpers import on_cluster, pod, pods_by_node, ref, status, workload

NODE0, NODE1, NODE2 = "member1-node-000", "member1-node-001", "member1-node-002"


async def pod_status(cluster: SimulatedCluster, name: str) -> dict[str, object]:
    live = await cluster.get(ObjectRef("v1", "Pod", "default", name))
    assert live is not None
    conditions = live["status"].get("conditions", [])
    return {"node": live["spec"].get("nodeName", ""), "phase": live["status"]["phase"],
            "ready": any(c["type"] == "Ready" and c["status"] == "True" for c in conditions),
            "conditions": conditions}


def test_pods_go_first_fit_onto_nodes_in_name_order() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, int]:
        await cluster.apply(workload("Deployment", "web", replicas=6, cpu="3"))
        return {node: len(names) for node, names in (await pods_by_node(cluster)).items()}

    assert on_cluster(main) == {NODE0: 2, NODE1: 2, NODE2: 2}


def test_a_pod_that_fits_nowhere_is_pending_with_the_schedulers_reason() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "web", replicas=7, cpu="3"))
        await clock.sleep(5)
        pending = (await pods_by_node(cluster))[""]
        assert len(pending) == 1
        state = await pod_status(cluster, pending[0])
        assert (state["phase"], state["ready"]) == ("Pending", False)
        assert state["conditions"] == [{
            "type": "PodScheduled", "status": "False", "lastProbeTime": None, "reason": "Unschedulable",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
            "message": "0/3 nodes are available: 3 Insufficient cpu.",
        }]
        deploy = await status(cluster, workload("Deployment", "web"))
        assert (deploy["replicas"], deploy["readyReplicas"], deploy["unavailableReplicas"]) == (7, 6, 1)
        summary = (await cluster.summary()).resource_summary
        assert summary["allocating"] == {"cpu": "3", "memory": "0", "pods": "1"}
        assert summary["allocated"] == {"cpu": "18", "memory": "0", "pods": "6"}
        assert summary["allocatable"] == {"cpu": "24", "memory": "96Gi", "pods": "330"}

    on_cluster(main)


def test_a_higher_priority_pod_preempts_and_the_victim_waits_until_room_is_freed() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "low", replicas=6, cpu="4", priority=0))
        await clock.sleep(5)
        before = await pods_by_node(cluster)
        await cluster.apply(pod("important", cpu="4", priority=1000))
        after = await pods_by_node(cluster)
        assert "important" in after[NODE0]
        victims = set(before[NODE0]) - set(after[NODE0])
        assert len(victims) == 1 and len(after[""]) == 1  # the replacement of the victim waits
        await clock.sleep(5)
        assert (await pod_status(cluster, "important"))["ready"] is True
        low = await status(cluster, workload("Deployment", "low"))
        assert (low["replicas"], low["readyReplicas"]) == (6, 5)

        await cluster.delete(ObjectRef("v1", "Pod", "default", "important"))
        assert "" not in await pods_by_node(cluster)
        await clock.sleep(5)
        assert (await status(cluster, workload("Deployment", "low")))["readyReplicas"] == 6

    on_cluster(main)


def test_a_lower_priority_pod_never_preempts() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "high", replicas=6, cpu="4", priority=1000))
        await cluster.apply(pod("humble", cpu="4", priority=0))
        assert (await pod_status(cluster, "humble"))["phase"] == "Pending"
        assert len((await pods_by_node(cluster))[""]) == 1

    on_cluster(main)


def test_preemption_picks_the_node_whose_victims_matter_least() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[str]:
        for name, node_priority in (("a", 500), ("b", 100), ("c", 500)):
            await cluster.apply(pod(name, cpu="8", priority=node_priority))
        await cluster.apply(pod("vip", cpu="8", priority=1000))
        return sorted(p["metadata"]["name"] for p in await cluster.list("v1", "Pod"))

    assert on_cluster(main) == ["a", "c", "vip"]


def test_losing_nodes_makes_pods_that_no_longer_fit_pending_and_moves_those_that_do() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(pod("first", cpu="7"))
        await cluster.apply(pod("second", cpu="7"))
        await cluster.apply(pod("third", cpu="7"))
        await clock.sleep(5)
        assert await pods_by_node(cluster) == {NODE0: ["first"], NODE1: ["second"], NODE2: ["third"]}
        await cluster.delete(ObjectRef("v1", "Pod", "default", "first"))

        cluster.set_nodes(1)  # the last nodes by name go first: node-002, then node-001
        assert await pods_by_node(cluster) == {NODE0: ["third"], "": ["second"]}
        moved = await pod_status(cluster, "third")
        assert (moved["phase"], moved["ready"]) == ("Pending", False)  # starting over on its new node
        await clock.sleep(2)
        assert (await pod_status(cluster, "third"))["ready"] is True
        assert (await cluster.summary()).node_summary == {"totalNum": 1, "readyNum": 1}
        assert [n["metadata"]["name"] for n in await cluster.list("v1", "Node")] == [NODE0]

        cluster.set_nodes(3)
        assert await pods_by_node(cluster) == {NODE0: ["third"], NODE1: ["second"]}

    on_cluster(main)


def test_deleting_a_node_object_loses_that_node() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(pod("lonely", cpu="1"))
        assert await cluster.delete(ObjectRef("v1", "Node", "", NODE0)) is True
        assert await pods_by_node(cluster) == {NODE1: ["lonely"]}
        assert (await cluster.summary()).node_summary["totalNum"] == 2

    on_cluster(main)


def test_scale_down_removes_the_newest_pods_first() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        for replicas in (1, 2, 3):
            await cluster.apply(workload("Deployment", "web", replicas=replicas))
            await clock.sleep(10)
        pods = await cluster.list("v1", "Pod")
        pods.sort(key=lambda p: p["metadata"]["creationTimestamp"])
        by_age = [p["metadata"]["name"] for p in pods]
        await cluster.apply(workload("Deployment", "web", replicas=1))
        assert [p["metadata"]["name"] for p in await cluster.list("v1", "Pod")] == by_age[:1]

    on_cluster(main)


def test_node_resources_and_count_are_configurable() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        summary = await cluster.summary()
        assert summary.resource_summary["allocatable"] == {"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": "2",
                                                           "pods": "10"}
        pinned = pod("gpu", cpu="500m", nodeSelector={"kubernetes.io/hostname": "member1-node-001"})
        await cluster.apply(pinned)
        assert await pods_by_node(cluster) == {"member1-node-001": ["gpu"]}

    on_cluster(main, nodes=2, node_resources={"cpu": "1", "memory": "1Gi", "pods": 5, "nvidia.com/gpu": 1})


def test_priority_class_names_resolve_to_their_value() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> int:
        await cluster.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "gold"}, "value": 5000})
        await cluster.apply(pod("vip", priorityClassName="gold"))
        live = await cluster.get(ref(pod("vip")))
        assert live is not None
        return int(live["spec"]["priority"])

    assert on_cluster(main) == 5000


def test_a_pod_whose_preemption_policy_is_never_waits_instead_of_preempting() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "polite"}, "value": 1000, "preemptionPolicy": "Never"})
        await cluster.apply(workload("Deployment", "low", replicas=6, cpu="4", priority=0))
        await cluster.apply(pod("by-class", cpu="4", priorityClassName="polite"))
        await cluster.apply(pod("by-pod", cpu="4", priority=1000, preemptionPolicy="Never"))
        await cluster.apply(pod("pushy", cpu="4", priority=1000))
        pending = (await pods_by_node(cluster))[""]
        # the two polite pods wait; pushy preempted a low pod, whose replacement waits too
        assert {"by-class", "by-pod"} <= set(pending) and "pushy" not in pending
        assert len(pending) == 3 and any(name.startswith("low-") for name in pending)
        live = await cluster.get(ref(pod("by-class")))
        assert live is not None
        assert (live["spec"]["priority"], live["spec"]["preemptionPolicy"]) == (1000, "Never")
        pushy = await cluster.get(ref(pod("pushy")))
        assert pushy is not None and pushy["spec"]["preemptionPolicy"] == "PreemptLowerPriority"

    on_cluster(main)
