"""Informers on the real memory store: list+watch, handlers, indices, re-list on Gone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from fleetkeeper.api import builtin
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer, guard_cache
from fleetkeeper.store import Store, open_store

from .helpers import run_virtual

ConfigMap = builtin.ConfigMap


def cm(name: str, namespace: str = "default", *, value: str = "1", **labels: str) -> Resource:
    return ConfigMap.model_validate(
        {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "data": {"v": value}}
    )


@dataclass
class Recorder:
    """Records handler calls as readable strings."""

    events: list[str] = field(default_factory=list)

    def __call__(self, old: Resource | None, new: Resource | None) -> None:
        if old is None and new is not None:
            self.events.append(f"add {new.key}")
        elif old is not None and new is not None:
            self.events.append(f"update {new.key} {_value(old)}->{_value(new)}")
        elif old is not None:
            self.events.append(f"delete {old.key}")


def _value(obj: Resource) -> str:
    data = obj.model_extra.get("data") if obj.model_extra else None
    return str((data or {}).get("v"))


@asynccontextmanager
async def running(informer: Informer[Resource]) -> AsyncIterator[Informer[Resource]]:
    task = asyncio.create_task(informer.run())
    try:
        async with asyncio.timeout(60.0):
            await informer.wait_for_sync()
        yield informer
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def setup(
    clock: VirtualClock, *, history: int = 10_000, watch_queue: int | None = None
) -> tuple[Store, LocalClient]:
    store = open_store("memory://", clock=clock, history=history, watch_queue=watch_queue)
    return store, LocalClient(store, clock=clock)


async def set_value(client: LocalClient, name: str, value: str, namespace: str = "default") -> None:
    current = await client.get(ConfigMap, name, namespace)
    changed = current.deep_copy()
    changed.set_field("data", {"v": value})
    await client.update(changed)


def test_lists_then_watches_and_reports_every_change_in_order() -> None:
    async def main(clock: VirtualClock) -> tuple[list[str], list[str]]:
        _, client = setup(clock)
        await client.create(cm("before"))
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)
        record = Recorder()
        informer.add_handler(FuncHandler(record))
        async with running(informer):
            await client.create(cm("after"))
            await set_value(client, "before", "2")
            await client.delete(ConfigMap, "after", "default")
            await clock.settle()
            keys = informer.keys()
        return record.events, keys

    events, keys = run_virtual(main)
    assert events == ["add default/before", "add default/after", "update default/before 1->2",
                      "delete default/after"]
    assert keys == ["default/before"]


def test_no_write_is_lost_between_the_list_and_the_watch() -> None:
    async def main(clock: VirtualClock) -> tuple[list[str], list[str], list[str]]:
        _, client = setup(clock)
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)
        record = Recorder()
        informer.add_handler(FuncHandler(record))

        async def writer() -> None:
            for i in range(40):
                await client.create(cm(f"obj-{i:02d}"))

        async with running(informer):
            await asyncio.gather(writer(), informer.wait_for_sync())
            await clock.settle()
            cached = informer.keys()
        stored = [obj.key for obj in (await client.list(ConfigMap)).items]
        return cached, stored, record.events

    cached, stored, events = run_virtual(main)
    assert cached == stored and len(stored) == 40
    assert sorted(events) == [f"add {key}" for key in stored], "each object reported exactly once"


def test_a_watch_that_falls_behind_gets_gone_and_the_informer_relists() -> None:
    async def main(clock: VirtualClock) -> tuple[int, list[str], list[str], list[str]]:
        store, client = setup(clock, history=100, watch_queue=4)
        for name in ["keep", "change", "drop"]:
            await client.create(cm(name))
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)
        record = Recorder()
        informer.add_handler(FuncHandler(record))
        async with running(informer):
            async with store.batch():  # one burst, more than the watch buffer holds
                await set_value(client, "change", "2")
                await client.delete(ConfigMap, "drop", "default")
                for i in range(6):
                    await client.create(cm(f"new-{i}"))
            await asyncio.sleep(60.0)  # the backoff, then the re-list
            lists, cached = informer.lists, informer.keys()
        stored = [obj.key for obj in (await client.list(ConfigMap)).items]
        return lists, cached, stored, record.events

    lists, cached, stored, events = run_virtual(main)
    assert lists == 2, "the Gone watch led to exactly one re-list"
    assert cached == stored
    assert events[:3] == ["add default/change", "add default/drop", "add default/keep"]
    assert sorted(events[3:]) == sorted(
        ["update default/change 1->2", "delete default/drop"] + [f"add default/new-{i}" for i in range(6)]
    ), "the re-list reports exactly what changed during the gap, nothing twice"


def test_namespace_and_label_selector_limit_the_cache() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        _, client = setup(clock)
        await client.create(cm("a", "team-1", app="web"))
        await client.create(cm("b", "team-1", app="db"))
        await client.create(cm("c", "team-2", app="web"))
        informer: Informer[Resource] = Informer(
            client, ConfigMap, namespace="team-1", label_selector="app=web", clock=clock
        )
        async with running(informer):
            await client.create(cm("d", "team-1", app="web"))
            await client.create(cm("e", "team-2", app="web"))
            await clock.settle()
            return informer.keys()

    assert run_virtual(main) == ["team-1/a", "team-1/d"]


def test_indices_follow_the_cache() -> None:
    async def main(clock: VirtualClock) -> tuple[list[str], list[str]]:
        _, client = setup(clock)
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)
        informer.add_indexer("by-value", lambda obj: [_value(obj)])
        await client.create(cm("a", value="x"))
        await client.create(cm("b", value="y"))
        async with running(informer):
            before = [o.key for o in informer.by_index("by-value", "x")]
            await set_value(client, "b", "x")
            await clock.settle()
            after = [o.key for o in informer.by_index("by-value", "x")]
        return before, after

    assert run_virtual(main) == (["default/a"], ["default/a", "default/b"])


def test_a_late_handler_is_replayed_the_cache_and_a_failing_handler_harms_nobody() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        _, client = setup(clock)
        await client.create(cm("a"))
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)

        def explode(old: Resource | None, new: Resource | None) -> None:
            raise RuntimeError("handler bug")

        informer.add_handler(FuncHandler(explode))
        async with running(informer):
            record = Recorder()
            informer.add_handler(FuncHandler(record))
            await client.create(cm("b"))
            await clock.settle()
        return record.events

    assert run_virtual(main) == ["add default/a", "add default/b"]


def test_the_factory_shares_one_informer_per_kind_and_namespace() -> None:
    async def main(clock: VirtualClock) -> tuple[bool, bool, bool, list[str]]:
        _, client = setup(clock)
        await client.create(cm("a", "team-1"))
        factory = InformerFactory(client, clock=clock)
        first = factory.informer_for(ConfigMap)
        again = factory.informer_for(ConfigMap)
        scoped = factory.informer_for(ConfigMap, "team-1")
        task = asyncio.create_task(factory.run())
        async with asyncio.timeout(60.0):
            await factory.wait_for_sync()
            late = factory.informer_for(ConfigMap, "team-2")  # asked for after the start
            await factory.wait_for_sync()
        synced = factory.has_synced
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return first is again, first is not scoped, synced and late.has_synced, scoped.keys()

    assert run_virtual(main) == (True, True, True, ["team-1/a"])


def test_the_cache_guard_names_an_object_changed_in_place_while_cached() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        _, client = setup(clock)
        await client.create(cm("shared"))
        await client.create(cm("respected"))
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)
        changed = guard_cache(True)
        try:
            async with running(informer):
                cached = informer.get("default/shared")
                assert cached is not None
                cached.set_field("data", {"v": "changed in place"})  # what callers must not do
                await set_value(client, "shared", "2")
                await set_value(client, "respected", "2")  # copied first: not reported
                await client.delete(ConfigMap, "respected", "default")
                await clock.settle()
        finally:
            guard_cache(False)
        return list(changed)

    changed = run_virtual(main)
    assert len(changed) == 1 and changed[0].startswith("ConfigMap default/shared resourceVersion ")


def test_the_cache_guard_reports_nothing_for_versions_cached_while_it_was_off() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        _, client = setup(clock)
        await client.create(cm("kept"))
        informer: Informer[Resource] = Informer(client, ConfigMap, clock=clock)
        try:
            guard_cache(True)
            async with running(informer):
                await clock.settle()  # "kept" cached and remembered by this guard
                guard_cache(False)
                await set_value(client, "kept", "2")  # cached while off: nothing remembered
                await clock.settle()
                changed = guard_cache(True)
                await set_value(client, "kept", "3")  # replaces the version cached while off
                await clock.settle()
        finally:
            guard_cache(False)
        return list(changed)

    assert run_virtual(main) == []
