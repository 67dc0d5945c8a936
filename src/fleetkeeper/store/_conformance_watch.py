"""Conformance: watch (resume, filters, selectors, retention, fan-out, slow watchers) and batches."""

from __future__ import annotations

import asyncio

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


async def _mixed_history(store: Store) -> int:
    """Creates, updates and deletes over two kinds and two namespaces; returns the last revision."""
    for i in range(6):
        await store.create(deployment(f"d{i}", namespace="a" if i % 2 else "b", labels={"i": str(i)}))
    await store.create(configmap("c1", x="1"))
    for i in range(0, 6, 2):
        obj = await store.get(DEPLOY, "b", f"d{i}")
        await store.update({**obj, "spec": {"replicas": i + 10}})
    await store.delete(DEPLOY, "a", "d1")
    obj = await store.get(CONFIGMAP, "default", "c1")
    await store.update({**obj, "data": {"x": "2"}})
    await store.delete(CONFIGMAP, "default", "c1")
    return store.revision


class WatchConformance(StoreFixtures):
    async def test_a_watch_without_since_starts_now(self, store: Store) -> None:
        await store.create(deployment("before"))
        watch = store.watch(DEPLOY)
        await store.create(deployment("after"))
        assert summary(await take(watch, 1)) == [("ADDED", "after", 2)]

    async def test_events_carry_types_and_objects_in_revision_order(self, store: Store) -> None:
        watch = store.watch(DEPLOY)
        await store.create(deployment("a"))
        obj = await store.get(DEPLOY, "default", "a")
        await store.update({**obj, "spec": {"replicas": 2}})
        await store.delete(DEPLOY, "default", "a")
        events = await take(watch, 3)
        assert summary(events) == [("ADDED", "a", 1), ("MODIFIED", "a", 2), ("DELETED", "a", 3)]
        assert events[2].object["spec"] == {"replicas": 2} and rv(events[2].object) == 3

    async def test_resuming_from_every_revision_gives_exactly_the_later_events(self, store: Store) -> None:
        last = await _mixed_history(store)
        everything = await take(store.watch(None, since=0), last)
        assert [e.revision for e in everything] == list(range(1, last + 1))
        watches = {since: store.watch(None, since=since) for since in range(last + 1)}
        await store.create(deployment("sentinel"))
        for since, watch in watches.items():
            events = await take(watch, last - since + 1)
            assert summary(events[:-1]) == summary(everything[since:]), f"resumed from {since}"
            assert summary(events[-1:]) == [("ADDED", "sentinel", last + 1)]

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
        a = await store.create(deployment("a", labels={"tier": "front"}))
        b = await store.create(deployment("b", labels={"tier": "back"}))
        b = await store.update({**b, "metadata": {**b["metadata"], "labels": {"tier": "front"}}})
        a = await store.update({**a, "metadata": {**a["metadata"], "labels": {"tier": "back"}}})
        await store.update({**a, "spec": {"replicas": 5}})
        b = await store.update({**b, "spec": {"replicas": 7}})
        await store.delete(DEPLOY, "default", "b")
        await store.create(deployment("c", labels={"tier": "front"}))
        watch = store.watch(DEPLOY, since=0, label_selector="tier=front") if resume else live
        events = await take(watch, 6)
        assert summary(events) == [("ADDED", "a", 1), ("ADDED", "b", 3), ("DELETED", "a", 4),
                                   ("MODIFIED", "b", 6), ("DELETED", "b", 7), ("ADDED", "c", 8)]
        stopped = events[2].object
        assert stopped["metadata"]["labels"] == {"tier": "front"} and rv(stopped) == 4

    async def test_field_selectors_filter_watches(self, store: Store) -> None:
        watch = store.watch(DEPLOY, field_selector="metadata.name=b")
        for name in "abc":
            await store.create(deployment(name))
        await store.delete(DEPLOY, "default", "b")
        assert summary(await take(watch, 2)) == [("ADDED", "b", 2), ("DELETED", "b", 4)]

    async def test_a_watch_older_than_the_retained_history_is_gone(self, opener: Opener) -> None:
        store = opener(history=5)
        for i in range(30):
            await store.create(deployment(f"d{i}"))
        with pytest.raises(errors.Gone):
            await take(store.watch(DEPLOY, since=0), 1)
        with pytest.raises(errors.Gone):
            await take(store.watch(DEPLOY, since=20), 1)
        events = await take(store.watch(DEPLOY, since=25), 5)
        assert [e.revision for e in events] == [26, 27, 28, 29, 30]

    async def test_fifty_watchers_receive_every_event_in_order(self, store: Store) -> None:
        watches = [store.watch(DEPLOY) for _ in range(50)]
        readers = [asyncio.create_task(take(w, 60)) for w in watches]
        for i in range(20):
            obj = await store.create(deployment(f"d{i}"))
            obj = await store.update({**obj, "spec": {"replicas": 2}})
            await store.delete(DEPLOY, "default", f"d{i}")
        results = [summary(events) for events in await asyncio.gather(*readers)]
        assert [r[2] for r in results[0]] == list(range(1, 61))
        assert all(r == results[0] for r in results)

    async def test_a_slow_watcher_is_ended_with_gone_and_blocks_no_one(self, opener: Opener) -> None:
        store = opener(watch_queue=4)
        slow = store.watch(DEPLOY)
        fast = store.watch(DEPLOY)
        reader = asyncio.create_task(take(fast, 20))
        for i in range(20):
            await store.create(deployment(f"d{i}"))
        assert [e.revision for e in await reader] == list(range(1, 21))
        with pytest.raises(errors.Gone):
            await take(slow, 20)
        assert store.revision == 20

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
            for i in range(5):
                await store.create(deployment(f"d{i}"))
            assert store.revision == 0

            async def peek() -> None:
                try:
                    await store.get(DEPLOY, "default", "d0")
                    outsider.append("seen")
                except errors.NotFound:
                    outsider.append("not yet")

            await asyncio.create_task(peek())
        assert outsider == ["not yet"] and store.revision == 5
        assert [e.revision for e in await take(watch, 5)] == [1, 2, 3, 4, 5]

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
        assert rv(after) == 1
        assert summary(await take(watch, 1)) == [("ADDED", "c", 1)]

    async def test_other_writers_wait_for_the_batch(self, store: Store) -> None:
        async with store.batch():
            await store.create(deployment("in-batch-1"))
            other = asyncio.create_task(store.create(deployment("outside")))
            for _ in range(5):
                await asyncio.sleep(0)
            assert not other.done()
            await store.create(deployment("in-batch-2"))
        assert rv(await other) == 3

    async def test_nested_batches_join_the_outer_one(self, store: Store) -> None:
        async with store.batch():
            await store.create(deployment("a"))
            async with store.batch():
                await store.create(deployment("b"))
            assert store.revision == 0
        assert store.revision == 2


__all__ = ["BatchConformance", "WatchConformance"]
