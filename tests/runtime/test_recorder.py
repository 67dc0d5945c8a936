"""The recorder writes Events and timeline entries, deterministically under virtual time."""

from __future__ import annotations

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
