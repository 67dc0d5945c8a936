"""Turns: the failover's critical path goes first.

Every controller of a process shares one event loop, and a worker gets one reconcile
per loop turn (see :mod:`~fleetkeeper.runtime.controller`). When a cluster fails
under ten thousand workloads, the evictions and the rescheduling — what decides where
the workloads go — would then share every turn with the work downstream of them
(Works rewritten, applied, their status reported), and the first workload to move
would wait for hundreds of unrelated reconciles.

So controllers come in tiers, registered here by their manager:

* **critical** (the taint-manager's evictions, the scheduler): while any running critical
  controller has keys ready or being reconciled, the other controllers' workers wait
  before their next reconcile (a key already taken stays theirs, marked processing).
  Every key critical work takes is settled in one reconcile, retries and requeues wait
  in the queue's timers (not counted), so the others resume as soon as the decisions
  are made — and then see the final decision once instead of each intermediate one;
* **dispatch** (the binding controller, which rewrites the Works, and execution, which
  applies them) wait for the critical ones;
* **others** (status reporting, graceful-eviction cleanup, …) wait for both — a workload
  runs in its new place before anyone reports on it;
* **exempt** (``wait_turn=False``): controllers upstream of the critical path (cluster
  status, taint policies, remedies) and the traffic path never wait and hold nobody up,
  so failure detection never queues behind a large rescheduling.

Turns share the event loop's time, not the members': a reconcile that waits on a member
cluster says so with :func:`~fleetkeeper.runtime.controller.awaiting_io` and holds
nobody's turn while it waits.

What else follows the tiers listens to them (:class:`Listener`): the load meter the
recorder waits on (:mod:`~fleetkeeper.runtime.load`) and the collector's pause
(:mod:`~fleetkeeper.runtime.gcpause`).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

#: the tiers of :attr:`Controller.tier <fleetkeeper.runtime.controller.Controller.tier>`
CRITICAL, DISPATCH, OTHERS = 0, 1, 2
#: loop turns the critical controllers must stay idle before the others resume: a decision
#: reaches the next critical controller a few turns after its write (store → watch → informer
#: → queue), and without this margin every waiting worker would slip in through that gap
QUIET_TURNS = 4


class TurnTaker(Protocol):
    """What turns read of a registered controller (one that takes turns)."""

    @property
    def running(self) -> bool: ...

    @property
    def busy(self) -> bool: ...

    @property
    def tier(self) -> int: ...


class Listener(Protocol):
    """Told when a critical reconcile starts and when a registered controller finishes one."""

    def critical_started(self) -> None: ...

    def finished(self, tier: int) -> None: ...


class Turns:
    """Critical controllers first, dispatch next, the others last; see the module docstring."""

    def __init__(self) -> None:
        self._ranked: list[TurnTaker] = []
        #: per waiting tier: set when the tiers before it may have become idle
        self._idle: dict[int, asyncio.Event] = {}
        self._listeners: list[Listener] = []
        #: reconciles finished so far (any tier that takes turns)
        self.finished = 0

    def register(self, controller: TurnTaker) -> None:
        self._ranked.append(controller)

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

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

    @property
    def critical_running(self) -> bool:
        """Whether a registered critical controller is running."""
        return any(c.running for c in self._ranked if c.tier == CRITICAL)

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

    def started(self) -> None:
        """A critical controller starts a reconcile."""
        for listener in self._listeners:
            listener.critical_started()

    def check(self, tier: int = CRITICAL) -> None:
        """A registered controller finished a reconcile or stopped: for a critical or dispatch
        one, wake the waiters whose earlier tiers may be idle."""
        self.finished += 1
        for listener in self._listeners:
            listener.finished(tier)
        self.wake(tier)

    def wake(self, tier: int) -> None:
        """A controller of ``tier`` may have become idle (it finished a reconcile, or its
        reconcile waits on a member): wake the waiters whose earlier tiers are idle."""
        if tier >= OTHERS:
            return
        for waiting, idle in self._idle.items():
            if not self.busy_before(waiting):
                idle.set()


__all__ = ["CRITICAL", "DISPATCH", "OTHERS", "QUIET_TURNS", "Listener", "TurnTaker", "Turns"]
