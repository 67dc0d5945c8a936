"""The load meter: how busy the controllers that take turns are, for work that can wait.

Work that only records what was done (the recorder's Events and timeline entries,
:class:`~fleetkeeper.runtime.recorder.Sink`) waits for the *load* of every tier rather
than for one reconcile: it goes on once the controllers that take turns (see
:mod:`~fleetkeeper.runtime.turns`) have finished fewer than :data:`LOAD_RECONCILES`
reconciles in the last :data:`LOAD_WINDOW` seconds. A handful of decisions is recorded at
once; ten thousand are recorded after the moves and the status reports that follow them.
"""

from __future__ import annotations

from collections import deque

from fleetkeeper.clock import Clock

#: reconciles (of controllers that take turns) within :data:`LOAD_WINDOW` seconds that make the plane loaded
LOAD_RECONCILES = 64
LOAD_WINDOW = 1.0


class LoadMeter:
    """When the last :data:`LOAD_RECONCILES` reconciles finished; a gate for deferred work."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock
        #: when the last LOAD_RECONCILES reconciles of any tier finished (monotonic seconds)
        self._recent: deque[float] = deque(maxlen=LOAD_RECONCILES)

    def critical_started(self) -> None:
        """A critical reconcile starts (nothing to count until it finishes)."""

    def finished(self, tier: int) -> None:
        """A controller that takes turns finished a reconcile (or stopped)."""
        if self._clock is not None:
            self._recent.append(self._clock.monotonic())

    async def unloaded(self) -> None:
        """Return once fewer than :data:`LOAD_RECONCILES` reconciles finished in the last
        :data:`LOAD_WINDOW` seconds (at once without a clock)."""
        while self._clock is not None and len(self._recent) == LOAD_RECONCILES:
            wait = self._recent[0] + LOAD_WINDOW - self._clock.monotonic()
            if wait <= 0:
                return
            await self._clock.sleep(wait)


__all__ = ["LOAD_RECONCILES", "LOAD_WINDOW", "LoadMeter"]
