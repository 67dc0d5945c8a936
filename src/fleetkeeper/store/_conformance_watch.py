"""Conformance: watch (resume, filters, selectors, retention, fan-out, slow watchers) and batches."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.store import Store
from fleetkeeper.store._conformance_base import (
    CONFIGMAP,
    DEPLOY,
    Opener,
    StoreFixtures,
    configmap,
    deployment,
    rv,
    summary,
    take,
)
from fleetkeeper.store.interface import Event


async def _mixed_history(store: Store) -> list[tuple[str, str, int]]:
    """Creates, updates and deletes over two kinds and two namespaces: (type, name, revision) of each write.

    Each write must take a revision above every earlier one and become ``store.revision``.
    """
    written: list[tuple[str, str, int]] = []

    def note(kind: str, obj: dict[str, Any]) -> None:
        revision = rv(obj)
        assert not written or revision > written[-1][2], f"{kind} {obj['metadata']['name']}: {revision}"
        assert store.revision == revision
        written.append((kind, obj["metadata"]["name"], revision))

    for i in range(6):
        note("ADDED", await store.create(deployment(f"d{i}", namespace="a" if i % 2 else "b",
                                                    labels={"i": str(i)})))
    note("ADDED", await store.create(configmap("c1", x="1")))
    for i in range(0, 6, 2):
        obj = await store.get(DEPLOY, "b", f"d{i}")
        note("MODIFIED", await store.update({**obj, "spec": {"replicas": i + 10}}))
    note("DELETED", await store.delete(DEPLOY, "a", "d1"))
    obj = await store.get(CONFIGMAP, "default", "c1")
    note("MODIFIED", await store.update({**obj, "data": {"x": "2"}}))
    note("DELETED", await store.delete(CONFIGMAP, "default", "c1"))
    return written


class WatchConformance(StoreFixtures):
    async def test_a_watch_without_since_starts_now(self, store: Store) -> None:
        await store.create(deployment("before"))
        watch = store.watch(DEPLOY)
        after = await store.create(deployment("after"))
        assert summary(await take(watch, 1)) == [("ADDED", "after", rv(after))]

    async def test_events_carry_types_and_objects_in_revision_order(self, store: Store) -> None:
        watch = store.watch(DEPLOY)
        created = await store.create(deployment("a"))
        obj = await store.get(DEPLOY, "default", "a")
        updated = await store.update({**obj, "spec": {"replicas": 2}})
        gone = await store.delete(DEPLOY, "default", "a")
        assert rv(created) < rv(updated) < rv(gone)
        events = await take(watch, 3)
        assert summary(events) == [("ADDED", "a", rv(created)), ("MODIFIED", "a", rv(updated)),
                                   ("DELETED", "a", rv(gone))]
        assert [e.object for e in events] == [created, updated, gone]
        assert events[2].object["spec"] == {"replicas": 2} and rv(events[2].object) == rv(gone)

    async def test_resuming_from_every_revision_gives_exactly_the_later_events(self, store: Store) -> None:
        written = await _mixed_history(store)
        everything = await take(store.watch(None, since=0), len(written))
        assert summary(everything) == written
        assert all(rv(e.object) == e.revision for e in everything)
        # every revision a write returned, and every number just past one (taken or not)
        points = sorted({0, *(r for _, _, r in written), *(r + 1 for _, _, r in written[:-1])})
        watches = {since: store.watch(None, since=since) for since in points}
        sentinel = await store.create(deployment("sentinel"))
        assert rv(sentinel) > written[-1][2]
        for since, watch in watches.items():
            later = [w for w in written if w[2] > since]
            events = await take(watch, len(later) + 1)
            assert summary(events[:-1]) == later, f"resumed from {since}"
            assert summary(events[-1:]) == [("ADDED", "sentinel", rv(sentinel))]

    @pytest.mark.parametrize("resume", [False, True], ids=["live", "replayed from history"])
    async def test_watches_filter_by_kind_and_namespace(self, store: Store, resume: bool) -> None:
        by_kind = store.watch(CONFIGMAP, since=0 if resume else None)
        by_namespace = store.watch(DEPLOY, "b", since=0 if resume else None)
        await _mixed_history(store)
        await store.create(configmap("end", namespace="b"))
        await store.create(deployment("end", namespace="b"))
        assert [e.type for e in await take(by_kind, 4)] == ["ADDED", "MODIFIED", "DELETED", "ADDED"]
        events = await take(by_namespace, 7)
        assert {e.object["metadata"]["namespace"] for e in events} == {"b"}
        assert summary(events)[-1][:2] == ("ADDED", "end")

    @pytest.mark.parametrize("resume", [False, True], ids=["live", "replayed from history"])
    async def test_label_selectors_turn_matching_transitions_into_added_and_deleted(
        self, store: Store, resume: bool
    ) -> None:
        live = store.watch(DEPLOY, label_selector="tier=front")
        a1 = await store.create(deployment("a", labels={"tier": "front"}))
        b1 = await store.create(deployment("b", labels={"tier": "back"}))
        b2 = await store.update({**b1, "metadata": {**b1["metadata"], "labels": {"tier": "front"}}})
        a2 = await store.update({**a1, "metadata": {**a1["metadata"], "labels": {"tier": "back"}}})
        await store.update({**a2, "spec": {"replicas": 5}})
        b3 = await store.update({**b2, "spec": {"replicas": 7}})
        b4 = await store.delete(DEPLOY, "default", "b")
        c1 = await store.create(deployment("c", labels={"tier": "front"}))
        watch = store.watch(DEPLOY, since=0, label_selector="tier=front") if resume else live
        events = await take(watch, 6)
        assert summary(events) == [("ADDED", "a", rv(a1)), ("ADDED", "b", rv(b2)),
                                   ("DELETED", "a", rv(a2)), ("MODIFIED", "b", rv(b3)),
                                   ("DELETED", "b", rv(b4)), ("ADDED", "c", rv(c1))]
        stopped = events[2].object
        assert stopped["metadata"]["labels"] == {"tier": "front"} and rv(stopped) == rv(a2)

    async def test_field_selectors_filter_watches(self, store: Store) -> None:
        watch = store.watch(DEPLOY, field_selector="metadata.name=b")
        made = {name: await store.create(deployment(name)) for name in "abc"}
        gone = await store.delete(DEPLOY, "default", "b")
        assert summary(await take(watch, 2)) == [("ADDED", "b", rv(made["b"])), ("DELETED", "b", rv(gone))]

    async def test_a_watch_older_than_the_retained_history_is_gone(self, opener: Opener) -> None:
        store = opener(history=5)
        revisions = [rv(await store.create(deployment(f"d{i}"))) for i in range(30)]
        with pytest.raises(errors.Gone):
            await take(store.watch(DEPLOY, since=0), 1)
        with pytest.raises(errors.Gone):
            await take(store.watch(DEPLOY, since=revisions[19]), 1)
        events = await take(store.watch(DEPLOY, since=revisions[24]), 5)
        assert [e.revision for e in events] == revisions[25:]

    async def test_fifty_watchers_receive_every_event_in_order(self, store: Store) -> None:
        watches = [store.watch(DEPLOY) for _ in range(50)]
        readers = [asyncio.create_task(take(w, 60)) for w in watches]
        written = []
        for i in range(20):
            obj = await store.create(deployment(f"d{i}"))
            written.append(("ADDED", f"d{i}", rv(obj)))
            obj = await store.update({**obj, "spec": {"replicas": 2}})
            written.append(("MODIFIED", f"d{i}", rv(obj)))
            obj = await store.delete(DEPLOY, "default", f"d{i}")
            written.append(("DELETED", f"d{i}", rv(obj)))
        results = [summary(events) for events in await asyncio.gather(*readers)]
        assert results[0] == written
        assert all(r == results[0] for r in results)

    async def test_a_slow_watcher_is_ended_with_gone_and_blocks_no_one(self, opener: Opener) -> None:
        store = opener(watch_queue=4)
        slow = store.watch(DEPLOY)
        fast = store.watch(DEPLOY)
        reader = asyncio.create_task(take(fast, 20))
        revisions = [rv(await store.create(deployment(f"d{i}"))) for i in range(20)]
        assert [e.revision for e in await reader] == revisions
        with pytest.raises(errors.Gone):
            await take(slow, 20)
        assert store.revision == revisions[-1]

    async def test_close_ends_a_watch_and_store_close_ends_them_all(self, opener: Opener) -> None:
        store = opener()
        one, two = store.watch(DEPLOY), store.watch(None)
        await one.close()
        assert [e async for e in one] == []
        waiting = asyncio.create_task(_collect(two))
        await store.create(deployment("a"))
        await asyncio.sleep(0)
        await store.close()
        assert [e.type for e in await waiting] == ["ADDED"]


async def _collect(watch: object) -> list[Event]:
    events: list[Event] = []
    async with asyncio.timeout(10):
        async for event in watch:  # type: ignore[attr-defined]
            events.append(event)
    return events


class BatchConformance(StoreFixtures):
    async def test_a_batch_commits_together_and_publishes_after_commit(self, store: Store) -> None:
        watch = store.watch(DEPLOY)
        outsider: list[str] = []
        async with store.batch():
            made = [await store.create(deployment(f"d{i}")) for i in range(5)]
            assert store.revision == 0

            async def peek() -> None:
                try:
                    await store.get(DEPLOY, "default", "d0")
                    outsider.append("seen")
                except errors.NotFound:
                    outsider.append("not yet")

            await asyncio.create_task(peek())
        # what the batch handed out is what it committed
        events = await take(watch, 5)
        assert [e.object for e in events] == made
        assert [e.revision for e in events] == [rv(m) for m in made] == sorted({rv(m) for m in made})
        assert outsider == ["not yet"] and store.revision == rv(made[-1])
        assert [rv(i) for i in (await store.list(DEPLOY)).items] == [rv(m) for m in made]

    async def test_the_batch_owner_reads_its_own_writes(self, store: Store) -> None:
        await store.create(deployment("kept"))
        await store.create(deployment("dropped"))
        async with store.batch():
            obj = await store.create(deployment("new"))
            await store.update({**obj, "spec": {"replicas": 3}})
            await store.delete(DEPLOY, "default", "dropped")
            assert (await store.get(DEPLOY, "default", "new"))["spec"] == {"replicas": 3}
            names = [i["metadata"]["name"] for i in (await store.list(DEPLOY)).items]
            assert names == ["kept", "new"]
        assert [i["metadata"]["name"] for i in (await store.list(DEPLOY)).items] == ["kept", "new"]

    async def test_a_failed_batch_leaves_nothing_and_no_revision_gap(self, store: Store) -> None:
        watch = store.watch(DEPLOY)
        with pytest.raises(RuntimeError):
            async with store.batch():
                await store.create(deployment("a"))
                await store.create(deployment("b"))
                raise RuntimeError("boom")
        assert store.revision == 0 and (await store.list(DEPLOY)).items == []
        after = await store.create(deployment("c"))
        assert store.revision == rv(after) > 0
        assert summary(await take(watch, 1)) == [("ADDED", "c", rv(after))]

    async def test_other_writers_wait_for_the_batch(self, store: Store) -> None:
        async with store.batch():
            first = await store.create(deployment("in-batch-1"))
            other = asyncio.create_task(store.create(deployment("outside")))
            for _ in range(5):
                await asyncio.sleep(0)
            assert not other.done()
            second = await store.create(deployment("in-batch-2"))
        assert rv(first) < rv(second) < rv(await other) == store.revision

    async def test_nested_batches_join_the_outer_one(self, store: Store) -> None:
        async with store.batch():
            a = await store.create(deployment("a"))
            async with store.batch():
                b = await store.create(deployment("b"))
            assert store.revision == 0
        assert store.revision == rv(b) > rv(a)

    async def test_a_batch_may_change_one_object_several_times_and_delete_several(self, store: Store) -> None:
        for name in ("x", "y", "z"):
            await store.create(deployment(name))
        start = store.revision
        watch = store.watch(DEPLOY)
        resumed = store.watch(DEPLOY, since=start)
        async with store.batch():
            made = await store.create(deployment("new"))
            changed = await store.update({**made, "spec": {"replicas": 2}})
            again = await store.update({**changed, "spec": {"replicas": 3}})
            gone = [await store.delete(DEPLOY, "default", name) for name in ("x", "y", "z")]
            last = await store.delete(DEPLOY, "default", "new")
        written = [("ADDED", "new", rv(made)), ("MODIFIED", "new", rv(changed)),
                   ("MODIFIED", "new", rv(again)), *(("DELETED", g["metadata"]["name"], rv(g)) for g in gone),
                   ("DELETED", "new", rv(last))]
        assert [w[2] for w in written] == sorted({w[2] for w in written}) and written[0][2] > start
        assert store.revision == rv(last)
        assert summary(await take(watch, 7)) == written
        replayed = await take(resumed, 7)
        assert summary(replayed) == written
        assert [e.object["spec"] for e in replayed[-4:]] == [{"replicas": 1}] * 3 + [{"replicas": 3}]
        assert (await store.list(DEPLOY)).items == []


__all__ = ["BatchConformance", "WatchConformance"]
