"""Events of a simulated cluster: who reports what, in Kubernetes' words, counted and bounded."""

from __future__ import annotations

from typing import Any

from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.testing import next_event

from .helpers import on_cluster, pod, workload

NODE0 = "member1-node-000"


async def events(cluster: SimulatedCluster, **about: str) -> list[dict[str, Any]]:
    """The cluster's Events with ``reason`` about objects matching the rest of ``about`` (``kind``,
    ``name`` …), oldest first."""
    found = [e for e in await cluster.list("v1", "Event", "default")
             if all((e if k == "reason" else e["involvedObject"]).get(k) == v for k, v in about.items())]
    return sorted(found, key=lambda e: (e["firstTimestamp"], e["metadata"]["name"]))


def said(found: list[dict[str, Any]]) -> list[tuple[str, str, str, int]]:
    return [(e["source"]["component"], e["reason"], e["message"], e["count"]) for e in found]


def test_a_deployments_pods_are_created_scheduled_and_started_as_kubernetes_reports_it() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "web", replicas=1, image="nginx:1.27"))
        await clock.sleep(5)
        rs = (await cluster.list("apps/v1", "ReplicaSet", "default"))[0]["metadata"]["name"]
        name = (await cluster.list("v1", "Pod", "default"))[0]["metadata"]["name"]
        assert said(await events(cluster, kind="Deployment")) == [
            ("deployment-controller", "ScalingReplicaSet", f"Scaled up replica set {rs} from 0 to 1", 1)]
        assert said(await events(cluster, kind="ReplicaSet")) == [
            ("replicaset-controller", "SuccessfulCreate", f"Created pod: {name}", 1)]
        of_pod = await events(cluster, kind="Pod", name=name)
        assert said(of_pod) == [
            ("default-scheduler", "Scheduled", f"Successfully assigned default/{name} to {NODE0}", 1),
            ("kubelet", "Pulled", 'Container image "nginx:1.27" already present on machine', 1),
            ("kubelet", "Created", "Created container: main", 1),
            ("kubelet", "Started", "Started container main", 1),
        ]
        started = of_pod[-1]
        assert started["involvedObject"]["fieldPath"] == "spec.containers{main}"
        assert started["source"] == {"component": "kubelet", "host": NODE0} and started["type"] == "Normal"
        assert started["firstTimestamp"] == started["lastTimestamp"] == "2026-01-01T00:00:02Z"
        assert started["metadata"]["name"].startswith(f"{name}.")
        again = await cluster.get(ObjectRef("v1", "Event", "default", started["metadata"]["name"]))
        assert again == started

        await cluster.apply(workload("Deployment", "web", replicas=0, image="nginx:1.27"))
        assert said(await events(cluster, kind="Pod", name=name))[-1] == (
            "kubelet", "Killing", "Stopping container main", 1)
        assert said(await events(cluster, kind="ReplicaSet"))[-1] == (
            "replicaset-controller", "SuccessfulDelete", f"Deleted pod: {name}", 1)
        scaled = said(await events(cluster, kind="Deployment"))[-1]
        assert scaled[2] == f"Scaled down replica set {rs} from 1 to 0"

    on_cluster(main)


def test_a_crash_loop_is_counted_on_the_same_events_and_a_failed_readiness_probe_says_so() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        manifest = workload("Deployment", "web", replicas=1)
        container = manifest["spec"]["template"]["spec"]["containers"][0]
        container["readinessProbe"] = {"httpGet": {"path": "/healthz", "port": "http"}}
        container["ports"] = [{"name": "http", "containerPort": 8080}]
        await cluster.apply(manifest)
        await clock.sleep(5)
        cluster.crash_workload("apps/v1", "Deployment", "default", "web")
        await clock.sleep(10 + 20 + 1)  # restarts after 10 s and 20 s of back-off
        live = (await cluster.list("v1", "Pod", "default"))[0]
        name, uid, ip = live["metadata"]["name"], live["metadata"]["uid"], live["status"]["podIP"]
        counted = {e["reason"]: (e["count"], e["message"], e["type"])
                   for e in await events(cluster, kind="Pod", name=name)}
        assert counted["BackOff"] == (
            3, f"Back-off restarting failed container main in pod {name}_default({uid})", "Warning")
        assert counted["Started"][0] == counted["Created"][0] == counted["Pulled"][0] == 3
        refused = f"dial tcp {ip}:8080: connect: connection refused"
        assert counted["Unhealthy"] == (
            3, f'Readiness probe failed: Get "http://{ip}:8080/healthz": {refused}', "Warning")
        backoff = (await events(cluster, name=name, reason="BackOff"))[0]
        assert (backoff["firstTimestamp"], backoff["lastTimestamp"]) == ("2026-01-01T00:00:05Z",
                                                                         "2026-01-01T00:00:35Z")

    on_cluster(main)


async def _reasons(cluster: SimulatedCluster, name: str) -> list[str]:
    return [e["reason"] for e in await events(cluster, name=name)]


def test_the_scheduler_reports_pods_it_cannot_place_and_the_pods_it_preempts() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(pod("small", cpu="6", priority=0))
        await cluster.apply(pod("big", cpu="6", priority=0))
        failed = await events(cluster, name="big", reason="FailedScheduling")
        assert said(failed) == [("default-scheduler", "FailedScheduling",
                                 "0/1 nodes are available: 1 Insufficient cpu.", 1)]
        assert failed[0]["type"] == "Warning"
        await cluster.apply(pod("vip", cpu="6", priority=1000))
        vip = await cluster.get(ObjectRef("v1", "Pod", "default", "vip"))
        assert vip is not None
        uid = vip["metadata"]["uid"]
        preempted = await events(cluster, name="small", reason="Preempted")
        assert said(preempted) == [
            ("default-scheduler", "Preempted", f"Preempted by pod {uid} on node {NODE0}", 1)]

    on_cluster(main, nodes=1)


def test_statefulset_and_job_controllers_report_in_their_words() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("StatefulSet", "db", replicas=1))
        await cluster.apply(workload("Job", "once"))
        await clock.sleep(30)
        assert said(await events(cluster, kind="StatefulSet")) == [
            ("statefulset-controller", "SuccessfulCreate", "create Pod db-0 in StatefulSet db successful", 1)]
        job = said(await events(cluster, kind="Job"))
        assert [(component, reason) for component, reason, _, _ in job] == [
            ("job-controller", "SuccessfulCreate"), ("job-controller", "Completed")]
        assert job[1][2] == "Job completed"

    on_cluster(main)


def test_events_last_an_hour_and_the_least_recently_seen_go_first_past_the_bound() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(pod("early"))
        await clock.sleep(3000)
        await cluster.apply(pod("late"))
        await clock.sleep(5)
        assert [e["involvedObject"]["name"] for e in await events(cluster)] == ["early"] * 4 + ["late"] * 4
        await clock.sleep(700)  # early's are over an hour old now
        assert await _reasons(cluster, "early") == []
        assert len(cluster.engine.events) == 4
        cluster.engine.events.capacity = 3
        assert await _reasons(cluster, "late") == ["Pulled", "Created", "Started"]

    on_cluster(main)


def test_a_watch_of_events_sees_them_written_counted_and_dropped() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[list[tuple[str, str, int]]]:
        stream = cluster.watch("v1", "Event")

        async def read(count: int) -> list[tuple[str, str, int]]:
            got = [await next_event(stream) for _ in range(count)]
            return [(e.type, e.object["reason"], e.object["count"]) for e in got]

        await cluster.apply(pod("web"))
        await clock.sleep(5)
        started = await read(4)
        cluster.crash_workload("v1", "Pod", "default", "web")
        crashed = await read(1)
        await clock.sleep(11)  # the first restart
        restarted = await read(4)
        cluster.engine.events.capacity = 0  # the next read drops every Event
        assert await events(cluster) == []
        dropped = await read(5)
        await stream.aclose()
        return [started, crashed, restarted, dropped]

    assert on_cluster(main) == [
        [("ADDED", "Scheduled", 1), ("ADDED", "Pulled", 1), ("ADDED", "Created", 1), ("ADDED", "Started", 1)],
        [("ADDED", "BackOff", 1)],
        [("MODIFIED", "Pulled", 2), ("MODIFIED", "Created", 2), ("MODIFIED", "Started", 2),
         ("MODIFIED", "BackOff", 2)],
        [("DELETED", "Scheduled", 1), ("DELETED", "Pulled", 2), ("DELETED", "Created", 2),
         ("DELETED", "Started", 2), ("DELETED", "BackOff", 2)],
    ]


def test_a_workload_crashed_again_after_healing_counts_only_the_restarts() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, int]:
        await cluster.apply(pod("web"))
        await clock.sleep(5)
        cluster.crash_workload("v1", "Pod", "default", "web")
        await clock.sleep(11)  # one restart
        cluster.heal_workload("v1", "Pod", "default", "web")
        await clock.sleep(5)  # started again, ready
        cluster.crash_workload("v1", "Pod", "default", "web")  # exits: no start of its own
        return {e["reason"]: e["count"] for e in await events(cluster, name="web")}

    assert on_cluster(main) == {"Scheduled": 1, "Pulled": 3, "Created": 3, "Started": 3, "BackOff": 3}
