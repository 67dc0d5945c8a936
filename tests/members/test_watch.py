"""Watches: ADDED first, then changes; bounded by coalescing; broken by faults; nothing leaks."""

from __future__ import annotations

import gc

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.testing import next_event

from .helpers import on_cluster, ref, workload


def config_map(name: str, value: str = "v", labels: dict[str, str] | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": value}}


def test_status_changes_reach_a_deployment_watch() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[tuple[str, int]]:
        stream = cluster.watch("apps/v1", "Deployment")
        await cluster.apply(workload("Deployment", "web", replicas=2))
        seen: list[tuple[str, int]] = []
        for _ in range(2):
            event = await next_event(stream)
            seen.append((event.type, event.object.get("status", {}).get("readyReplicas", 0)))
        await stream.aclose()
        return seen

    assert on_cluster(main) == [("ADDED", 0), ("MODIFIED", 2)]


def test_pod_events_follow_pods_through_their_lifecycle() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[tuple[str, str]]:
        stream = cluster.watch("v1", "Pod", label_selector="app=web")
        await cluster.apply(workload("Deployment", "web", replicas=1))
        await cluster.apply(workload("Deployment", "other", replicas=1))
        events = [await next_event(stream), await next_event(stream)]
        seen = [(e.type, e.object["status"]["phase"]) for e in events]
        await cluster.delete(ref(workload("Deployment", "web")))
        gone = await next_event(stream)
        await stream.aclose()
        return [*seen, (gone.type, gone.object["metadata"]["labels"]["app"])]

    assert on_cluster(main) == [("ADDED", "Pending"), ("MODIFIED", "Running"), ("DELETED", "web")]


@pytest.mark.parametrize("seen, changes, expected", [
    ([], [("a", "1"), ("a", "2"), ("a", "3")], [("ADDED", "a", "3")]),
    ([], [("a", "1"), ("a", None)], []),
    ([], [("a", "1"), ("b", "1"), ("a", "2")], [("ADDED", "a", "2"), ("ADDED", "b", "1")]),
    (["a"], [("a", "1"), ("a", "2")], [("MODIFIED", "a", "2")]),
    (["a"], [("a", "1"), ("a", None)], [("DELETED", "a", "1")]),
    (["a"], [("a", None), ("a", "1")], [("DELETED", "a", "0"), ("ADDED", "a", "1")]),
], ids=[
    "updates of an unseen object fold into one ADDED with the newest state",
    "an object created and deleted unseen is never reported",
    "objects keep the order of their first pending event",
    "updates of a seen object fold into one MODIFIED",
    "an update then a deletion fold into the deletion",
    "a deletion and re-creation stay two events",
])
def test_undelivered_events_coalesce_per_object(seen: list[str], changes: list[tuple[str, str | None]],
                                                expected: list[tuple[str, str, str]]) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[tuple[str, str, str]]:
        for name in ["0-start", *seen]:
            await cluster.apply(config_map(name, "0"))
        stream = cluster.watch("v1", "ConfigMap")
        for _ in range(1 + len(seen)):
            assert (await next_event(stream)).type == "ADDED"
        for name, value in changes:
            if value is None:
                await cluster.delete(ref(config_map(name)))
            else:
                await cluster.apply(config_map(name, value))
        await cluster.apply(config_map("z-end"))
        delivered: list[tuple[str, str, str]] = []
        for _ in range(len(expected) + 1):
            event = await next_event(stream)
            delivered.append((event.type, event.object["metadata"]["name"], event.object["data"]["k"]))
        await stream.aclose()
        assert delivered[-1][:2] == ("ADDED", "z-end")
        return delivered[:-1]

    assert on_cluster(main) == expected


def test_relabelling_moves_an_object_in_and_out_of_a_selector() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[str]:
        stream = cluster.watch("v1", "ConfigMap", label_selector="pick=yes")
        await cluster.apply(config_map("x", labels={"pick": "no"}))
        await cluster.apply(config_map("x", labels={"pick": "yes"}))
        first = await next_event(stream)
        await cluster.apply(config_map("x", labels={"pick": "no"}))
        second = await next_event(stream)
        await stream.aclose()
        return [first.type, second.type]

    assert on_cluster(main) == ["ADDED", "DELETED"]


def test_a_closed_or_dropped_watch_leaves_nothing_behind() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[int]:
        counts = []
        stream = cluster.watch("v1", "ConfigMap")
        await cluster.apply(config_map("a"))
        await next_event(stream)
        counts.append(cluster.engine.hub.open_count())
        await stream.aclose()
        counts.append(cluster.engine.hub.open_count())
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        dropped = cluster.watch("v1", "ConfigMap")
        await next_event(dropped)
        counts.append(cluster.engine.hub.open_count())
        del dropped
        gc.collect()
        counts.append(cluster.engine.hub.open_count())
        return counts

    assert on_cluster(main) == [1, 0, 1, 0]


@pytest.mark.parametrize("fault, error",
                         [("down", errors.MemberUnreachable), ("blackhole", errors.MemberTimeout)],
                         ids=["a refused connection breaks the watch at once",
                              "a black hole breaks it after the call timeout"])
def test_a_fault_breaks_open_watches(fault: str, error: type[Exception]) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> float:
        stream = cluster.watch("v1", "ConfigMap")
        await cluster.apply(config_map("a"))
        await next_event(stream)
        getattr(cluster, fault)()
        with pytest.raises(error):
            await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        assert cluster.engine.hub.open_count() == 0
        return clock.monotonic()

    assert on_cluster(main, call_timeout=12) == (0 if fault == "down" else 12)


def test_close_ends_every_watch_of_the_cluster() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        stream = cluster.watch("v1", "ConfigMap")
        await cluster.apply(config_map("a"))
        await next_event(stream)
        await cluster.close()
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

    on_cluster(main)
