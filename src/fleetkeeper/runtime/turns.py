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

Controllers upstream of the critical path (cluster status, taint policies, remedies) and
the traffic path (multi-cluster ingress, the load balancer's route sync) are not critical
and do not wait either: they are *exempt* (``wait_turn=False``), so failure detection and
taking a broken cluster out of traffic never queue behind a large rescheduling.
"""

from __future__ import annotations

import asyncio
from typing import Protocol


class Critical(Protocol):
    """What turns read of a critical controller."""

    @property
    def running(self) -> bool: ...

    @property
    def busy(self) -> bool: ...


class Turns:
    """Critical controllers first; see the module docstring."""

    def __init__(self) -> None:
        self._critical: list[Critical] = []
        self._idle: asyncio.Event | None = None

    def register(self, controller: Critical) -> None:
        self._critical.append(controller)

    @property
    def busy(self) -> bool:
        """Whether a running critical controller has work ready or in hand."""
        return any(c.running and c.busy for c in self._critical)

    async def wait(self) -> None:
        """Return once no critical controller is busy (at once if none is)."""
        while self.busy:
            if self._idle is None:
                self._idle = asyncio.Event()
            self._idle.clear()
            await self._idle.wait()

    def check(self) -> None:
        """A critical controller finished a reconcile or stopped: wake the waiters if all are idle."""
        if self._idle is not None and not self.busy:
            self._idle.set()


__all__ = ["Critical", "Turns"]
