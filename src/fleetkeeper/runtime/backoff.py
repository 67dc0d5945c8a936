"""Backoff for long-running loops that restart (an informer's list+watch).

A restart after a failure waits ``initial`` seconds, then twice that, up to ``cap``;
once the loop has been calm for ``reset_after`` seconds (no restart), the next restart
starts again at ``initial``. These are client-go's reflector defaults (0.8 s doubling
to 30 s, reset after 2 minutes). There is no jitter: under virtual time a run must be
exactly repeatable, and our fleets are far from the size where synchronized restarts
hurt. Time is read only through the injected clock.

This is a different thing from a workqueue rate limiter: it paces one loop, not the
retries of many keys.
"""

from __future__ import annotations

from fleetkeeper.clock import Clock


class Backoff:
    """Exponential restart delays for one loop, reset after a calm period."""

    def __init__(
        self, initial: float = 0.8, cap: float = 30.0, *, reset_after: float = 120.0, clock: Clock
    ) -> None:
        if initial <= 0 or cap < initial:
            raise ValueError(f"need 0 < initial <= cap, got initial={initial} cap={cap}")
        self.initial = initial
        self.cap = cap
        self.reset_after = reset_after
        self._clock = clock
        self._current = initial
        self._last: float | None = None

    def next(self) -> float:
        """The delay before this restart (and remember that a restart happened now)."""
        now = self._clock.monotonic()
        if self._last is not None and now - self._last > self.reset_after:
            self._current = self.initial
        self._last = now
        delay = self._current
        self._current = min(self._current * 2.0, self.cap)
        return delay

    def reset(self) -> None:
        """Start again at ``initial`` on the next restart."""
        self._current = self.initial
        self._last = None


__all__ = ["Backoff"]
