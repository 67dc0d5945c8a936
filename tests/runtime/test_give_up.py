"""Failures no retry can mend are said once and the key dropped, not retried forever: an object the
API refuses as invalid, an interpreter rule failing on the object, a customization that keeps failing."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import MutableMapping
from typing import Any

import pytest
import structlog.testing

from fleetkeeper import errors
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.controller import SCRIPT_RETRIES, Controller, gives_up
from fleetkeeper.runtime.metrics import NoMetrics
from fleetkeeper.runtime.reconcile import Request, Result

from .helpers import run_virtual

A = Request("default", "a")
#: virtual seconds a controller is left to run: long enough for any retry the backoff allows
HOUR = 3600.0


class Failing:
    """A reconciler that raises ``error`` on every call and records when it ran."""

    def __init__(self, clock: VirtualClock, error: Exception) -> None:
        self.clock = clock
        self.error = error
        self.calls: list[float] = []

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(self.clock.monotonic())
        raise self.error


async def run_for(controller: Controller, seconds: float) -> None:
    task = asyncio.create_task(controller.run())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def capture() -> tuple[structlog.testing.LogCapture, Any]:
    logs = structlog.testing.LogCapture()
    logger = structlog.wrap_logger(None, processors=[logs],
                                   wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    return logs, logger


@pytest.mark.parametrize(("error", "attempts"), [
    pytest.param(errors.Invalid('Deployment "web" is invalid: spec: Invalid value: "x": must be an object'),
                 1,
                 id="the API refuses what the reconcile writes: one try"),
    pytest.param(errors.InterpreterError("spec.containers[0]: expected an object"), 1,
                 id="a native interpreter rule fails on the object: one try"),
    pytest.param(errors.ScriptError("web-ric.GetReplicas: attempt to index a nil value"), SCRIPT_RETRIES + 1,
                 id="a customization keeps failing: a few tries (it may have been its time limit)"),
])
def test_a_failure_no_retry_can_mend_is_dropped_after_its_tries(error: Exception, attempts: int) -> None:
    async def main(clock: VirtualClock) -> tuple[int, int, list[MutableMapping[str, Any]]]:
        reconciler = Failing(clock, error)
        logs, logger = capture()
        controller = Controller("test", reconciler, clock=clock, metrics=NoMetrics(), logger=logger)
        controller.enqueue(A)
        await run_for(controller, HOUR)
        said = [e for e in logs.entries if e["log_level"] == "error"]
        return len(reconciler.calls), controller.queue.num_requeues(A), said

    calls, requeues, said = run_virtual(main)
    assert calls == attempts
    assert requeues == 0, "the backoff is forgotten with the key"
    (entry,) = said
    assert entry["event"].startswith("reconcile cannot succeed with the objects as they are")
    assert entry["error"] == str(error)
    assert (entry["namespace"], entry["name"]) == ("default", "a")


def test_other_failures_are_still_retried_with_backoff() -> None:
    async def main(clock: VirtualClock) -> int:
        reconciler = Failing(clock, RuntimeError("the store is away"))
        _, logger = capture()
        controller = Controller("test", reconciler, clock=clock, metrics=NoMetrics(), logger=logger)
        controller.enqueue(A)
        await run_for(controller, HOUR)
        return len(reconciler.calls)

    assert run_virtual(main) > SCRIPT_RETRIES + 5


def test_a_dropped_key_comes_back_when_something_enqueues_it_again() -> None:
    async def main(clock: VirtualClock) -> list[float]:
        reconciler = Failing(clock, errors.InterpreterError("status: expected an object, got str"))
        _, logger = capture()
        controller = Controller("test", reconciler, clock=clock, metrics=NoMetrics(), logger=logger)
        controller.enqueue(A)
        task = asyncio.create_task(controller.run())
        await asyncio.sleep(60.0)
        controller.enqueue(A)  # the object changed
        await asyncio.sleep(60.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return reconciler.calls

    assert run_virtual(main) == [0.0, 60.0]


@pytest.mark.parametrize(("error", "retries", "dropped"), [
    (errors.Invalid("x"), 0, True),
    (errors.InterpreterError("x"), 0, True),
    (errors.ScriptError("x"), SCRIPT_RETRIES - 1, False),
    (errors.ScriptError("x"), SCRIPT_RETRIES, True),
    (errors.Conflict("x"), 50, False),
    (errors.BadRequest("x"), 50, False),
    (errors.MemberUnreachable("x"), 50, False),
    (errors.TerminalError("x"), 0, False),  # the worker loop's own branch
    (RuntimeError("x"), 50, False),
], ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v))
def test_gives_up_table(error: Exception, retries: int, dropped: bool) -> None:
    assert gives_up(error, retries) is dropped


class BusyThenDone:
    """A reconciler whose customization is busy ``times`` times, then lets it through."""

    def __init__(self, clock: VirtualClock, times: int, wait: float) -> None:
        self.clock, self.times, self.wait = clock, times, wait
        self.calls: list[float] = []

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(self.clock.monotonic())
        if len(self.calls) <= self.times:
            raise errors.CustomizationBusy("busy", customization="spinner", wait=self.wait)
        return Result()


def test_a_busy_customization_is_waited_for_not_counted_as_a_failure() -> None:
    busy = SCRIPT_RETRIES * 3  # far more than a failing script would be allowed

    async def main(clock: VirtualClock) -> tuple[list[float], int, list[MutableMapping[str, Any]]]:
        reconciler = BusyThenDone(clock, busy, wait=0.5)
        logs, logger = capture()
        controller = Controller("test", reconciler, clock=clock, metrics=NoMetrics(), logger=logger)
        controller.enqueue(A)
        await run_for(controller, HOUR)
        return reconciler.calls, controller.queue.num_requeues(A), logs.entries

    calls, requeues, entries = run_virtual(main)
    assert len(calls) == busy + 1, "the key is never dropped while the customization is only busy"
    assert [round(b - a, 3) for a, b in itertools.pairwise(calls)] == [0.5] * busy
    assert requeues == 0
    assert not [e for e in entries if e["log_level"] in ("error", "warning")], "busy is no error"
