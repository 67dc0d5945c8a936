"""The recorder writes Events and timeline entries, deterministically under virtual time,
behind the reconcile that records them, in the order they were recorded."""

from __future__ import annotations

import asyncio

from fleetkeeper.api import cluster, core
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.recorder import Recorder
from fleetkeeper.store import open_store


def _run() -> tuple[list[core.Event], list[tl.TimelineEntry]]:
    clock = VirtualClock()

    async def main() -> tuple[list[core.Event], list[tl.TimelineEntry]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        member1 = cluster.Cluster(
            metadata=ObjectMeta(name="member1"), spec=cluster.ClusterSpec(sync_mode="Push")
        )
        rec = Recorder(client, clock, "cluster-status-controller")
        await clock.sleep(40)
        await rec.event(member1, "Warning", "TaintClusterSucceed", "Taint cluster succeed")
        await rec.timeline(
            member1, tl.CONDITION_CHANGED, "Ready=False (ClusterNotReachable)", reason="ClusterNotReachable"
        )
        await rec.timeline(member1, tl.CONDITION_CHANGED, "Ready=False (ClusterNotReachable)")
        await rec.flush()
        events = (await client.list(core.Event, "default")).items
        entries = (await client.list(tl.TimelineEntry)).items
        return events, entries

    return clock.run(main())


def test_event_names_the_object_and_lands_in_default_for_cluster_scoped_objects() -> None:
    events, _ = _run()
    assert len(events) == 1
    ev = events[0]
    assert ev.involved_object.kind == "Cluster" and ev.involved_object.name == "member1"
    assert ev.reason == "TaintClusterSucceed" and ev.type == "Warning"
    assert ev.source is not None and ev.source.component == "cluster-status-controller"


def test_timeline_entries_are_kept_separately_even_when_identical() -> None:
    _, entries = _run()
    assert len(entries) == 2
    assert {e.message for e in entries} == {"Ready=False (ClusterNotReachable)"}
    assert entries[0].time.isoformat() == "2026-01-01T00:00:40+00:00"
    assert entries[0].subject.kind == "Cluster" and entries[0].subject.name == "member1"


def test_names_repeat_exactly_across_runs() -> None:
    first = _run()
    second = _run()
    assert [e.name for e in first[0]] == [e.name for e in second[0]]
    assert [e.name for e in first[1]] == [e.name for e in second[1]]


def test_records_are_written_after_the_recording_turn_in_recording_order() -> None:
    clock = VirtualClock()

    async def main() -> tuple[int, list[str], int, list[str]]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        member1 = cluster.Cluster(
            metadata=ObjectMeta(name="member1"), spec=cluster.ClusterSpec(sync_mode="Push")
        )
        first, second = Recorder(client, clock, "one"), Recorder(client, clock, "two")
        before = store.revision
        for index in range(3):
            await first.timeline(member1, tl.CONDITION_CHANGED, f"first {index}")
            await second.timeline(member1, tl.CONDITION_CHANGED, f"second {index}")
        written_at_once = store.revision - before
        await asyncio.sleep(0)  # the recording turn ends: the sink writes
        await first.flush()
        entries = sorted(
            (await client.list(tl.TimelineEntry)).items, key=lambda e: int(e.metadata.resource_version or 0)
        )
        return (
            written_at_once,
            [e.message for e in entries],
            store.revision - before,
            [e.component for e in entries],
        )

    written_at_once, messages, revisions, components = clock.run(main())
    assert written_at_once == 0, "recording does not wait for the write"
    assert messages == [f"{who} {i}" for i in range(3) for who in ("first", "second")], "recording order"
    assert revisions == 6 and components[:2] == ["one", "two"]


def test_a_record_that_cannot_be_written_is_dropped_without_losing_the_others() -> None:
    clock = VirtualClock()

    async def main() -> list[str]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        member1 = cluster.Cluster(
            metadata=ObjectMeta(name="member1"), spec=cluster.ClusterSpec(sync_mode="Push")
        )
        rec = Recorder(client, clock, "one")
        await rec.timeline(member1, tl.CONDITION_CHANGED, "kept 1")
        await client.create(
            tl.TimelineEntry(  # takes the name the next record will get
                metadata=ObjectMeta(name=_next_name(rec, member1, "lost")),
                time=clock.now(),
                subject=tl.Subject(api_version="cluster.karmada.io/v1alpha1", kind="Cluster", name="member1"),
                action=tl.CONDITION_CHANGED,
                message="squatter",
            )
        )
        await rec.timeline(member1, tl.CONDITION_CHANGED, "lost")
        await rec.timeline(member1, tl.CONDITION_CHANGED, "kept 2")
        await rec.flush()
        return sorted(e.message for e in (await client.list(tl.TimelineEntry)).items)

    assert clock.run(main()) == ["kept 1", "kept 2", "squatter"]


def _next_name(rec: Recorder, obj: cluster.Cluster, message: str) -> str:
    """The name ``rec`` gives its next timeline entry about ``obj`` (its counter is restored)."""
    name = rec._name("tl", f"Cluster/None/{obj.name}|{tl.CONDITION_CHANGED}|{message}")
    rec._seq -= 1
    return name
