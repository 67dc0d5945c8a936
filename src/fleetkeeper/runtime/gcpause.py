"""No collector pauses on the critical path: the automatic collector waits while decisions are made.

A control plane's heap is mostly its informer caches: hundreds of thousands of long-lived
objects, each write replacing one version by the next. Python's collector counts
allocations net of frees, so under that churn its youngest generation fills with cache
objects that are live anyway, and every collection walks them again for nothing. While
critical work is in flight (see :mod:`~fleetkeeper.runtime.turns`) the automatic
collector is therefore paused — memory is freed by reference counting as always; only
cycles wait — from the first critical reconcile until every controller that takes turns
(critical, dispatch and those that wait for both, not the exempt ones) has been quiet for
:data:`GC_RESUME_QUIET` seconds, or for at most :data:`MAX_GC_PAUSE` seconds (the next
critical reconcile then starts another pause).

When a pause ends, what it left alive is moved to the oldest generation without being
walked (``gc.freeze`` then ``gc.unfreeze``), as if it had survived the young collections
it skipped; otherwise the first collection after a burst walks everything the burst
allocated, and a failover starting then waits for it. Objects someone else froze stay
frozen: a pause then ends with the young generation as it is.

:class:`GcPause` is one manager's pause, a runnable of that manager. The collector is
one per process, so the pauses of every manager in it (a simulation runs the control
plane and its Pull agents together) hold it through one :class:`Collector`, built once
by the wiring layer.
"""

from __future__ import annotations

import asyncio
import gc

from fleetkeeper.clock import Clock
from fleetkeeper.runtime.turns import OTHERS, Turns

#: the longest one pause of the automatic garbage collector lasts (seconds)
MAX_GC_PAUSE = 120.0
#: how long the critical path must be quiet before the collector resumes (seconds)
GC_RESUME_QUIET = 0.25


class Collector:
    """The process's automatic collector, paused while any holder holds it."""

    def __init__(self) -> None:
        self._holders: set[int] = set()
        self._paused_by_us = False

    def hold(self, holder: object) -> None:
        if not self._holders and gc.isenabled():
            gc.disable()
            self._paused_by_us = True
        self._holders.add(id(holder))

    def release(self, holder: object) -> None:
        self._holders.discard(id(holder))
        if not self._holders and self._paused_by_us:
            self._paused_by_us = False
            if gc.get_freeze_count() == 0:  # nobody else's frozen objects to let go of
                gc.freeze()  # what the pause left alive, young as it is, to the oldest
                gc.unfreeze()  # generation: neither call walks the objects
            gc.enable()


class GcPause:
    """Pauses the collector from a critical reconcile until the turns are quiet (a runnable)."""

    name = "gc-pause"
    needs_leader_election = False

    def __init__(self, turns: Turns, *, clock: Clock, collector: Collector) -> None:
        self._turns = turns
        self._clock = clock
        self._collector = collector
        #: when this pause began (monotonic seconds), while it holds the collector
        self._paused_at: float | None = None
        self._pausing = asyncio.Event()

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def critical_started(self) -> None:
        """A critical controller starts a reconcile: pause the collector (if not already)."""
        if self._paused_at is not None:
            return
        self._paused_at = self._clock.monotonic()
        self._collector.hold(self)
        self._pausing.set()

    def finished(self, tier: int) -> None:
        """A controller that takes turns finished a reconcile or stopped: with no critical
        controller left running (cancelled, leadership lost), nothing is left to pause for."""
        if tier < OTHERS and not self._turns.critical_running:
            self._resume()

    async def run(self) -> None:
        """Resume the collector once no controller that takes turns is busy nor finished a
        reconcile for :data:`GC_RESUME_QUIET` seconds — the pause bridges the short gaps
        between one decision and the next — or after :data:`MAX_GC_PAUSE` seconds."""
        try:
            while True:
                await self._pausing.wait()
                await self._until_quiet()
                self._resume()
        finally:  # cancelled too: never leave the collector paused
            self._resume()

    async def _until_quiet(self) -> None:
        seen = -1
        while (paused_at := self._paused_at) is not None:
            if self._clock.monotonic() - paused_at > MAX_GC_PAUSE:
                return
            if seen == self._turns.finished and self._turns.quiet:
                return
            seen = self._turns.finished
            await self._clock.sleep(GC_RESUME_QUIET)

    def _resume(self) -> None:
        self._pausing.clear()
        if self._paused_at is not None:
            self._paused_at = None
            self._collector.release(self)


__all__ = ["GC_RESUME_QUIET", "MAX_GC_PAUSE", "Collector", "GcPause"]
