"""The controller's worker loop: outcomes, backoff, one worker per key, reconcile ids."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import MutableMapping, Sequence
from typing import Any

import pytest
import structlog.testing

from fleetkeeper.clock import VirtualClock
from fleetkeeper.errors import AlreadyExists, Conflict, MemberUnreachable, TerminalError
from fleetkeeper.runtime.controller import Controller, current_reconcile_id
from fleetkeeper.runtime.metrics import NoMetrics
from fleetkeeper.runtime.ratelimit import ItemExponential, RateLimiter
from fleetkeeper.runtime.reconcile import FuncReconciler, Request, Result

from .helpers import run_virtual

A = Request("default", "a")


class Script:
    """A reconciler that plays a list of outcomes per key and records when it ran."""

    def __init__(
        self, clock: VirtualClock, outcomes: Sequence[Result | Exception], *, hold: float = 0.0
    ) -> None:
        self.clock = clock
        self.outcomes = list(outcomes)
        self.hold = hold
        self.calls: list[tuple[float, str]] = []
        self.finished = asyncio.Event()

    async def reconcile(self, request: Request) -> Result:
        self.calls.append((self.clock.monotonic(), str(request)))
        if self.hold:
            await asyncio.sleep(self.hold)
        outcome = self.outcomes.pop(0) if self.outcomes else Result()
        if not self.outcomes:
            self.finished.set()
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


async def run_until(
    controller: Controller, done: asyncio.Event, *, extra: float = 0.0, bound: float = 1e6
) -> None:
    """Run ``controller`` until ``done``, then ``extra`` more virtual seconds, then cancel it."""
    task = asyncio.create_task(controller.run())
    async with asyncio.timeout(bound):
        await done.wait()
    await asyncio.sleep(extra)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def make(
    clock: VirtualClock, script: Script, *, workers: int = 1, rate_limiter: RateLimiter | None = None
) -> Controller:
    return Controller(
        "test", script, workers=workers, clock=clock, rate_limiter=rate_limiter, metrics=NoMetrics()
    )


def test_an_error_is_retried_with_exponential_backoff_then_forgotten() -> None:
    async def main(clock: VirtualClock) -> tuple[list[float], int]:
        script = Script(clock, [RuntimeError("boom")] * 3 + [Result()])
        controller = make(clock, script)
        controller.enqueue(A)
        await run_until(controller, script.finished, extra=60.0)
        return [t for t, _ in script.calls], controller.queue.num_requeues(A)

    times, requeues = run_virtual(main)
    assert times == pytest.approx([0.0, 0.005, 0.015, 0.035])
    assert requeues == 0, "success forgets the backoff"


def test_a_terminal_error_is_logged_and_dropped() -> None:
    async def main(clock: VirtualClock) -> tuple[int, int, int]:
        script = Script(clock, [TerminalError("cannot ever work")])
        controller = make(clock, script)
        controller.enqueue(A)
        await run_until(controller, script.finished, extra=3600.0)
        return len(script.calls), controller.queue.parked, controller.queue.num_requeues(A)

    assert run_virtual(main) == (1, 0, 0)


def test_a_terminal_error_forgets_earlier_backoff() -> None:
    async def main(clock: VirtualClock) -> int:
        script = Script(clock, [RuntimeError("flaky"), TerminalError("give up")])
        controller = make(clock, script)
        controller.enqueue(A)
        await run_until(controller, script.finished, extra=10.0)
        return controller.queue.num_requeues(A)

    assert run_virtual(main) == 0


@pytest.mark.parametrize(
    ("outcomes", "expected_times"),
    [
        pytest.param([Result()], [0.0], id="a plain result is not reconciled again"),
        pytest.param([Result(requeue_after=30.0), Result()], [0.0, 30.0],
                     id="requeue after comes back at that deadline"),
        pytest.param([RuntimeError("x"), Result(requeue_after=30.0), Result()], [0.0, 0.005, 30.005],
                     id="requeue after a retry is not delayed by the backoff"),
        pytest.param([Result(requeue_after=0.0), Result()], [0.0, 0.0], id="requeue after zero is immediate"),
    ],
)
def test_result_outcomes(outcomes: list[Result | Exception], expected_times: list[float]) -> None:
    async def main(clock: VirtualClock) -> list[float]:
        script = Script(clock, outcomes)
        controller = make(clock, script)
        controller.enqueue(A)
        await run_until(controller, script.finished, extra=3600.0)
        return [t for t, _ in script.calls]

    assert run_virtual(main) == pytest.approx(expected_times)


def test_no_two_workers_ever_reconcile_one_key() -> None:
    async def main(clock: VirtualClock) -> tuple[int, int, int, list[str]]:
        active: Counter[str] = Counter()
        peaks = {"key": 0, "total": 0}
        runs: list[str] = []
        controller: Controller

        async def slow(request: Request) -> Result:
            active[str(request)] += 1
            peaks["key"] = max(peaks["key"], active[str(request)])
            peaks["total"] = max(peaks["total"], sum(active.values()))
            runs.append(str(request))
            if request.name == "hot" and runs.count("default/hot") == 1:
                controller.enqueue(request)  # re-added while it is being processed
            await asyncio.sleep(10.0)
            active[str(request)] -= 1
            return Result()

        controller = Controller("slow", FuncReconciler(slow), workers=4, clock=clock, metrics=NoMetrics())
        for name in ["hot", "b", "c", "d"]:
            controller.enqueue(Request("default", name))
        task = asyncio.create_task(controller.run())
        await asyncio.sleep(5.0)
        controller.enqueue(Request("default", "hot"))  # and again, still processing
        await asyncio.sleep(100.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return peaks["key"], peaks["total"], runs.count("default/hot"), runs

    key_peak, total_peak, hot_runs, runs = run_virtual(main)
    assert key_peak == 1
    assert total_peak == 4, "different keys do run in parallel"
    assert hot_runs == 2, "the adds made during processing coalesce into one more reconcile"
    assert runs[-1] == "default/hot"


def test_each_reconcile_has_its_own_id() -> None:
    async def main(clock: VirtualClock) -> list[str | None]:
        seen: list[str | None] = []
        done = asyncio.Event()

        async def record(request: Request) -> Result:
            seen.append(current_reconcile_id())
            if len(seen) == 3:
                done.set()
            return Result(requeue_after=1.0)

        controller = Controller("ids", FuncReconciler(record), clock=clock, metrics=NoMetrics())
        controller.enqueue(A)
        await run_until(controller, done)
        seen.append(current_reconcile_id())
        return seen

    assert run_virtual(main) == ["ids#1", "ids#2", "ids#3", None]


def test_a_reconcile_interrupted_by_cancellation_runs_again_on_restart() -> None:
    async def main(clock: VirtualClock) -> list[tuple[float, str]]:
        script = Script(clock, [Result()], hold=10.0)
        controller = make(clock, script)
        controller.enqueue(A)
        first = asyncio.create_task(controller.run())
        await asyncio.sleep(5.0)
        first.cancel()  # mid-reconcile
        with pytest.raises(asyncio.CancelledError):
            await first
        await asyncio.sleep(100.0)
        await run_until(controller, script.finished)
        return script.calls

    assert run_virtual(main) == [(0.0, "default/a"), (105.0, "default/a")]


def test_a_controller_keeps_its_queue_across_restarts() -> None:
    async def main(clock: VirtualClock) -> list[tuple[float, str]]:
        script = Script(clock, [Result()])
        controller = make(clock, script)
        controller.enqueue(A)  # enqueued while not running
        await asyncio.sleep(50.0)
        await run_until(controller, script.finished)
        return script.calls

    assert run_virtual(main) == [(50.0, "default/a")]


def test_shutdown_lets_run_return() -> None:
    async def main(clock: VirtualClock) -> bool:
        controller = make(clock, Script(clock, []), workers=3)
        task = asyncio.create_task(controller.run())
        await clock.settle()
        controller.shutdown()
        async with asyncio.timeout(1.0):
            await task
        return task.done()

    assert run_virtual(main)


def test_the_rate_limiter_can_be_replaced() -> None:
    async def main(clock: VirtualClock) -> list[float]:
        script = Script(clock, [RuntimeError("x"), RuntimeError("x"), Result()])
        controller = make(clock, script, rate_limiter=ItemExponential(2.0, 100.0))
        controller.enqueue(A)
        await run_until(controller, script.finished)
        return [t for t, _ in script.calls]

    assert run_virtual(main) == [0.0, 2.0, 6.0]


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Controller("bad", FuncReconciler(lambda r: asyncio.sleep(0, Result())), workers=0,
                   clock=VirtualClock())


@pytest.mark.parametrize(
    ("error", "level", "traceback"),
    [
        (Conflict("the object has been modified"), "info", False),
        (AlreadyExists("works \"w\" already exists"), "info", False),
        (MemberUnreachable("member1: connection refused"), "warning", False),
        (RuntimeError("a bug"), "error", True),
    ],
)
def test_retries_are_logged_by_what_went_wrong(error: Exception, level: str, traceback: bool) -> None:
    """A lost optimistic-concurrency race or an unreachable member is routine: no traceback."""

    async def main(clock: VirtualClock) -> list[MutableMapping[str, Any]]:
        script = Script(clock, [error, Result()])
        capture = structlog.testing.LogCapture()
        logger = structlog.wrap_logger(None, processors=[capture],
                                       wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
        controller = Controller("test", script, clock=clock, metrics=NoMetrics(), logger=logger)
        controller.enqueue(A)
        await run_until(controller, script.finished, extra=1.0)
        return [entry for entry in capture.entries if "retrying" in str(entry.get("event"))]

    (entry,) = run_virtual(main)
    assert entry["log_level"] == level
    assert ("exc_info" in entry) is traceback
    assert entry["retries"] == 1
