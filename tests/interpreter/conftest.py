"""Shared fixtures for the interpreter tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fleetkeeper.interpreter import Interpreter, Limits

#: Small enough that a runaway script stops in a few milliseconds.
FAST = Limits(instructions=5_000_000, memory=32 * 1024 * 1024)
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class FixedClock:
    """A :class:`fleetkeeper.clock.Clock` that stands still (time never moves during a call)."""

    def __init__(self, now: datetime = EPOCH) -> None:
        self.start = now
        self.seconds = 0.0

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds)

    def monotonic(self) -> float:
        return self.seconds

    async def sleep(self, seconds: float) -> None:
        self.seconds += max(0.0, seconds)


class TickingClock(FixedClock):
    """A clock whose monotonic time moves a tenth of a second every time it is read."""

    def monotonic(self) -> float:
        self.seconds += 0.1
        return self.seconds


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def interp(clock: FixedClock) -> Interpreter:
    """An interpreter with no customizations, on a clock that stands still, with tight script limits."""
    return Interpreter(clock=clock, limits=FAST)
