"""The manager: caches sync before controllers start; leader-elected parts follow the lease."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from fleetkeeper.api import builtin
from fleetkeeper.api.meta import Resource, Unstructured
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.store import open_store

from .helpers import run_virtual

ConfigMap = builtin.ConfigMap
Log = list[tuple[float, str, str, bool]]


def cm(name: str) -> Resource:
    return ConfigMap.model_validate({"metadata": {"name": name, "namespace": "default"}})


@dataclass
class Seen:
    """A reconciler that notes, per key, when it ran and whether the cache had the object."""

    clock: VirtualClock
    who: str
    log: list[tuple[float, str, str, bool]]
    cache: Informer[Unstructured] | None = None

    async def reconcile(self, request: Request) -> Result:
        cached = self.cache is not None and self.cache.get(str(request)) is not None
        self.log.append((self.clock.monotonic(), self.who, str(request), cached))
        return Result()


@dataclass
class Ticker:
    """A plain runnable that counts its ticks and notes whether the caches had synced."""

    clock: VirtualClock
    caches: list[Informer[Unstructured]] = field(default_factory=list)
    ticks: list[tuple[float, bool]] = field(default_factory=list)

    async def run(self) -> None:
        for _ in range(1000):
            self.ticks.append((self.clock.monotonic(), all(c.has_synced for c in self.caches)))
            await asyncio.sleep(10.0)


def build(clock: VirtualClock, client: LocalClient, who: str, log: list[tuple[float, str, str, bool]],
          *, elect: bool) -> Manager:
    elector = None
    if elect:
        elector = LeaderElector(client, LeaderElectionConfig("fleetkeeper", who), clock=clock)
    manager = Manager(client, clock=clock, elector=elector)
    seen = Seen(clock, who, log)
    informer = manager.informers.informer_for(ConfigMap)
    seen.cache = informer
    manager.controller("configmaps", seen).watch(informer)
    return manager


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_controllers_start_after_the_caches_synced_and_follow_changes() -> None:
    async def main(clock: VirtualClock) -> tuple[Log, list[tuple[float, bool]]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        for name in ["a", "b"]:
            await client.create(cm(name))
        log: list[tuple[float, str, str, bool]] = []
        manager = build(clock, client, "solo", log, elect=False)
        ticker = Ticker(clock, [manager.informers.informer_for(ConfigMap)])
        manager.add(ticker)
        task = asyncio.create_task(manager.run())
        await manager.wait_started()
        await asyncio.sleep(5.0)
        await client.create(cm("c"))
        await asyncio.sleep(10.0)
        await stop(task)
        return log, ticker.ticks

    log, ticks = run_virtual(main)
    assert log == [(0.0, "solo", "default/a", True), (0.0, "solo", "default/b", True),
                   (5.0, "solo", "default/c", True)]
    assert ticks == [(0.0, True), (10.0, True)], "plain runnables start once the caches synced"


def test_only_the_leader_runs_controllers_and_a_standby_takes_over() -> None:
    async def main(clock: VirtualClock) -> list[tuple[float, str, str, bool]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        await client.create(cm("a"))
        log: list[tuple[float, str, str, bool]] = []
        first = asyncio.create_task(build(clock, client, "one", log, elect=True).run())
        await asyncio.sleep(1.0)
        standby = build(clock, client, "two", log, elect=True)
        second = asyncio.create_task(standby.run())
        await asyncio.sleep(10.0)
        await client.create(cm("b"))
        await asyncio.sleep(11.0)
        await stop(first)  # clean stop at t=22: the lease is released
        await asyncio.sleep(10.0)
        await stop(second)
        return log

    assert run_virtual(main) == [
        (0.0, "one", "default/a", True),
        (11.0, "one", "default/b", True),
        (23.0, "two", "default/a", True),  # the standby's first retry (at 1 + 2k s) after the release
        (23.0, "two", "default/b", True),
    ]


def test_runnables_cannot_be_added_while_running() -> None:
    async def main(clock: VirtualClock) -> bool:
        manager = Manager(LocalClient(open_store("memory://", clock=clock), clock=clock), clock=clock)
        task = asyncio.create_task(manager.run())
        await manager.wait_started()
        with pytest.raises(RuntimeError):
            manager.add(Ticker(clock))
        await stop(task)
        return True

    assert run_virtual(main)
