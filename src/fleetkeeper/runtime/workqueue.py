"""The workqueue: a stingy, fair queue of keys between event sources and workers.

Event handlers add keys; workers take them, reconcile, and say ``done``. The queue is
*stingy* so reconcilers stay cheap and race-free, following client-go's design:

* **dedup** — a key waiting in the queue is there once, however often it is added
  ("dirty" set). Reconcile is level-triggered, so ten updates of one object between two
  reconciles need one reconcile, not ten.
* **one worker per key** — a key handed to a worker is "processing" until ``done``.
  Adding it meanwhile only marks it dirty; ``done`` puts it back at the tail, so the
  change that arrived during the reconcile is seen by a *later* reconcile, never by a
  concurrent one. With N workers, N different keys run at once, never one key twice.
* **delayed adds** — ``add_after(key, s)`` parks the key until its deadline. A key
  parked twice keeps the *earliest* deadline. One loop timer is armed for the earliest
  deadline of all; when it fires, every due key becomes ready in (deadline, insertion)
  order. The timer is the running loop's, so under a
  :class:`~fleetkeeper.clock.VirtualClock` the wait is virtual and free; deadlines are
  read from the injected clock only.
* **rate-limited adds** — ``add_rate_limited(key)`` is ``add_after`` with the delay a
  :mod:`~fleetkeeper.runtime.ratelimit` limiter picks; ``forget(key)`` resets it.

Ready keys come out in FIFO order of their (effective) adds, and waiting workers are
served in the order they asked, so a run on virtual time is exactly repeatable. A queue
made with a ``priority`` function hands out the ready key of highest priority first
(FIFO among equals), as Karmada's scheduling queue orders bindings by their
``schedulePriority``; a key's priority is read when it becomes ready.

Each queue reports client-go's workqueue metrics (adds, retries, time queued, time
worked, and at scrape time its depth: :mod:`~fleetkeeper.runtime.workqueue_metrics`).

``shutdown()`` refuses further adds and drops parked keys; ``get()`` still hands out
what is already ready, then raises :class:`ShutDown`. Everything here runs on one
event loop and needs no locks: each method is a synchronous step except ``get``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from fleetkeeper.clock import Clock, call_at_monotonic
from fleetkeeper.runtime.ratelimit import RateLimiter, default_rate_limiter
from fleetkeeper.runtime.workqueue_metrics import QUEUES, QueueMetrics

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """The queue was shut down and holds nothing more to hand out."""


class _ByPriority(Generic[K]):
    """Ready keys, highest priority first and FIFO among equals (``deque``'s methods the queue uses)."""

    def __init__(self, priority: Callable[[K], int]) -> None:
        self._priority = priority
        self._heap: list[tuple[int, int, K]] = []
        self._seq = itertools.count()

    def append(self, key: K) -> None:
        heapq.heappush(self._heap, (-self._priority(key), next(self._seq), key))

    def popleft(self) -> K:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)


class Workqueue(Generic[K]):
    """A deduplicating, delaying, rate-limiting queue of keys (see the module notes)."""

    def __init__(self, *, clock: Clock, rate_limiter: RateLimiter | None = None, name: str = "",
                 priority: Callable[[K], int] | None = None) -> None:
        self.name = name
        self._clock = clock
        self._limiter = rate_limiter if rate_limiter is not None else default_rate_limiter(clock)
        self._ready: deque[K] | _ByPriority[K] = deque() if priority is None else _ByPriority(priority)
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        # delayed keys: a heap of (deadline, seq, key); an entry is live only while
        # ``_parked[key]`` still holds its (deadline, seq) — superseded entries are skipped
        self._heap: list[tuple[float, int, K]] = []
        self._parked: dict[K, tuple[float, int]] = {}
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_deadline: float | None = None
        self.metrics = QueueMetrics(name)
        QUEUES.add(self)

    # ------------------------------------------------------------------ adding
    def add(self, key: K) -> None:
        """Make ``key`` ready now (coalesces with a queued copy; waits if processing)."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        self.metrics.added(key, self._clock.monotonic())
        if key in self._processing:
            return  # ``done`` will queue it again
        self._ready.append(key)
        self._wake_one()

    def add_after(self, key: K, seconds: float) -> None:
        """Make ``key`` ready ``seconds`` from now; the earliest pending deadline wins."""
        if self._shutting_down:
            return
        if seconds <= 0:
            self.add(key)
            return
        deadline = self._clock.monotonic() + seconds
        parked = self._parked.get(key)
        if parked is not None and parked[0] <= deadline:
            return
        seq = next(self._seq)
        self._parked[key] = (deadline, seq)
        heapq.heappush(self._heap, (deadline, seq, key))
        self._arm()

    def add_rate_limited(self, key: K) -> None:
        """Add ``key`` after the delay the rate limiter gives it (one more failure)."""
        self.metrics.retries.inc()
        self.add_after(key, self._limiter.when(key))

    def forget(self, key: K) -> None:
        """Reset the rate limiter's memory of ``key`` (it succeeded or was dropped)."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """How many rate-limited retries ``key`` has had since it was last forgotten."""
        return self._limiter.num_requeues(key)

    # ------------------------------------------------------------------ taking
    async def get(self) -> K:
        """Wait for a ready key and mark it processing; the caller must call ``done``."""
        self._arm()
        while not self._ready:
            if self._shutting_down:
                raise ShutDown(self.name)
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._getters:
                    self._getters.remove(waiter)
                elif self._ready:
                    self._wake_one()  # we were woken but will not take it: pass it on
                raise
        key = self._ready.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        self.metrics.taken(key, self._clock.monotonic())
        return key

    def done(self, key: K) -> None:
        """Finish processing ``key``; if it was added meanwhile, it is queued again."""
        self._processing.discard(key)
        self.metrics.finished(key, self._clock.monotonic())
        if key in self._dirty:
            self._ready.append(key)
            self._wake_one()

    # ------------------------------------------------------------------ lifecycle
    def shutdown(self) -> None:
        """Refuse new adds, drop parked keys, and wake idle getters (they raise ShutDown)."""
        self._shutting_down = True
        self._heap.clear()
        self._parked.clear()
        self._disarm()
        if not self._ready:
            self.metrics.dropped()
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def __len__(self) -> int:
        """Keys ready to be taken (not counting processing or parked ones)."""
        return len(self._ready)

    @property
    def parked(self) -> int:
        """Keys waiting for a deadline."""
        return len(self._parked)

    def is_processing(self, key: K) -> bool:
        return key in self._processing

    def now(self) -> float:
        """The queue clock's monotonic reading (what its metrics measure with)."""
        return self._clock.monotonic()

    # ------------------------------------------------------------------ internals
    def _wake_one(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _arm(self) -> None:
        """Point the one timer at the earliest live deadline (lazily, inside a loop)."""
        while self._heap and self._parked.get(self._heap[0][2]) != self._heap[0][:2]:
            heapq.heappop(self._heap)  # superseded entry
        if not self._heap:
            self._disarm()
            return
        deadline = self._heap[0][0]
        if self._timer is not None and self._timer_deadline == deadline:
            return
        try:
            handle = call_at_monotonic(self._clock, deadline, self._on_timer)
        except RuntimeError:  # no running loop yet: ``get`` arms it
            return
        self._disarm()
        self._timer, self._timer_deadline = handle, deadline

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_deadline = None, None

    def _on_timer(self) -> None:
        # loops may fire a timer a hair early (clock resolution): the armed deadline counts as due
        limit = max(self._clock.monotonic(), self._timer_deadline or 0.0)
        self._timer, self._timer_deadline = None, None
        while self._heap and self._heap[0][0] <= limit:
            deadline, seq, key = heapq.heappop(self._heap)
            if self._parked.get(key) == (deadline, seq):
                del self._parked[key]
                self.add(key)
        self._arm()


__all__ = ["ShutDown", "Workqueue"]
