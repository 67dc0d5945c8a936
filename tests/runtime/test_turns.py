"""Turns: while a critical controller has work, the others wait; exempt ones never do."""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass, field

import pytest

from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.controller import Controller, awaiting_io, current_reconcile_id
from fleetkeeper.runtime.gcpause import GC_RESUME_QUIET, MAX_GC_PAUSE
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.metrics import NoMetrics
from fleetkeeper.runtime.reconcile import FuncReconciler, Request, Result
from fleetkeeper.runtime.turns import Turns
from fleetkeeper.store import open_store

from .helpers import run_virtual


@dataclass
class Steps:
    """A reconciler that takes a few loop turns per key and notes (time, who, key) when it finishes."""

    clock: VirtualClock
    who: str
    log: list[tuple[float, str, str]]
    requeue_after: float | None = None
    steps: int = 3
    seen: set[str] = field(default_factory=set)

    async def reconcile(self, request: Request) -> Result:
        for _ in range(self.steps):
            await asyncio.sleep(0)
        self.log.append((self.clock.monotonic(), self.who, request.name))
        first = request.name not in self.seen
        self.seen.add(request.name)
        return Result(requeue_after=self.requeue_after if first else None)


def new_manager(clock: VirtualClock) -> Manager:
    return Manager(LocalClient(open_store("memory://", clock=clock), clock=clock), clock=clock)


async def run_for(manager: Manager, seconds: float) -> None:
    """Run ``manager`` for ``seconds`` of the clock, then stop it."""
    task = asyncio.create_task(manager.run())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def run_manager(clock: VirtualClock, build: list[tuple[str, dict[str, bool], float | None]],
                      keys: int, *, for_seconds: float) -> list[tuple[float, str, str]]:
    """Controllers (name, flags, requeue_after) each given ``keys`` keys before the manager starts."""
    manager = new_manager(clock)
    log: list[tuple[float, str, str]] = []
    for who, flags, requeue in build:
        controller = manager.controller(who, Steps(clock, who, log, requeue), workers=2,
                                        critical=flags.get("critical", False),
                                        wait_turn=flags.get("wait_turn", True))
        for index in range(keys):
            controller.enqueue(Request("", f"{who}-{index}"))
    await run_for(manager, for_seconds)
    return log


async def run_tiers(clock: VirtualClock, keys: int) -> list[tuple[float, str, str]]:
    """An other, a dispatch and a critical controller (added in that order), ``keys`` keys each."""
    manager = new_manager(clock)
    log: list[tuple[float, str, str]] = []
    for who in ("other", "dispatch", "critical"):
        controller = manager.controller(who, Steps(clock, who, log), workers=2, dispatch=who == "dispatch",
                                        critical=who == "critical")
        for index in range(keys):
            controller.enqueue(Request("", f"{who}-{index}"))
    await run_for(manager, 1.0)
    return log


def test_the_others_wait_while_a_critical_controller_has_work() -> None:
    log = run_virtual(lambda clock: run_manager(
        clock, [("normal", {}, None), ("critical", {"critical": True}, None)], 20, for_seconds=1.0))
    order = [who for _, who, _ in log]
    assert order == ["critical"] * 20 + ["normal"] * 20


def test_an_exempt_controller_does_not_wait() -> None:
    log = run_virtual(lambda clock: run_manager(
        clock, [("exempt", {"wait_turn": False}, None), ("critical", {"critical": True}, None)], 20,
        for_seconds=1.0))
    order = [who for _, who, _ in log]
    assert sorted(order) == ["critical"] * 20 + ["exempt"] * 20
    assert order.index("exempt") < len(order) - order[::-1].index("critical") - 1, \
        "exempt work interleaves with critical work"


def test_critical_work_waiting_for_a_deadline_does_not_hold_the_others() -> None:
    log = run_virtual(lambda clock: run_manager(
        clock, [("normal", {}, None), ("critical", {"critical": True}, 60.0)], 5, for_seconds=120.0))
    assert [(t, who) for t, who, _ in log if who == "normal"] == [(0.0, "normal")] * 5
    assert [t for t, who, _ in log if who == "critical"] == [0.0] * 5 + [60.0] * 5


def test_a_critical_controller_that_is_not_running_holds_nobody() -> None:
    async def main(clock: VirtualClock) -> tuple[bool, bool]:
        turns = Turns()
        idle = Controller("critical", Steps(clock, "critical", []), clock=clock, metrics=NoMetrics(),
                          critical=True)
        turns.register(idle)
        idle.enqueue(Request("", "queued"))
        not_running = turns.busy
        task = asyncio.create_task(idle.run())
        await asyncio.sleep(0)
        running = turns.busy
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return not_running, running

    assert run_virtual(main) == (False, True)


@dataclass
class Busy:
    """A critical reconciler that notes whether the collector runs, then works ``seconds`` of the clock."""

    clock: VirtualClock
    seconds: float
    seen: list[tuple[float, bool]] = field(default_factory=list)
    #: young-generation collections so far, at each reconcile
    collections: list[int] = field(default_factory=list)

    async def reconcile(self, request: Request) -> Result:
        self.seen.append((self.clock.monotonic(), gc.isenabled()))
        self.collections.append(gc.get_stats()[0]["collections"])
        await self.clock.sleep(self.seconds)
        return Result()


async def run_busy(clock: VirtualClock, keys: int, seconds: float, *, then: float
                   ) -> tuple[Busy, list[bool], bool]:
    """One critical controller given ``keys`` keys; (reconciler, collector state while it works,
    collector state ``then`` seconds after its work ends)."""
    client = LocalClient(open_store("memory://", clock=clock), clock=clock)
    manager = Manager(client, clock=clock)
    busy = Busy(clock, seconds)
    controller = manager.controller("critical", busy, workers=1, critical=True)
    for index in range(keys):
        controller.enqueue(Request("", f"key-{index}"))
    task = asyncio.create_task(manager.run())
    during: list[bool] = []
    for _ in range(keys):
        await clock.sleep(seconds)
        during.append(gc.isenabled())
    await clock.sleep(then)
    after = gc.isenabled()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return busy, during, after


def test_the_collector_pauses_while_critical_work_is_in_flight_and_resumes_when_it_is_quiet() -> None:
    assert gc.isenabled()
    busy, during, after = run_virtual(lambda clock: run_busy(clock, 5, 1.0, then=GC_RESUME_QUIET + 1.0))
    assert [enabled for _, enabled in busy.seen[1:]] == [False] * 4, "paused from the first reconcile on"
    assert during[:-1] == [False] * 4
    assert after is True, "resumed once the critical path is quiet"
    assert gc.isenabled()


def test_a_short_gap_between_critical_reconciles_keeps_the_collector_paused() -> None:
    async def main(clock: VirtualClock) -> list[bool]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        manager = Manager(client, clock=clock)
        busy = Busy(clock, 0.01)
        controller = manager.controller("critical", busy, workers=1, critical=True)
        task = asyncio.create_task(manager.run())
        states = []
        for index in range(5):  # a key every 0.1 s: gaps shorter than GC_RESUME_QUIET
            controller.enqueue(Request("", f"key-{index}"))
            await clock.sleep(0.1)
            states.append(gc.isenabled())
        await clock.sleep(GC_RESUME_QUIET * 2)
        states.append(gc.isenabled())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return states

    assert run_virtual(main) == [False] * 5 + [True]


def test_a_long_critical_stretch_ends_its_pause_after_the_limit_and_starts_another() -> None:
    """At MAX_GC_PAUSE the pause ends (what it left alive promoted, unwalked) and the next
    critical reconcile starts another."""
    async def main(clock: VirtualClock) -> tuple[list[bool], list[int | None]]:
        kept: list[Survivor] = []
        paused: list[bool] = []

        async def long(request: Request) -> Result:
            paused.append(not gc.isenabled())
            kept.append(Survivor())
            await clock.sleep(MAX_GC_PAUSE / 2 + 1)
            return Result()

        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        manager = Manager(client, clock=clock)
        controller = manager.controller("critical", FuncReconciler(long), workers=1, critical=True)
        for index in range(3):
            controller.enqueue(Request("", f"key-{index}"))
        task = asyncio.create_task(manager.run())
        await clock.sleep(MAX_GC_PAUSE + 30)  # past the limit, in the third reconcile
        generations = [_generation_of(k) for k in kept]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return paused, generations

    before = gc.get_stats()[2]["collections"]
    paused, generations = run_virtual(main)
    assert paused == [True, True, True], "paused in every reconcile, the third in a new pause"
    assert generations[:2] == [2, 2], "the first pause's survivors promoted when it ran out"
    assert gc.get_stats()[2]["collections"] == before, "by no full collection"


def test_the_collector_stays_off_if_it_was_off_already() -> None:
    gc.disable()
    try:
        _, _, after = run_virtual(lambda clock: run_busy(clock, 2, 1.0, then=GC_RESUME_QUIET + 1.0))
        assert after is False, "a pause never turns on a collector someone else turned off"
    finally:
        gc.enable()


def test_stopping_in_the_middle_of_critical_work_resumes_the_collector() -> None:
    async def main(clock: VirtualClock) -> tuple[bool, bool]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        manager = Manager(client, clock=clock)
        controller = manager.controller("critical", Busy(clock, 60.0), workers=1, critical=True)
        controller.enqueue(Request("", "long"))
        task = asyncio.create_task(manager.run())
        await clock.sleep(1)
        during = gc.isenabled()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return during, gc.isenabled()

    assert run_virtual(main) == (False, True)


def test_dispatch_waits_for_the_critical_tier_and_the_others_wait_for_both() -> None:
    log = run_virtual(lambda clock: run_tiers(clock, 10))
    order = [who for _, who, _ in log]
    assert order == ["critical"] * 10 + ["dispatch"] * 10 + ["other"] * 10


@dataclass
class Outside:
    """A dispatch reconciler that waits ``seconds`` of the clock on a member, marked or not."""

    clock: VirtualClock
    log: list[tuple[float, str, str]]
    seconds: float
    marked: bool

    async def reconcile(self, request: Request) -> Result:
        if self.marked:
            with awaiting_io():
                await self.clock.sleep(self.seconds)
        else:
            await self.clock.sleep(self.seconds)
        self.log.append((self.clock.monotonic(), "dispatch", request.name))
        return Result()


@pytest.mark.parametrize(("marked", "other_at"), [(True, 0.0), (False, 30.0)],
                         ids=["waiting on a member holds nobody", "unmarked waiting holds the others"])
def test_a_reconcile_awaiting_a_member_gives_up_its_turn_meanwhile(marked: bool, other_at: float) -> None:
    async def main(clock: VirtualClock) -> list[tuple[float, str, str]]:
        manager = new_manager(clock)
        log: list[tuple[float, str, str]] = []
        dispatch = manager.controller("dispatch", Outside(clock, log, 30.0, marked), workers=1, dispatch=True)
        other = manager.controller("other", Steps(clock, "other", log), workers=1)
        dispatch.enqueue(Request("", "slow"))
        other.enqueue(Request("", "report"))
        await run_for(manager, 60.0)
        return log

    log = run_virtual(main)
    assert [(t, who) for t, who, _ in log] == sorted([(other_at, "other"), (30.0, "dispatch")])


def test_awaiting_io_outside_a_reconcile_does_nothing() -> None:
    with awaiting_io():
        assert current_reconcile_id() is None


@dataclass
class Reports:
    """A reconciler that works ``seconds`` of the clock per key and notes whether the collector runs."""

    clock: VirtualClock
    seconds: float
    seen: list[bool] = field(default_factory=list)

    async def reconcile(self, request: Request) -> Result:
        self.seen.append(gc.isenabled())
        await self.clock.sleep(self.seconds)
        return Result()


def test_the_pause_lasts_until_the_work_after_the_decisions_is_done_but_not_for_exempt_work() -> None:
    """The collection that ends a pause walks all it allocated: it waits for the status
    reporting that follows the decisions, not for exempt controllers that never stop."""
    async def main(clock: VirtualClock) -> tuple[list[bool], list[bool], bool]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        manager = Manager(client, clock=clock)
        critical = manager.controller("critical", Busy(clock, 0.1), workers=1, critical=True)
        status = Reports(clock, 0.2)  # waits its turn: reports for a while after the decisions
        reporting = manager.controller("status", status, workers=1)
        probes = Reports(clock, 0.1)  # exempt (cluster probes): busy throughout
        probing = manager.controller("probes", probes, workers=1, wait_turn=False)
        critical.enqueue(Request("", "decision"))
        for index in range(10):
            reporting.enqueue(Request("", f"report-{index}"))
        for index in range(100):
            probing.enqueue(Request("", f"probe-{index}"))
        task = asyncio.create_task(manager.run())
        while len(status.seen) < 10:
            await clock.sleep(0.05)
        await clock.sleep(0.2 + GC_RESUME_QUIET * 3)  # the last report, then quiet (the probes go on)
        after = gc.isenabled()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return status.seen, probes.seen, after

    reports, probes, after = run_virtual(main)
    assert reports == [False] * 10, "paused while the reports that follow the decision are written"
    assert len(probes) < 100, "the exempt controller was still busy when the pause ended"
    assert after is True, "resumed once the controllers that take turns are quiet, probes or not"
    assert gc.isenabled()


class Survivor:
    """An object made during a pause and kept alive (tracked by the collector)."""


def _generation_of(obj: object) -> int | None:
    return next((g for g in range(3) if any(o is obj for o in gc.get_objects(generation=g))), None)


async def _pause_and_keep(clock: VirtualClock, kept: list[Survivor], *, then: float) -> None:
    """A critical reconcile that makes a Survivor, then ``then`` seconds of the plane."""
    async def make(request: Request) -> Result:
        kept.append(Survivor())
        await clock.sleep(0.1)
        return Result()

    client = LocalClient(open_store("memory://", clock=clock), clock=clock)
    manager = Manager(client, clock=clock)
    controller = manager.controller("critical", FuncReconciler(make), workers=1, critical=True)
    controller.enqueue(Request("", "one"))
    task = asyncio.create_task(manager.run())
    await clock.sleep(then)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_what_a_pause_left_alive_goes_to_the_oldest_generation_unwalked_when_it_ends() -> None:
    """The first collection after a pause must not walk everything the pause allocated."""
    kept: list[Survivor] = []
    before = gc.get_stats()[2]["collections"]
    run_virtual(lambda clock: _pause_and_keep(clock, kept, then=GC_RESUME_QUIET * 4))
    assert gc.isenabled() and gc.get_freeze_count() == 0, "resumed, nothing left frozen"
    assert _generation_of(kept[0]) == 2, "promoted to the oldest generation"
    assert gc.get_stats()[2]["collections"] == before, "by no full collection"


def test_objects_someone_else_froze_stay_frozen_when_a_pause_ends() -> None:
    theirs = [Survivor()]
    gc.freeze()
    try:
        kept: list[Survivor] = []
        run_virtual(lambda clock: _pause_and_keep(clock, kept, then=GC_RESUME_QUIET * 4))
        assert gc.get_freeze_count() > 0 and _generation_of(theirs[0]) is None, "still frozen"
        assert _generation_of(kept[0]) != 2, "the pause's own objects are left young"
    finally:
        gc.unfreeze()


def test_the_pause_runs_under_the_manager_and_nothing_of_it_outlives_the_manager() -> None:
    async def main(clock: VirtualClock) -> tuple[set[str], set[str]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        manager = Manager(client, clock=clock)
        controller = manager.controller("critical", Busy(clock, 60.0), workers=1, critical=True)
        controller.enqueue(Request("", "long"))
        task = asyncio.create_task(manager.run())
        await clock.sleep(1)
        during = {t.get_name() for t in asyncio.all_tasks()}
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return during, {t.get_name() for t in asyncio.all_tasks() if not t.done()}

    during, after = run_virtual(main)
    assert "gc-pause" in during, "one runnable of the manager, started with it"
    assert not any("gc" in name for name in after)
