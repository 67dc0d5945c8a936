"""Time, injected.

No fleetkeeper code reads wall time directly: everything asks a :class:`Clock`.
``SystemClock`` is real time. ``VirtualClock`` (see :mod:`fleetkeeper.clock_virtual`)
runs an asyncio event loop whose time only moves when every task is blocked, jumping
straight to the next due timer, so a ten-minute failover story runs in well under a
second and gives the same timeline every run.

``now()`` is wall-clock-like (a timezone-aware UTC datetime, used for timestamps in
API objects); ``monotonic()`` is for measuring intervals; ``sleep()`` suspends the
caller. With a VirtualClock all three are virtual.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """The one source of time."""

    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale, for intervals and deadlines."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Suspend the caller for ``seconds``."""
        ...


class SystemClock:
    """Real time."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


def since(clock: Clock, then: datetime) -> timedelta:
    """How long ago ``then`` was, by ``clock``."""
    return clock.now() - then


# --------------------------------------------------------------------------- virtual time
#
# The virtual clock is an event loop, not a wrapper around one: asyncio computes how long
# it may block (the next timer's deadline) and asks its selector to wait that long. Our
# selector first polls real I/O without blocking; if anything is ready it returns it, and
# if nothing is runnable it *jumps* the loop's time to the deadline instead of waiting.
# Everything that measures time through the loop (``asyncio.sleep``, ``call_later``,
# ``wait_for`` timeouts, our workqueue's delayed adds) is therefore virtual, and time only
# moves when every task is blocked: the "autojump when idle" rule of docs/architecture.md (Clock).
#
# ``settle()`` waits for the instant the loop becomes idle *without* moving time, which
# is what a scenario step needs: "let the system settle; timers due later do not fire".

import selectors  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any, TypeVar  # noqa: E402

_T = TypeVar("_T")

#: Virtual time 0 is this instant, so timestamps in simulations are the same every run.
VIRTUAL_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class _VirtualSelector(selectors.BaseSelector):
    """Delegates registration to a real selector; turns blocking waits into time jumps."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.loop: VirtualEventLoop | None = None

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def get_map(self) -> Any:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        loop = self.loop
        assert loop is not None
        if loop._wake_settled():
            return []
        if loop._wake_first(timeout):
            return []
        if timeout is None:
            # Nothing scheduled at all: only real I/O (e.g. a thread finishing) can wake us.
            return self._real.select(None)
        loop._advance(timeout)
        return []


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time (see the module notes above)."""

    def __init__(self) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self._vtime = 0.0
        self._settle_waiters: list[asyncio.Future[None]] = []
        self._first_wakers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._first_seq = 0
        self.jumps = 0

    def time(self) -> float:
        return self._vtime

    def _advance(self, timeout: float) -> None:
        target = self._vtime + timeout
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        if scheduled:
            target = min(target, scheduled[0].when())
        if target > self._vtime:
            self._vtime = target
            self.jumps += 1

    def _wake_settled(self) -> bool:
        waiters = [w for w in self._settle_waiters if not w.done()]
        self._settle_waiters.clear()
        for waiter in waiters:
            waiter.set_result(None)
        return bool(waiters)

    def _wake_first(self, timeout: float | None) -> bool:
        """Jump to the earliest ``wake_first_at`` deadline if it comes no later than the next
        timer, and wake its waiter *before* the timers due at that instant run."""
        self._first_wakers = [w for w in self._first_wakers if not w[2].done()]
        if not self._first_wakers:
            return False
        when, _, waiter = min(self._first_wakers)
        if timeout is not None and when > self._vtime + timeout:
            return False
        if when > self._vtime:
            self._vtime = when
            self.jumps += 1
        self._first_wakers.remove(min(self._first_wakers))
        waiter.set_result(None)
        return True

    async def wake_first_at(self, when: float) -> None:
        """Sleep until virtual second ``when``; at that instant run before any timer due then."""
        if when <= self._vtime:
            return
        waiter: asyncio.Future[None] = self.create_future()
        self._first_seq += 1
        self._first_wakers.append((when, self._first_seq, waiter))
        await waiter

    async def settle(self) -> None:
        """Return once nothing is runnable at the current instant (time does not move)."""
        waiter: asyncio.Future[None] = self.create_future()
        self._settle_waiters.append(waiter)
        await waiter


class VirtualClock:
    """A :class:`Clock` whose time is the virtual time of a :class:`VirtualEventLoop`.

    Use :meth:`run` to run a coroutine on a fresh virtual loop::

        clock = VirtualClock()
        result = clock.run(main(clock))
    """

    def __init__(self, epoch: datetime = VIRTUAL_EPOCH) -> None:
        self.epoch = epoch
        self.loop = VirtualEventLoop()

    def now(self) -> datetime:
        return self.epoch + timedelta(seconds=self.loop.time())

    def monotonic(self) -> float:
        return self.loop.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    async def sleep_until(self, t: float) -> None:
        """Sleep until virtual second ``t`` (no-op if already past)."""
        await asyncio.sleep(max(0.0, t - self.loop.time()))

    async def wake_first_at(self, t: float) -> None:
        """Sleep until virtual second ``t`` and wake before anything else due at ``t``
        (a scenario step's actions happen first at their instant)."""
        await self.loop.wake_first_at(t)

    async def settle(self) -> None:
        """Wait until every task is blocked at the current instant; time does not move."""
        await self.loop.settle()

    def elapsed(self) -> float:
        """Virtual seconds since the epoch."""
        return self.loop.time()

    def run(self, main: Awaitable[_T]) -> _T:
        """Run ``main`` to completion on this clock's loop, then close the loop."""

        async def _wrap() -> _T:
            return await main

        with asyncio.Runner(loop_factory=self._take_loop) as runner:
            return runner.run(_wrap())

    def _take_loop(self) -> asyncio.AbstractEventLoop:
        return self.loop


def call_at_monotonic(clock: Clock, when: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
    """Schedule ``callback`` at ``clock.monotonic() == when`` on the running loop."""
    loop = asyncio.get_running_loop()
    delay = max(0.0, when - clock.monotonic())
    return loop.call_later(delay, callback)


__all__ = [
    "VIRTUAL_EPOCH", "Clock", "SystemClock", "VirtualClock", "VirtualEventLoop", "call_at_monotonic", "since",
]
