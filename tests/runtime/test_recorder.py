"""The recorder writes Events and timeline entries, deterministically under virtual time,
behind the reconcile that records them, in the order they were recorded."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from fleetkeeper.api import cluster, core
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime import recorder
from fleetkeeper.runtime.load import LOAD_RECONCILES, LOAD_WINDOW
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.reconcile import FuncReconciler, Request, Result
from fleetkeeper.runtime.recorder import Recorder, Sink
from fleetkeeper.store import open_store

from .helpers import run_virtual


def _run() -> tuple[list[core.Event], list[tl.TimelineEntry]]:
    clock = VirtualClock()

    async def main() -> tuple[list[core.Event], list[tl.TimelineEntry]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        member1 = cluster.Cluster(
            metadata=ObjectMeta(name="member1"), spec=cluster.ClusterSpec(sync_mode="Push")
        )
        rec = Recorder(Sink(client), clock, "cluster-status-controller")
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
        sink = Sink(client)  # one per client: both write through it
        first, second = Recorder(sink, clock, "one"), Recorder(sink, clock, "two")
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
        rec = Recorder(Sink(client), clock, "one")
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


def _deferring(clock: VirtualClock) -> tuple[LocalClient, Manager, Recorder, cluster.Cluster]:
    """A client whose records wait for its manager's critical path, a recorder, and a subject."""
    client = LocalClient(open_store("memory://", clock=clock), clock=clock)
    manager = Manager(client, clock=clock)
    sink = Sink(client)
    sink.defer_while(manager.load)
    member1 = cluster.Cluster(metadata=ObjectMeta(name="member1"), spec=cluster.ClusterSpec(sync_mode="Push"))
    return client, manager, Recorder(sink, clock, "scheduler"), member1


async def _deciding(clock: VirtualClock, keys: int, work: float, *, sample_at: list[float],
                    critical: bool = True, wait_turn: bool = True) -> tuple[list[int], list[core.Event]]:
    """A controller (critical by default) with ``keys`` queued, each reconcile recording an
    Event and then working ``work`` seconds; how many Events are stored at each of
    ``sample_at``, and all in the end."""
    client, manager, rec, member1 = _deferring(clock)

    async def decide(request: Request) -> Result:
        await rec.event(member1, "Normal", "ScheduleBindingSucceed", f"decided {request.name}")
        await clock.sleep(work)
        return Result()

    controller = manager.controller("deciding", FuncReconciler(decide), workers=1, critical=critical,
                                    wait_turn=wait_turn)
    for index in range(keys):
        controller.enqueue(Request("", f"k{index:03d}"))
    task = asyncio.create_task(manager.run())
    counts = []
    for moment in sample_at:
        await clock.sleep(moment - clock.monotonic())
        counts.append(len((await client.list(core.Event, "default")).items))
    await clock.sleep(keys * work + LOAD_WINDOW + 1.0)
    events = (await client.list(core.Event, "default")).items
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return counts, events


def test_records_wait_while_the_critical_path_is_loaded_and_keep_the_time_of_the_decision() -> None:
    keys, work = 3 * LOAD_RECONCILES, 0.5 / LOAD_RECONCILES  # two loaded virtual seconds' worth
    done = keys * work
    counts, events = run_virtual(lambda clock: _deciding(
        clock, keys, work, sample_at=[done / 2, done + LOAD_WINDOW / 2, done + LOAD_WINDOW + 0.1]))
    assert counts[0] <= LOAD_RECONCILES, "only decisions made before the load showed are written at once"
    assert counts[1] == counts[0], "nothing more while loaded"
    assert counts[2] == keys, "everything once the load is gone"
    when = {e.message: e.last_timestamp.isoformat() for e in events if e.last_timestamp is not None}
    assert (when["decided k000"], when["decided k002"]) == ("2026-01-01T00:00:00+00:00",
                                                            "2026-01-01T00:00:00.015625+00:00")


def test_records_also_wait_for_the_status_reports_but_not_for_exempt_work() -> None:
    """Recording comes after every controller that takes turns (a status reporter is one);
    an exempt controller (cluster probes) never holds records up."""
    keys, work = 3 * LOAD_RECONCILES, 0.5 / LOAD_RECONCILES
    done = keys * work
    reporting, _ = run_virtual(lambda clock: _deciding(clock, keys, work, critical=False,
                                                       sample_at=[done / 2, done + LOAD_WINDOW + 0.1]))
    assert reporting[0] <= LOAD_RECONCILES and reporting[1] == keys
    probing, _ = run_virtual(lambda clock: _deciding(clock, keys, work, critical=False, wait_turn=False,
                                                     sample_at=[done / 2]))
    assert probing[0] >= keys // 2 - 1, "written as they come: exempt work is no load"


def test_a_few_decisions_are_recorded_at_once() -> None:
    counts, events = run_virtual(lambda clock: _deciding(clock, 3, 1.0, sample_at=[0.5, 1.5]))
    assert counts == [1, 2] and len(events) == 3


def test_records_past_the_deferral_limit_are_written_while_the_critical_path_is_busy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "MAX_DEFERRED", 1_000)
    monkeypatch.setattr(recorder, "CHUNK", 100)
    clock = VirtualClock()

    async def main() -> tuple[int, int]:
        client, manager, rec, member1 = _deferring(clock)

        async def decide(request: Request) -> Result:
            if request.name == "k100":  # a hundred quick decisions in: loaded
                for index in range(1_000 + 450):
                    await rec.timeline(member1, tl.CONDITION_CHANGED, f"entry {index}")
            await clock.sleep(0.001)
            return Result()

        controller = manager.controller("critical", FuncReconciler(decide), workers=1, critical=True)
        for index in range(LOAD_RECONCILES * 4):
            controller.enqueue(Request("", f"k{index:03d}"))
        task = asyncio.create_task(manager.run())
        await clock.sleep(0.15)
        while_loaded = len((await client.list(tl.TimelineEntry)).items)
        await clock.sleep(LOAD_WINDOW + 1)
        after = len((await client.list(tl.TimelineEntry)).items)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return while_loaded, after

    assert clock.run(main()) == (500, 1_450), "the oldest written in chunks until at most 1,000 wait"


def member(uid: str) -> cluster.Cluster:
    return cluster.Cluster(metadata=ObjectMeta(name="member1", uid=uid),
                           spec=cluster.ClusterSpec(sync_mode="Push"))


def test_repeats_of_an_event_are_counted_on_it_as_kubernetes_counts_them() -> None:
    clock = VirtualClock()

    async def main() -> None:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        web = member("u1")
        rec = Recorder(Sink(client), clock, "binding-controller")
        start = clock.now()
        for _ in range(3):  # before the first is written: one Event, counted three times
            await rec.event(web, "Normal", "SyncWorkSucceed", "Sync work of member1 successful.")
            await clock.sleep(1)
        await rec.flush()
        (event,) = (await client.list(core.Event, "default")).items
        assert (event.count, event.first_timestamp) == (3, start)
        assert event.last_timestamp == start + timedelta(seconds=2)
        await clock.sleep(60)
        for _ in range(2):  # after it was written: the stored Event is brought up to date
            await rec.event(web, "Normal", "SyncWorkSucceed", "Sync work of member1 successful.")
        await rec.flush()
        (again,) = (await client.list(core.Event, "default")).items
        assert (again.metadata.name, again.count) == (event.metadata.name, 5)
        assert again.last_timestamp == clock.now() and again.first_timestamp == start
        await rec.event(web, "Normal", "SyncWorkSucceed", "another message")
        await rec.event(web, "Warning", "SyncWorkSucceed", "Sync work of member1 successful.")
        other = member("u2")
        await rec.event(other, "Normal", "SyncWorkSucceed", "Sync work of member1 successful.")
        await rec.flush()
        events = (await client.list(core.Event, "default")).items
        assert len(events) == 4, "a new message, type or object is a new Event"

    clock.run(main())


def test_a_repeat_of_an_event_deleted_meanwhile_makes_it_again() -> None:
    clock = VirtualClock()

    async def main() -> None:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        web = member("u1")
        rec = Recorder(Sink(client), clock, "binding-controller")
        await rec.event(web, "Normal", "Reason", "said")
        await rec.flush()
        (first,) = (await client.list(core.Event, "default")).items
        await client.delete(core.Event, first.metadata.name, "default")
        await rec.event(web, "Normal", "Reason", "said")  # the patch finds nothing: forgotten
        await rec.flush()
        assert not (await client.list(core.Event, "default")).items
        await clock.sleep(1)
        await rec.event(web, "Normal", "Reason", "said")
        await rec.flush()
        (made,) = (await client.list(core.Event, "default")).items
        assert made.count == 1 and made.metadata.name != first.metadata.name

    clock.run(main())


def test_only_the_latest_distinct_events_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "REMEMBERED", 2)
    clock = VirtualClock()

    async def main() -> None:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        web = member("u1")
        rec = Recorder(Sink(client), clock, "c")
        for message in ("a", "b", "c", "a"):  # "a" was forgotten when "c" came
            await rec.event(web, "Normal", "R", message)
        await rec.flush()
        counts = sorted((e.message, e.count) for e in (await client.list(core.Event, "default")).items)
        assert counts == [("a", 1), ("a", 1), ("b", 1), ("c", 1)]

    clock.run(main())
