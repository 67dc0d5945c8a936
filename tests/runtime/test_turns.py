"""Turns: while a critical controller has work, the others wait; exempt ones never do."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.controller import Controller
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.metrics import NoMetrics
from fleetkeeper.runtime.reconcile import Request, Result
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


async def run_manager(clock: VirtualClock, build: list[tuple[str, dict[str, bool], float | None]],
                      keys: int, *, for_seconds: float) -> list[tuple[float, str, str]]:
    """Controllers (name, flags, requeue_after) each given ``keys`` keys before the manager starts."""
    client = LocalClient(open_store("memory://", clock=clock), clock=clock)
    manager = Manager(client, clock=clock)
    log: list[tuple[float, str, str]] = []
    for who, flags, requeue in build:
        controller = manager.controller(who, Steps(clock, who, log, requeue), workers=2,
                                        critical=flags.get("critical", False),
                                        wait_turn=flags.get("wait_turn", True))
        for index in range(keys):
            controller.enqueue(Request("", f"{who}-{index}"))
    task = asyncio.create_task(manager.run())
    await asyncio.sleep(for_seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
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
