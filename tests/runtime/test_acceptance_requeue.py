"""Acceptance (foundation issue, item 5): periodic requeues run on virtual time.

A reconciler answers ``Result(requeue_after=300)`` five times per key, then is done:
25 virtual minutes per key. On a VirtualClock the whole run takes well under a second
of wall time, and the timeline — virtual timestamps and keys, two keys interleaved —
is the same on every run.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.controller import Controller
from fleetkeeper.runtime.metrics import NoMetrics
from fleetkeeper.runtime.reconcile import Request, Result

REQUEUES = 5
PERIOD = 300.0


class Periodic:
    """Requeues each key ``REQUEUES`` times, then is done; records (virtual time, key)."""

    def __init__(self, clock: VirtualClock, keys: int) -> None:
        self.clock = clock
        self.timeline: list[tuple[float, str]] = []
        self._seen: dict[Request, int] = {}
        self._open = keys
        self.all_done = asyncio.Event()

    async def reconcile(self, request: Request) -> Result:
        self.timeline.append((self.clock.monotonic(), str(request)))
        count = self._seen[request] = self._seen.get(request, 0) + 1
        if count <= REQUEUES:
            return Result(requeue_after=PERIOD)
        self._open -= 1
        if not self._open:
            self.all_done.set()
        return Result()


def one_run(workers: int) -> list[tuple[float, str]]:
    clock = VirtualClock()

    async def main() -> list[tuple[float, str]]:
        reconciler = Periodic(clock, keys=2)
        controller = Controller("periodic", reconciler, workers=workers, clock=clock, metrics=NoMetrics())
        task = asyncio.create_task(controller.run())
        controller.enqueue(Request("default", "first"))
        controller.enqueue_after(Request("default", "second"), PERIOD / 2)
        async with asyncio.timeout(24 * 3600):  # virtual bound: a bug cannot hang the test
            await reconciler.all_done.wait()
        await asyncio.sleep(3600.0)  # nothing more may happen after "done"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return reconciler.timeline

    return clock.run(main())


def expected_timeline() -> list[tuple[float, str]]:
    events = [(n * PERIOD, "default/first") for n in range(REQUEUES + 1)]
    events += [(PERIOD / 2 + n * PERIOD, "default/second") for n in range(REQUEUES + 1)]
    return sorted(events)


@pytest.mark.parametrize(
    "workers", [pytest.param(1, id="with one worker"), pytest.param(4, id="with four workers")]
)
def test_five_requeues_of_300s_run_fast_and_repeat_exactly(workers: int) -> None:
    started = time.perf_counter()
    first = one_run(workers)
    wall = time.perf_counter() - started

    second = one_run(workers)

    assert wall < 1.0, f"25 virtual minutes took {wall:.3f} s of wall time"
    assert first == expected_timeline()
    assert first[-1][0] == REQUEUES * PERIOD + PERIOD / 2  # 25 min for each key, interleaved
    assert second == first
