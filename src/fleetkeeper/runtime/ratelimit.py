"""Rate limiters: how long a key waits before its next retry.

A rate limiter answers one question — "this key failed (again): how long until it may
run?" — and keeps whatever state it needs to answer it. They are small objects with
one protocol, composed rather than configured, exactly as client-go's workqueue does:

* :class:`ItemExponential` — per key, ``base * 2**failures`` capped at ``cap``
  (5 ms, 10 ms, 20 ms … 1000 s). It protects the system from one hot, broken key.
* :class:`TokenBucket` — one bucket shared by every key (10 per second, burst 100).
  It protects the API from a storm of failures across many keys. Every call reserves a
  token, possibly one that does not exist yet; the delay is how long until it will.
* :class:`MaxOf` — the longest delay any of its parts asks for; forgetting a key
  forgets it everywhere.

:func:`default_rate_limiter` is the combination controller-runtime uses.

``forget(key)`` is called when a key succeeded (or was dropped) so its next failure
starts again at the base delay. Limiters read time only through the injected
:class:`~fleetkeeper.clock.Clock`, so backoff is virtual under a ``VirtualClock``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Protocol

from fleetkeeper.clock import Clock


class RateLimiter(Protocol):
    """Decides the delay before a key's next attempt."""

    def when(self, key: Hashable) -> float:
        """Seconds to wait before ``key`` is retried (records one more failure)."""
        ...

    def forget(self, key: Hashable) -> None:
        """Stop tracking ``key``: its next failure starts from scratch."""
        ...

    def num_requeues(self, key: Hashable) -> int:
        """How many times ``key`` has been retried since it was last forgotten."""
        ...


class ItemExponential:
    """Per-key exponential backoff: ``base * 2**failures``, at most ``cap`` seconds."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        if base <= 0 or cap < base:
            raise ValueError(f"need 0 < base <= cap, got base={base} cap={cap}")
        self.base = base
        self.cap = cap
        self._failures: dict[Hashable, int] = {}
        # beyond this exponent the delay is the cap anyway (and 2.0**n would overflow)
        self._max_exponent = math.ceil(math.log2(cap / base)) + 1

    def when(self, key: Hashable) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        if failures >= self._max_exponent:
            return self.cap
        return min(self.base * 2.0**failures, self.cap)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class TokenBucket:
    """One shared bucket: ``rate`` tokens per second, holding at most ``burst``.

    Each call takes a token; when none is left the caller gets the time until its
    (reserved) token will have been refilled, so a burst of failures is spread out at
    ``rate`` per second instead of being retried all at once.
    """

    def __init__(self, rate: float = 10.0, burst: int = 100, *, clock: Clock) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"need rate > 0 and burst >= 1, got rate={rate} burst={burst}")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.monotonic()

    def when(self, key: Hashable) -> float:
        now = self._clock.monotonic()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def forget(self, key: Hashable) -> None:
        """Tokens are shared, not per key: nothing to forget."""

    def num_requeues(self, key: Hashable) -> int:
        return 0


class MaxOf:
    """The longest delay any of ``limiters`` asks for."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOf needs at least one rate limiter")
        self.limiters = limiters

    def when(self, key: Hashable) -> float:
        # every limiter must see the failure, so no short-circuiting max over a generator
        delays = [limiter.when(key) for limiter in self.limiters]
        return max(delays)

    def forget(self, key: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_rate_limiter(clock: Clock) -> RateLimiter:
    """Per-key exponential (5 ms → 1000 s) combined with a 10/s, burst-100 token bucket."""
    return MaxOf(ItemExponential(0.005, 1000.0), TokenBucket(10.0, 100, clock=clock))


__all__ = ["ItemExponential", "MaxOf", "RateLimiter", "TokenBucket", "default_rate_limiter"]
