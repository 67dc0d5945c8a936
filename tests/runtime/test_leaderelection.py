"""Leader election: two candidates on one store, on virtual time."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
import structlog
from prometheus_client import REGISTRY
from structlog.testing import capture_logs
from structlog.typing import FilteringBoundLogger

from fleetkeeper import errors
from fleetkeeper.api.coordination import Lease
from fleetkeeper.api.core import Event
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector, LeaseClient
from fleetkeeper.store import open_store

from .helpers import run_virtual

T = TypeVar("T", bound=Resource)
LEASE = "fleetkeeper-controller-manager"


class Unpluggable:
    """A real client with a cable that can be pulled: then calls fail or hang."""

    def __init__(self, client: LocalClient) -> None:
        self.client = client
        self.fault: str | None = None  # None, "refuse" or "hang"

    async def _check(self) -> None:
        if self.fault == "refuse":
            raise errors.InternalError("connection refused")
        if self.fault == "hang":
            await asyncio.sleep(3600.0)

    async def get(self, model: type[T], name: str, namespace: str = "") -> T:
        await self._check()
        return await self.client.get(model, name, namespace)

    async def list(self, model: type[T], namespace: str | None = None, **kw: Any) -> Any:
        await self._check()
        return await self.client.list(model, namespace, **kw)

    async def create(self, obj: T) -> T:
        await self._check()
        return await self.client.create(obj)

    async def update(self, obj: T) -> T:
        await self._check()
        return await self.client.update(obj)

    async def patch(self, model: type[T], name: str, namespace: str = "", **kw: Any) -> T:
        await self._check()
        return await self.client.patch(model, name, namespace, **kw)

    async def delete(self, model: type[T], name: str, namespace: str = "", **kw: Any) -> None:
        await self._check()
        await self.client.delete(model, name, namespace, **kw)


@dataclass
class Timeline:
    """Who led when, as (virtual time, identity, "start" | "stop")."""

    clock: VirtualClock
    events: list[tuple[float, str, str]] = field(default_factory=list)
    electors: list[LeaderElector] = field(default_factory=list)
    overlaps: list[float] = field(default_factory=list)

    def elector(self, client: LeaseClient, identity: str, *, release: bool = True) -> LeaderElector:
        config = LeaderElectionConfig(LEASE, identity, release_on_cancel=release)
        elector = LeaderElector(
            client, config, clock=self.clock,
            on_started_leading=lambda: self.events.append((self.clock.monotonic(), identity, "start")),
            on_stopped_leading=lambda: self.events.append((self.clock.monotonic(), identity, "stop")),
        )
        self.electors.append(elector)
        return elector

    async def watch_for_two_leaders(self) -> None:
        """Sample every 0.25 virtual seconds; remember any instant with two leaders."""
        for _ in range(100_000):
            if sum(e.is_leader for e in self.electors) > 1:
                self.overlaps.append(self.clock.monotonic())
            await asyncio.sleep(0.25)


async def start_at(delay: float, elector: LeaderElector) -> None:
    await asyncio.sleep(delay)
    await elector.run()


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_exactly_one_leader_and_takeover_after_expiry_when_the_leader_vanishes() -> None:
    async def main(clock: VirtualClock) -> tuple[list[tuple[float, str, str]], list[float], Lease]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        timeline = Timeline(clock)
        a = timeline.elector(client, "a", release=False)  # a crash: no release
        b = timeline.elector(client, "b")
        sampler = asyncio.create_task(timeline.watch_for_two_leaders())
        task_a = asyncio.create_task(start_at(0.0, a))
        task_b = asyncio.create_task(start_at(0.5, b))
        await asyncio.sleep(31.0)
        assert (a.is_leader, b.is_leader, b.leader) == (True, False, "a")
        await stop(task_a)  # last renewal at t=30: the lease runs until t=45
        await asyncio.sleep(60.0)
        lease = await client.get(Lease, LEASE, "karmada-system")
        await stop(task_b)
        await stop(sampler)
        return timeline.events, timeline.overlaps, lease

    events, overlaps, lease = run_virtual(main)
    assert events[:3] == [(0.0, "a", "start"), (31.0, "a", "stop"), (46.5, "b", "start")]
    assert overlaps == []
    assert (lease.spec.holder_identity, lease.spec.lease_transitions) == ("b", 1)


def test_a_released_lease_is_taken_at_the_next_retry() -> None:
    async def main(clock: VirtualClock) -> tuple[list[tuple[float, str, str]], str | None]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        timeline = Timeline(clock)
        a, b = timeline.elector(client, "a"), timeline.elector(client, "b")
        task_a = asyncio.create_task(start_at(0.0, a))
        task_b = asyncio.create_task(start_at(0.5, b))
        await asyncio.sleep(31.0)
        await stop(task_a)  # releases the lease on the way out
        await asyncio.sleep(10.0)
        await stop(task_b)  # and b releases too
        lease = await client.get(Lease, LEASE, "karmada-system")
        return timeline.events, lease.spec.holder_identity

    events, holder = run_virtual(main)
    assert events == [(0.0, "a", "start"), (31.0, "a", "stop"), (32.5, "b", "start"), (41.0, "b", "stop")]
    assert holder == ""


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param("refuse", id="a leader whose requests are refused steps down at the renew deadline"),
        pytest.param("hang", id="a leader whose requests hang steps down at the renew deadline"),
    ],
)
def test_a_leader_that_cannot_renew_steps_down_before_anyone_can_take_over(fault: str) -> None:
    async def main(clock: VirtualClock) -> tuple[list[tuple[float, str, str]], list[float], list[str]]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        cable = Unpluggable(client)
        timeline = Timeline(clock)
        a, b = timeline.elector(cable, "a"), timeline.elector(client, "b")
        work_log: list[str] = []

        async def work() -> None:
            work_log.append(f"work started at {clock.monotonic()}")
            try:
                await asyncio.sleep(10_000.0)
            finally:
                work_log.append(f"work cancelled at {clock.monotonic()}")

        sampler = asyncio.create_task(timeline.watch_for_two_leaders())
        task_a = asyncio.create_task(a.run(work))
        task_b = asyncio.create_task(start_at(0.5, b))
        await asyncio.sleep(31.0)
        cable.fault = fault  # last good renewal at t=30
        await asyncio.sleep(29.0)
        cable.fault = None  # back at t=60: b leads, a must stay a follower
        await asyncio.sleep(30.0)
        for task in (task_a, task_b, sampler):
            await stop(task)
        return timeline.events, timeline.overlaps, work_log

    events, overlaps, work_log = run_virtual(main)
    assert events[:3] == [(0.0, "a", "start"), (40.0, "a", "stop"), (46.5, "b", "start")]
    assert events[3:] == [(90.0, "b", "stop")], "a never led again while b renewed"
    assert overlaps == []
    assert work_log == ["work started at 0.0", "work cancelled at 40.0"]


def test_callbacks_report_the_observed_leader() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        seen: list[str] = []
        a = LeaderElector(client, LeaderElectionConfig(LEASE, "a"), clock=clock)
        b = LeaderElector(client, LeaderElectionConfig(LEASE, "b"), clock=clock, on_new_leader=seen.append)
        task_a = asyncio.create_task(a.run())
        await a.wait_for_leadership()
        task_b = asyncio.create_task(b.run())
        await asyncio.sleep(5.0)
        await stop(task_a)
        await asyncio.sleep(5.0)
        await stop(task_b)
        return seen

    assert run_virtual(main) == ["a", "b"]


@pytest.mark.parametrize(
    ("retry", "renew", "lease"),
    [
        pytest.param(2.0, 10.0, 10.0, id="a renew deadline as long as the lease is refused"),
        pytest.param(10.0, 10.0, 15.0, id="a retry period as long as the renew deadline is refused"),
        pytest.param(0.0, 10.0, 15.0, id="a zero retry period is refused"),
    ],
)
def test_unsafe_timings_are_refused(retry: float, renew: float, lease: float) -> None:
    with pytest.raises(ValueError):
        LeaderElectionConfig(LEASE, "a", retry_period=retry, renew_deadline=renew, lease_duration=lease)


def lease_events(store_events: list[Event]) -> list[tuple[str | None, str | None, str | None]]:
    """(reason, message, involved kind) of the Events about the Lease, oldest first."""
    return [(e.reason, e.message, e.involved_object.kind)
            for e in sorted(store_events, key=lambda e: (e.first_timestamp, e.name))
            if e.involved_object.name == LEASE]


def every_level() -> FilteringBoundLogger:
    """A logger that passes every level on to the processors in force (``capture_logs``'s)."""
    logger: FilteringBoundLogger = structlog.wrap_logger(
        None, wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    return logger


def test_a_takeover_is_logged_recorded_on_the_lease_and_counted() -> None:
    """Becoming leader, losing the lease and handing it over: one log line each, an Event on the
    Lease in client-go's words, and ``leader_election_master_status`` 1 while leading."""
    gauge = {"name": LEASE}

    async def main(clock: VirtualClock) -> tuple[list[Any], list[float | None], list[Any]]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        cable = Unpluggable(client)
        status: list[float | None] = [REGISTRY.get_sample_value("leader_election_master_status", gauge)]
        with capture_logs() as logs:
            # every level, whatever level an earlier test configured for the process's loggers
            a = LeaderElector(cable, LeaderElectionConfig(LEASE, "a"), clock=clock, logger=every_level())
            b = LeaderElector(client, LeaderElectionConfig(LEASE, "b"), clock=clock, logger=every_level())
            task_a = asyncio.create_task(a.run())
            await a.wait_for_leadership()
            await asyncio.sleep(1.0)
            status.append(REGISTRY.get_sample_value("leader_election_master_status", gauge))
            task_b = asyncio.create_task(start_at(0.5, b))
            await asyncio.sleep(9.0)
            cable.fault = "refuse"  # a cannot renew: it loses the lease, b takes it once expired
            await asyncio.sleep(30.0)
            status.append(REGISTRY.get_sample_value("leader_election_master_status", gauge))
            cable.fault = None
            await stop(task_b)  # b hands the lease over on its way out
            await stop(task_a)
        events = (await client.list(Event, "karmada-system")).items
        return lease_events(events), status, logs

    events, status, logs = run_virtual(main)
    assert events == [("LeaderElection", "a became leader", "Lease"),
                      ("LeaderElection", "b became leader", "Lease"),
                      ("LeaderElection", "b stopped leading", "Lease")], "a could not write while unplugged"
    assert status[1] == 1.0 and status[2] == 1.0  # b leads by then, in this same process
    said = [(log["event"], log.get("identity"), log["log_level"]) for log in logs
            if log["event"] in ("became leader", "lost the lease", "handed the lease over")]
    assert said == [("became leader", "a", "info"), ("lost the lease", "a", "warning"),
                    ("became leader", "b", "info"), ("handed the lease over", "b", "info")]
    lost = next(log for log in logs if log["event"] == "lost the lease")
    assert lost["reason"] == "not renewed within the renew deadline (10s)"
    assert REGISTRY.get_sample_value("leader_election_master_status", gauge) == 0.0


def test_an_elector_told_not_to_record_events_writes_none() -> None:
    async def main(clock: VirtualClock) -> list[Event]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        quiet = LeaderElector(client, LeaderElectionConfig(LEASE, "a", record_events=False), clock=clock)
        task = asyncio.create_task(quiet.run())
        await quiet.wait_for_leadership()
        await asyncio.sleep(5.0)
        await stop(task)
        return list((await client.list(Event, "karmada-system")).items)

    assert run_virtual(main) == []
