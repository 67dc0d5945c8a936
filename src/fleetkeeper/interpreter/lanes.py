"""Customization scripts off the event loop: one lane — a thread and a Lua runtime — per customization.

A control plane on real time runs its API server, probes and every controller on one event loop.
A Lua call runs for up to its time limit (a second), so a script that loops to its cap would stop
all of them for that long, once per call. Customization calls therefore run in worker threads;
lupa lets go of Python's lock while Lua runs, so the loop keeps its pace (the sandbox takes the
lock back only to read the clock every 16,000 instructions, to call the ``kube`` library and to
convert arguments and results, whose size is bounded, so a script spinning in a lane delays
the loop's timers only slightly). The native rules stay on the loop:
they are fast Python, and a thread hop would only slow the common path. The caller awaits the
lane inside the context it passes (a controller's ``awaiting_io``: meanwhile its reconcile holds
nobody's turn).

**One lane per customization.** Each ResourceInterpreterCustomization (by name) gets its own
single worker thread and its own Lua runtime, made on its first call and dropped with the
customization. Its calls run one at a time, in the order asked; a hostile customization keeps
only its own thread busy (and can exhaust only its own runtime's memory, ``Limits.memory``), so
the others, and every kind without a customization, are never queued behind it.

**A slow lane is not waited for.** A call waits for its lane at most :data:`WAIT` seconds, and
not at all when the lane is expected to stay taken longer than that (the calls in it times the
mean duration of its recent calls, or the age of the call running now when that is longer).
Either way it is refused with :class:`Busy`, so a reconcile never holds a controller worker
waiting behind a customization that spins: it fails, and the controller retries that key later
with its per-key exponential backoff — a customization whose calls keep timing out is asked again
less and less often, and its lane runs one call at a time. Fast customizations never meet this
(hundreds of millisecond calls fit in the wait).

This is the real-time path only (see :meth:`Interpreter.aio <fleetkeeper.interpreter.Interpreter.aio>`):
on a virtual clock every call runs inline, since a thread running while virtual time may jump
would make the result depend on the machine's speed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from fleetkeeper import errors
from fleetkeeper.clock import Clock
from fleetkeeper.interpreter.declarative import Declarative
from fleetkeeper.interpreter.lua import Limits, LuaSandbox

T = TypeVar("T")

#: The longest a call waits for its customization's lane before it is refused (seconds).
WAIT = 0.1
#: Weight of the newest call in a lane's mean call duration.
_RECENT = 0.3


class Busy(errors.CustomizationBusy):
    """A customization's calls are too slow to wait for right now; ask again later."""

    def __init__(self, customization: str, wait: float) -> None:
        super().__init__(f"ResourceInterpreterCustomization {customization!r} is busy: its scripts run "
                         f"longer than a call may wait for them ({WAIT} s); retrying later",
                         customization=customization, wait=wait)


class Lane:
    """One customization's worker thread, Lua runtime and call statistics.

    Calls take the lane one at a time (an asyncio lock, made for the running loop) and run in its
    thread; the thread records when the running call started and the mean call duration, which
    the loop reads (single attribute reads and writes, atomic under Python's lock).
    """

    def __init__(self, name: str, *, clock: Clock, limits: Limits | None) -> None:
        self.name = name
        self._clock = clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lua-{name}")
        self._declarative = Declarative(LuaSandbox(clock=clock, limits=limits))
        self._gate: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        #: calls holding or waiting for the lane
        self._queued = 0
        self._mean: float | None = None
        self._running_since: float | None = None

    def expected_wait(self) -> float:
        """Seconds until the calls already in this lane are expected to be done."""
        if not self._queued:
            return 0.0
        per_call = self._mean or 0.0
        running_since = self._running_since
        if running_since is not None:
            per_call = max(per_call, self._clock.monotonic() - running_since)
        return per_call * self._queued

    async def run(self, work: Callable[[Declarative], T]) -> T:
        """``work(declarative)`` in this lane's thread, once the lane is free; :class:`Busy` when
        it is expected to stay taken, or stays taken, longer than :data:`WAIT` seconds."""
        wait = self.expected_wait()
        if wait > WAIT:
            raise Busy(self.name, wait)
        gate = self._lock()
        self._queued += 1
        try:
            try:
                await asyncio.wait_for(gate.acquire(), WAIT)
            except TimeoutError:
                raise Busy(self.name, max(WAIT, self.expected_wait())) from None
            try:
                return await asyncio.wrap_future(self._executor.submit(self._call, work))
            finally:
                gate.release()
        finally:
            self._queued -= 1

    def close(self) -> None:
        """Take no more calls; the thread ends once the calls already in the lane are done."""
        self._executor.shutdown(wait=False)

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:
            self._gate = (loop, asyncio.Lock())
        return self._gate[1]

    def _call(self, work: Callable[[Declarative], T]) -> T:
        started = self._running_since = self._clock.monotonic()
        try:
            return work(self._declarative)
        finally:
            took = self._clock.monotonic() - started
            self._running_since = None
            self._mean = took if self._mean is None else self._mean + _RECENT * (took - self._mean)


class Lanes:
    """The lanes of the customizations in use, made on first call."""

    def __init__(self, *, clock: Clock, limits: Limits | None) -> None:
        self._clock = clock
        self._limits = limits
        self._lanes: dict[str, Lane] = {}

    def lane(self, customization: str) -> Lane:
        found = self._lanes.get(customization)
        if found is None:
            found = self._lanes[customization] = Lane(customization, clock=self._clock, limits=self._limits)
        return found

    def keep(self, customizations: Iterable[str]) -> None:
        """Close the lanes of customizations no longer in use."""
        wanted = set(customizations)
        for name in [name for name in self._lanes if name not in wanted]:
            self._lanes.pop(name).close()

    def close(self) -> None:
        self.keep(())


__all__ = ["WAIT", "Busy", "Lane", "Lanes"]
