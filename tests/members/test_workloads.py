"""Workload controllers keep Kubernetes' status fields as pods start, on virtual time."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import RUN_SECONDS_ANNOTATION, SimulatedCluster

from .helpers import on_cluster, pod, pods_by_node, ref, status, workload


def pick(status_: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: status_.get(name) for name in names}


def condition(status_: dict[str, Any], kind: str) -> tuple[str, str] | None:
    found = next((c for c in status_.get("conditions", []) if c["type"] == kind), None)
    return None if found is None else (found["status"], found.get("reason", ""))


def test_deployment_status_evolves_as_pods_start() -> None:
    manifest = workload("Deployment", "web", replicas=3)

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(manifest)
        fields = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                  "unavailableReplicas")
        created = await status(cluster, manifest)
        assert pick(created, *fields) == {
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": None,
            "availableReplicas": None, "unavailableReplicas": 3}
        assert condition(created, "Available") == ("False", "MinimumReplicasUnavailable")
        assert condition(created, "Progressing") == ("True", "ReplicaSetUpdated")
        await clock.sleep(1.9)
        assert "readyReplicas" not in await status(cluster, manifest)
        await clock.sleep(0.1)
        ready = await status(cluster, manifest)
        assert pick(ready, *fields) == {
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3, "unavailableReplicas": None}
        assert condition(ready, "Available") == ("True", "MinimumReplicasAvailable")
        assert condition(ready, "Progressing") == ("True", "NewReplicaSetAvailable")

    on_cluster(main)


def test_pod_startup_time_is_configurable() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[float]:
        await cluster.apply(workload("Deployment", "web", replicas=1))
        seen = []
        for _ in range(3):
            await clock.sleep(5)
            seen.append(float((await status(cluster, workload("Deployment", "web"))).get("readyReplicas", 0)))
        return seen

    assert on_cluster(main, pod_startup=12) == [0, 0, 1]


def test_a_template_change_replaces_pods_and_updated_replicas_follows_the_new_template() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "web", replicas=2))
        await clock.sleep(3)
        old = set((await pods_by_node(cluster))["member1-node-000"])
        await cluster.apply(workload("Deployment", "web", replicas=2, image="app:v2"))
        rolling = await status(cluster, workload("Deployment", "web"))
        assert pick(rolling, "observedGeneration", "replicas", "updatedReplicas", "readyReplicas") == {
            "observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "readyReplicas": None}
        new = {p["metadata"]["name"]: p for p in await cluster.list("v1", "Pod")}
        assert not old & set(new)
        assert {p["spec"]["containers"][0]["image"] for p in new.values()} == {"app:v2"}
        await clock.sleep(2)
        assert (await status(cluster, workload("Deployment", "web")))["readyReplicas"] == 2
        replica_sets = {rs["metadata"]["name"]: rs["spec"]["replicas"]
                        for rs in await cluster.list("apps/v1", "ReplicaSet")}
        assert sorted(replica_sets.values()) == [0, 2]

    on_cluster(main)


def test_replicaset_status() -> None:
    manifest = workload("ReplicaSet", "plain", replicas=2)

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(manifest)
        assert await status(cluster, manifest) == {
            "replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 1}
        await clock.sleep(2)
        assert await status(cluster, manifest) == {
            "replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
            "observedGeneration": 1}

    on_cluster(main)


@pytest.mark.parametrize("policy, ready_over_time", [
    ("OrderedReady", [(0, 1, 0), (2, 2, 1), (4, 3, 2), (6, 3, 3)]),
    ("Parallel", [(0, 3, 0), (2, 3, 3), (4, 3, 3), (6, 3, 3)]),
], ids=["ordered pods start one after another", "parallel pods start together"])
def test_statefulset_pods_start_by_ordinal(policy: str, ready_over_time: list[tuple[int, int, int]]) -> None:
    manifest = workload("StatefulSet", "db", replicas=3, podManagementPolicy=policy)

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[tuple[int, int, int]]:
        await cluster.apply(manifest)
        seen = []
        for second in (0, 2, 4, 6):
            await clock.sleep_until(second)
            current = await status(cluster, manifest)
            seen.append((second, current["replicas"], current.get("readyReplicas", 0)))
        names = sorted(p["metadata"]["name"] for p in await cluster.list("v1", "Pod"))
        assert names == ["db-0", "db-1", "db-2"]
        return seen

    assert on_cluster(main) == ready_over_time


def test_statefulset_revisions_follow_a_rollout() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("StatefulSet", "db", replicas=2))
        await clock.sleep(10)
        done = await status(cluster, workload("StatefulSet", "db"))
        assert done["currentRevision"] == done["updateRevision"] and done["currentReplicas"] == 2
        await cluster.apply(workload("StatefulSet", "db", replicas=2, image="app:v2"))
        rolling = await status(cluster, workload("StatefulSet", "db"))
        assert rolling["updateRevision"] != rolling["currentRevision"] == done["currentRevision"]
        fields = ("observedGeneration", "updatedReplicas", "currentReplicas", "availableReplicas")
        assert pick(rolling, *fields) == {
            "observedGeneration": 2, "updatedReplicas": 1, "currentReplicas": None, "availableReplicas": 0}
        await clock.sleep(10)
        finished = await status(cluster, workload("StatefulSet", "db"))
        assert finished["currentRevision"] == finished["updateRevision"] == rolling["updateRevision"]
        assert pick(finished, "replicas", "readyReplicas", "currentReplicas", "updatedReplicas") == {
            "replicas": 2, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 2}

    on_cluster(main)


def test_daemonset_runs_one_pod_per_node_and_follows_the_node_count() -> None:
    manifest = workload("DaemonSet", "agent", replicas=None)
    fields = ("desiredNumberScheduled", "currentNumberScheduled", "numberReady", "numberAvailable",
              "numberUnavailable", "updatedNumberScheduled")

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(manifest)
        assert pick(await status(cluster, manifest), *fields) == {
            "desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 0,
            "numberAvailable": None, "numberUnavailable": 3, "updatedNumberScheduled": 3}
        await clock.sleep(2)
        assert {node: len(names) for node, names in (await pods_by_node(cluster)).items()} == {
            "member1-node-000": 1, "member1-node-001": 1, "member1-node-002": 1}
        cluster.set_nodes(5)
        grown = await status(cluster, manifest)
        assert pick(grown, "desiredNumberScheduled", "numberReady", "numberUnavailable") == {
            "desiredNumberScheduled": 5, "numberReady": 3, "numberUnavailable": 2}
        await clock.sleep(2)
        cluster.set_nodes(2)
        assert pick(await status(cluster, manifest), *fields) == {
            "desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 2, "numberAvailable": 2,
            "numberUnavailable": None, "updatedNumberScheduled": 2}
        assert len(await cluster.list("v1", "Pod")) == 2

    on_cluster(main)


def test_a_job_runs_its_completions_one_by_one_and_completes() -> None:
    manifest = workload("Job", "batch", replicas=None, completions=2)
    fields = ("active", "ready", "succeeded", "failed", "completionTime")

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(manifest)
        assert pick(await status(cluster, manifest), *fields) == {
            "active": 1, "ready": 0, "succeeded": None, "failed": None, "completionTime": None}
        await clock.sleep_until(2)
        assert (await status(cluster, manifest))["ready"] == 1
        await clock.sleep_until(12)
        assert pick(await status(cluster, manifest), *fields) == {
            "active": 1, "ready": 0, "succeeded": 1, "failed": None, "completionTime": None}
        await clock.sleep_until(24)
        done = await status(cluster, manifest)
        assert pick(done, *fields) == {"active": None, "ready": 0, "succeeded": 2, "failed": None,
                                       "completionTime": "2026-01-01T00:00:24Z"}
        assert condition(done, "Complete") == ("True", "CompletionsReached")
        assert done["startTime"] == "2026-01-01T00:00:00Z"
        assert (await cluster.summary()).resource_summary["allocated"]["pods"] == "0"
        assert {p["status"]["phase"] for p in await cluster.list("v1", "Pod")} == {"Succeeded"}

    on_cluster(main)


def test_a_job_annotation_sets_its_run_time() -> None:
    manifest = workload("Job", "quick", replicas=None)
    manifest["metadata"]["annotations"] = {RUN_SECONDS_ANNOTATION: "1"}

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[str, str] | None:
        await cluster.apply(manifest)
        await clock.sleep(3)
        return condition(await status(cluster, manifest), "Complete")

    assert on_cluster(main) == ("True", "CompletionsReached")


def test_a_job_whose_pods_fail_gives_up_after_its_backoff_limit() -> None:
    manifest = workload("Job", "doomed", replicas=None, backoffLimit=2)

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        cluster.crash_workload("batch/v1", "Job", "default", "doomed")
        await cluster.apply(manifest)
        await clock.sleep(2)
        assert pick(await status(cluster, manifest), "active", "failed") == {"active": 1, "failed": 1}
        await clock.sleep(10)
        final = await status(cluster, manifest)
        assert pick(final, "active", "failed") == {"active": None, "failed": 3}
        assert condition(final, "Failed") == ("True", "BackoffLimitExceeded")

    on_cluster(main)


def test_a_bare_pod_runs_and_is_ready_after_startup() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        live = await cluster.apply(pod("solo", cpu="250m"))
        assert (live["status"]["phase"], live["spec"]["nodeName"]) == ("Pending", "member1-node-000")
        await clock.sleep(2)
        running = await cluster.get(ref(pod("solo")))
        assert running is not None
        assert running["status"]["phase"] == "Running"
        state = running["status"]["containerStatuses"][0]["state"]
        assert state == {"running": {"startedAt": "2026-01-01T00:00:02Z"}}
        allocated = (await cluster.summary()).resource_summary["allocated"]
        assert allocated == {"cpu": "250m", "memory": "0", "pods": "1"}

    on_cluster(main)


def test_deleting_a_deployment_deletes_its_replicasets_and_pods() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "web", replicas=2))
        await cluster.apply(workload("Deployment", "kept", replicas=1))
        await cluster.delete(ref(workload("Deployment", "web")))
        replica_sets = await cluster.list("apps/v1", "ReplicaSet")
        assert [rs["metadata"]["name"].rsplit("-", 1)[0] for rs in replica_sets] == ["kept"]
        assert [p["metadata"]["labels"]["app"] for p in await cluster.list("v1", "Pod")] == ["kept"]

    on_cluster(main)


def test_namespaces_are_created_on_apply_and_deleting_one_deletes_its_contents() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "web", namespace="shop"))
        namespaces = [n["metadata"]["name"] for n in await cluster.list("v1", "Namespace")]
        assert namespaces == ["default", "kube-node-lease", "kube-public", "kube-system", "shop"]
        await cluster.delete(ref({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
        assert await cluster.list("apps/v1", "Deployment") == []
        assert await cluster.list("v1", "Pod") == []

    on_cluster(main)


def test_the_same_calls_at_the_same_times_give_the_same_cluster() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[dict[str, Any]]:
        await cluster.apply(workload("Deployment", "web", replicas=4, cpu="3"))
        await cluster.apply(workload("StatefulSet", "db", replicas=2, cpu="2", priority=10))
        await clock.sleep(3)
        cluster.set_nodes(2)
        cluster.crash_workload("apps/v1", "Deployment", "default", "web")
        await clock.sleep(30)
        return [*await cluster.list("v1", "Pod"), *await cluster.list("apps/v1", "Deployment"),
                *await cluster.list("apps/v1", "StatefulSet")]

    first = on_cluster(main)
    assert first == on_cluster(main)
    assert len(first) == 8
