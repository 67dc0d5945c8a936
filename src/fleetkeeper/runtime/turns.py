"""Turns: the failover's critical path goes first.

Every controller of a process shares one event loop, and a worker gets one reconcile
per loop turn (see :mod:`~fleetkeeper.runtime.controller`). When a cluster fails
under ten thousand workloads, the evictions and the rescheduling — what decides where
the workloads go — would then share every turn with the work downstream of them
(Works rewritten, applied, their status reported), and a turn grows long: the first
workload to move waits for hundreds of unrelated reconciles.

A controller marked *critical* (the taint-manager's evictions, the scheduler) is
registered here by its manager. While any running critical controller has keys ready
or being reconciled, the other controllers' workers wait before their next reconcile
(a key already taken stays theirs, marked processing, so it is never given to another
worker). Critical work is never long: every key it takes is settled in one reconcile,
retries and requeues wait in the queue's timers (not counted), so the others resume as
soon as the decisions are made — and then see the final decision once instead of each
intermediate one.

Carrying the decisions to the members comes next: the *dispatch* controllers (the binding
controller, which rewrites the Works, and execution, which applies them) wait for the
critical ones, and every other controller (status reporting, graceful-eviction cleanup,
…) waits for both — a workload runs in its new place before anyone reports on it.

Turns share the event loop's time, not the members': a reconcile that waits on a member
cluster (execution applying a Work to a cluster that does not answer, until the probe
timeout) says so with :func:`~fleetkeeper.runtime.controller.awaiting_io`, and holds
nobody's turn while it waits — the status of every other cluster is still reported.

Controllers upstream of the critical path (cluster status, taint policies, remedies) and
the traffic path (multi-cluster ingress, the load balancer's route sync) are not critical
and do not wait either: they are *exempt* (``wait_turn=False``), so failure detection and
taking a broken cluster out of traffic never queue behind a large rescheduling.

Work that only records what was done comes last, and waits for the *load* of every tier
instead: the recorder's Events and timeline entries
(:func:`~fleetkeeper.runtime.recorder.defer_while`) are written once the controllers that
take turns have finished fewer than :data:`LOAD_RECONCILES` reconciles in the last
:data:`LOAD_WINDOW` seconds, so a handful of decisions is recorded at once, and ten
thousand are recorded after the moves and after the status reports that follow them.

**No collector pauses on the critical path.** A control plane's heap is mostly its
informer caches: hundreds of thousands of long-lived objects, each write replacing one
version by the next. Python's collector counts allocations net of frees, so under that
churn its youngest generation fills with cache objects that are live anyway, and every
collection walks them again — measured with ``fleetkeeper bench failover``, a sixth of
the rescheduling's time went to collections that found nothing. While critical work is
in flight the automatic collector is therefore paused (memory is freed by reference
counting as always; only cycles wait), from the first critical reconcile until every
controller that takes turns — critical, dispatch and those that wait for both, not the
exempt ones — has been quiet for :data:`GC_RESUME_QUIET` seconds, or for at most
:data:`MAX_GC_PAUSE` seconds (the next critical reconcile then starts another pause).
When a pause ends, what it left alive is moved to the oldest generation without being
walked (``gc.freeze`` then ``gc.unfreeze``), as if it had survived the young collections
it skipped: otherwise the first collection walks everything allocated during the pause
— a second after a thousand Deployments propagated, over four seconds after ten thousand
bindings were set up, finding nothing either time — and a failover starting then waits
for it. Cycles the burst left (measured: none) are found by the full collections that
follow, as for any long-lived object. Objects someone else froze stay frozen: a pause
then ends with the collector's young generation as it is.
"""

from __future__ import annotations

import asyncio
import gc
from collections import deque
from typing import Protocol

from fleetkeeper.clock import Clock

#: the tiers of :attr:`Controller.tier <fleetkeeper.runtime.controller.Controller.tier>`
CRITICAL, DISPATCH, OTHERS = 0, 1, 2
#: loop turns the critical controllers must stay idle before the others resume: a decision
#: reaches the next critical controller a few turns after its write (store → watch → informer
#: → queue), and without this margin every waiting worker would slip in through that gap
QUIET_TURNS = 4
#: reconciles (of controllers that take turns) within :data:`LOAD_WINDOW` seconds that make the plane loaded
LOAD_RECONCILES = 64
LOAD_WINDOW = 1.0
#: the longest one pause of the automatic garbage collector lasts (seconds)
MAX_GC_PAUSE = 120.0
#: how long the critical path must be quiet before the collector resumes (seconds)
GC_RESUME_QUIET = 0.25


class _Collector:
    """Pauses of the process's automatic collector, shared by every :class:`Turns` in it."""

    def __init__(self) -> None:
        self._holders: set[int] = set()
        self._paused_by_us = False

    def hold(self, holder: int) -> None:
        if not self._holders and gc.isenabled():
            gc.disable()
            self._paused_by_us = True
        self._holders.add(holder)

    def release(self, holder: int) -> None:
        self._holders.discard(holder)
        if not self._holders and self._paused_by_us:
            self._paused_by_us = False
            if gc.get_freeze_count() == 0:  # nobody else's frozen objects to let go of
                gc.freeze()  # what the pause left alive, young as it is, to the oldest
                gc.unfreeze()  # generation: neither call walks the objects
            gc.enable()


_COLLECTOR = _Collector()


class TurnTaker(Protocol):
    """What turns read of a registered controller (one that takes turns)."""

    @property
    def running(self) -> bool: ...

    @property
    def busy(self) -> bool: ...

    @property
    def tier(self) -> int: ...


class Turns:
    """Critical controllers first; see the module docstring."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._ranked: list[TurnTaker] = []
        #: per waiting tier: set when the tiers before it may have become idle
        self._idle: dict[int, asyncio.Event] = {}
        #: when the last LOAD_RECONCILES reconciles of any tier finished (monotonic seconds)
        self._recent: deque[float] = deque(maxlen=LOAD_RECONCILES)
        self._clock = clock
        #: reconciles finished so far (any tier that takes turns)
        self._finished = 0
        #: when this instance paused the collector (monotonic seconds), if it holds it paused
        self._gc_paused_at: float | None = None

    def register(self, controller: TurnTaker) -> None:
        self._ranked.append(controller)

    @property
    def busy(self) -> bool:
        """Whether a running critical controller has work ready or in hand."""
        return self.busy_before(DISPATCH)

    def busy_before(self, tier: int) -> bool:
        """Whether a running registered controller of a tier before ``tier`` has work ready or in hand."""
        return any(c.tier < tier and c.running and c.busy for c in self._ranked)

    @property
    def quiet(self) -> bool:
        """Whether no running registered controller, of any tier, has work ready or in hand."""
        return not any(c.running and c.busy for c in self._ranked)

    async def wait(self, tier: int = OTHERS) -> None:
        """Return once no controller of an earlier tier has been busy for :data:`QUIET_TURNS`
        loop turns (at once if none is)."""
        if not self.busy_before(tier):
            return
        quiet = 0
        while quiet < QUIET_TURNS:
            if self.busy_before(tier):
                quiet = 0
                idle = self._idle.setdefault(tier, asyncio.Event())
                idle.clear()
                await idle.wait()
            else:
                quiet += 1
                await asyncio.sleep(0)

    async def unloaded(self) -> None:
        """Return once the controllers that take turns (any tier) have finished fewer than
        :data:`LOAD_RECONCILES` reconciles in the last :data:`LOAD_WINDOW` seconds (at once
        without a clock)."""
        while self._clock is not None and len(self._recent) == LOAD_RECONCILES:
            wait = self._recent[0] + LOAD_WINDOW - self._clock.monotonic()
            if wait <= 0:
                return
            await self._clock.sleep(wait)

    def started(self) -> None:
        """A critical controller starts a reconcile: pause the collector (see the module docstring)."""
        if self._clock is None or self._gc_paused_at is not None:
            return
        self._gc_paused_at = self._clock.monotonic()
        _COLLECTOR.hold(id(self))
        asyncio.get_running_loop().create_task(self._resume_gc_when_quiet(), name="turns-gc-resume")

    def check(self, tier: int = CRITICAL) -> None:
        """A registered controller finished a reconcile or stopped: for a critical or dispatch
        one, wake the waiters whose earlier tiers may be idle."""
        self._finished += 1
        if self._clock is not None:
            self._recent.append(self._clock.monotonic())
        if tier >= OTHERS:
            return  # counted for the load and the collector's pause only
        if not any(c.running for c in self._ranked if c.tier == CRITICAL):
            self._resume_gc()  # stopped (cancelled, leadership lost): nothing left to pause for
        self.wake(tier)

    def wake(self, tier: int) -> None:
        """A controller of ``tier`` may have become idle (it finished a reconcile, or its
        reconcile waits on a member): wake the waiters whose earlier tiers are idle."""
        if tier >= OTHERS:
            return
        for waiting, idle in self._idle.items():
            if not self.busy_before(waiting):
                idle.set()

    async def _resume_gc_when_quiet(self) -> None:
        """Resume the collector once no registered controller is busy nor finished a reconcile
        for :data:`GC_RESUME_QUIET` seconds — the pause bridges the short gaps between one
        decision and the next — or after :data:`MAX_GC_PAUSE` seconds (the next critical
        reconcile pauses it again)."""
        assert self._clock is not None
        seen = -1
        try:
            while (paused_at := self._gc_paused_at) is not None:
                if self._clock.monotonic() - paused_at > MAX_GC_PAUSE:
                    return
                if seen == self._finished and self.quiet:
                    return
                seen = self._finished
                await self._clock.sleep(GC_RESUME_QUIET)
        finally:  # cancelled too: never leave the collector paused
            self._resume_gc()

    def _resume_gc(self) -> None:
        if self._gc_paused_at is not None:
            self._gc_paused_at = None
            _COLLECTOR.release(id(self))


__all__ = [
    "CRITICAL",
    "DISPATCH",
    "GC_RESUME_QUIET",
    "LOAD_RECONCILES",
    "LOAD_WINDOW",
    "MAX_GC_PAUSE",
    "OTHERS",
    "QUIET_TURNS",
    "TurnTaker",
    "Turns",
]
