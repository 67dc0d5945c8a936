"""Log throttling: an outcome that repeats is said once per interval, with a count.

A member down for ten minutes, a binding no placement can satisfy, a lease nobody can
reach: each is retried on a timer and each retry ends the same way. Saying so every
time buries the one line an operator needs, so :class:`LogThrottle` lets the first one
through, then one per ``every`` seconds of the injected clock, telling how many it held
back meanwhile (``suppressed=…`` on the line). A different outcome for the same topic —
another error kind — is said at once, and :meth:`LogThrottle.forget` (the retry
succeeded) starts the topic afresh.

Memory is bounded: at most ``limit`` topics are remembered, the oldest forgotten first
(forgetting one only lets its next repeat through early).
"""

from __future__ import annotations

from collections.abc import Hashable

from fleetkeeper.clock import Clock

#: how often a repeated outcome is said again (seconds of the injected clock)
EVERY = 60.0
LIMIT = 4096


class LogThrottle:
    """Which repeats of an outcome to say (see the module notes)."""

    def __init__(self, clock: Clock, *, every: float = EVERY, limit: int = LIMIT) -> None:
        self._clock = clock
        self.every = every
        self._limit = limit
        #: topic → (what was said, when, repeats held back since)
        self._said: dict[Hashable, tuple[str, float, int]] = {}

    def admit(self, topic: Hashable, what: str) -> int | None:
        """``None`` to hold this line back; else say it, with the returned count of lines held
        back since the topic was last said (0 the first time)."""
        now = self._clock.monotonic()
        found = self._said.get(topic)
        if found is not None and found[0] == what:
            if now - found[1] < self.every:
                self._said[topic] = (what, found[1], found[2] + 1)
                return None
            self._said[topic] = (what, now, 0)
            return found[2]
        if found is None and len(self._said) >= self._limit:
            del self._said[next(iter(self._said))]
        self._said[topic] = (what, now, 0)
        return 0

    def forget(self, topic: Hashable) -> None:
        """The topic's trouble is over: its next outcome is said at once."""
        if self._said:
            self._said.pop(topic, None)


__all__ = ["EVERY", "LIMIT", "LogThrottle"]
