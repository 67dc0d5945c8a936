"""VirtualClock: time moves only when nothing is runnable, deterministically."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from fleetkeeper.clock import VIRTUAL_EPOCH, SystemClock, VirtualClock


def test_sleep_jumps_to_the_deadline() -> None:
    clock = VirtualClock()

    async def main() -> float:
        await clock.sleep(3600)
        return clock.monotonic()

    assert clock.run(main()) == 3600.0
    assert clock.now() == VIRTUAL_EPOCH + timedelta(hours=1)


def _interleaved_run() -> list[tuple[float, str]]:
    clock = VirtualClock()
    order: list[tuple[float, str]] = []

    async def worker(name: str, period: float) -> None:
        for _ in range(3):
            await clock.sleep(period)
            order.append((clock.monotonic(), name))

    async def main() -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(worker("a", 300))
            tg.create_task(worker("b", 200))

    clock.run(main())
    return order


def test_timers_fire_in_deadline_order_and_runs_repeat_exactly() -> None:
    first = _interleaved_run()
    assert first == [(200, "b"), (300, "a"), (400, "b"), (600, "a"), (600, "b"), (900, "a")]
    assert _interleaved_run() == first


def test_wait_for_timeouts_are_virtual() -> None:
    clock = VirtualClock()

    async def main() -> float:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.sleep(10_000), timeout=30)
        return clock.monotonic()

    assert clock.run(main()) == 30.0


def test_settle_waits_for_runnable_work_without_moving_time() -> None:
    clock = VirtualClock()
    seen: list[str] = []

    async def chain(depth: int) -> None:
        for i in range(depth):
            await asyncio.sleep(0)
            seen.append(f"step{i}")

    async def main() -> tuple[float, list[str]]:
        asyncio.get_running_loop().create_task(chain(5))
        later = asyncio.get_running_loop().create_task(clock.sleep(50))
        await clock.settle()
        snapshot = (clock.monotonic(), list(seen))
        await later
        return snapshot

    at, steps = clock.run(main())
    assert at == 0.0
    assert steps == [f"step{i}" for i in range(5)]


def test_settle_lets_timers_due_now_fire_but_not_later_ones() -> None:
    clock = VirtualClock()
    fired: list[str] = []

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        loop.call_later(0, fired.append, "now")
        loop.call_later(1, fired.append, "later")
        await clock.settle()
        return list(fired)

    assert clock.run(main()) == ["now"]


def test_system_clock_is_aware_utc() -> None:
    now = SystemClock().now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)


def test_wake_first_at_runs_before_timers_due_at_the_same_instant() -> None:
    clock = VirtualClock()
    order: list[str] = []

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        loop.call_later(60, order.append, "timer@60")
        loop.call_later(30, order.append, "timer@30")
        await clock.wake_first_at(60)
        order.append(f"first@{clock.monotonic():g}")
        await clock.settle()
        return order

    assert clock.run(main()) == ["timer@30", "first@60", "timer@60"]


def test_wake_first_at_in_the_past_returns_at_once() -> None:
    clock = VirtualClock()

    async def main() -> float:
        await clock.sleep(10)
        await clock.wake_first_at(5)
        return clock.monotonic()

    assert clock.run(main()) == 10.0
