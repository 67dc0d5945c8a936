"""The manager: one lifecycle for caches, controllers and everything else that runs.

Every long-running part has the same shape — ``async def run(self) -> None``, running
until cancelled — and the manager runs them all under one ``asyncio.TaskGroup``, in
controller-runtime's order:

1. **caches** — the shared :class:`~fleetkeeper.runtime.cache.InformerFactory` starts
   every informer, and the manager waits until all of them have synced, so no
   controller ever reconciles against a half-loaded cache (the collector's pause,
   :mod:`~fleetkeeper.runtime.gcpause`, starts with them);
2. **runnables that do not need leadership** (e.g. a status reporter, or controllers
   made with ``leader_elected=False``) start next;
3. **leader-elected runnables** (controllers by default) start last: at once when no
   elector is configured, else only while the
   :class:`~fleetkeeper.runtime.leaderelection.LeaderElector` holds the lease. They
   run as the elector's "while leading" work, so losing the lease cancels them at
   once; the informers keep running and the controllers' queues keep collecting keys,
   so a replica that wins the lease back resumes with a warm cache.

Cancelling :meth:`Manager.run` is the clean shutdown: the task group cancels every
part (the elector releases its lease on the way out). A part that crashes takes the
manager down with it — the error surfaces from ``run`` rather than leaving a
half-working process behind.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, Unpack, runtime_checkable

from structlog.typing import FilteringBoundLogger

from fleetkeeper.clock import Clock
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.controller import Controller, ControllerOptions
from fleetkeeper.runtime.gcpause import Collector, GcPause
from fleetkeeper.runtime.informer import ListWatcher
from fleetkeeper.runtime.leaderelection import LeaderElector
from fleetkeeper.runtime.load import LoadMeter
from fleetkeeper.runtime.reconcile import Reconciler
from fleetkeeper.runtime.turns import Turns


@runtime_checkable
class Runnable(Protocol):
    """A long-running part: runs until cancelled."""

    async def run(self) -> None: ...


def _controllers_of(runnable: Runnable) -> list[Controller]:
    """The controllers a runnable is, or is made of (its ``controllers`` attribute)."""
    parts = getattr(runnable, "controllers", (runnable,))
    return [part for part in parts if isinstance(part, Controller)]


class Manager:
    """Runs shared informers, then plain runnables, then leader-elected ones."""

    def __init__(
        self,
        client: ListWatcher,
        *,
        clock: Clock,
        elector: LeaderElector | None = None,
        logger: FilteringBoundLogger | None = None,
        collector: Collector | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.elector = elector
        self.informers = InformerFactory(client, clock=clock, logger=logger)
        self._logger = logger
        self._plain: list[Runnable] = []
        self._elected: list[Runnable] = []
        self._started = asyncio.Event()
        self._running = False
        #: critical controllers first, dispatch next (see :mod:`~fleetkeeper.runtime.turns`)
        self.turns = Turns()
        #: how busy the controllers that take turns are (:mod:`~fleetkeeper.runtime.load`)
        self.load = LoadMeter(clock)
        #: the collector waits while critical work is in flight (:mod:`~fleetkeeper.runtime.gcpause`);
        #: ``collector`` is the process's, shared by every manager in it
        self.gc_pause = GcPause(self.turns, clock=clock, collector=collector or Collector())
        self.turns.listen(self.load)
        self.turns.listen(self.gc_pause)

    def add(self, runnable: Runnable, *, leader_elected: bool | None = None) -> None:
        """Run ``runnable`` with the manager; ``leader_elected`` defaults to its
        ``needs_leader_election`` attribute (True for controllers), else False."""
        if self._running:
            raise RuntimeError("runnables must be added before the manager runs")
        if leader_elected is None:
            leader_elected = bool(getattr(runnable, "needs_leader_election", False))
        for part in _controllers_of(runnable):
            part.turns = self.turns
            if part.takes_turns:
                self.turns.register(part)
        (self._elected if leader_elected else self._plain).append(runnable)

    def controllers(self) -> list[Controller]:
        """Every controller added so far, including those inside composite runnables."""
        return [part for runnable in (*self._plain, *self._elected) for part in _controllers_of(runnable)]

    def controller(self, name: str, reconciler: Reconciler,
                   **options: Unpack[ControllerOptions]) -> Controller:
        """Make a controller (:meth:`new_controller`) and add it."""
        controller = self.new_controller(name, reconciler, **options)
        self.add(controller)
        return controller

    def new_controller(self, name: str, reconciler: Reconciler,
                       **options: Unpack[ControllerOptions]) -> Controller:
        """Make a controller on the manager's clock and logger, without adding it (the options:
        :class:`~fleetkeeper.runtime.controller.ControllerOptions`)."""
        return Controller(name, reconciler, clock=self.clock, logger=self._logger, **options)

    async def wait_started(self) -> None:
        """Return once caches have synced and every runnable not waiting for leadership started."""
        await self._started.wait()

    async def run(self) -> None:
        """Run everything until cancelled (see the module notes for the order)."""
        if self._running:
            raise RuntimeError("the manager is already running")
        self._running = True
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.informers.run(), name="informers")
                group.create_task(self.gc_pause.run(), name=self.gc_pause.name)
                await self.informers.wait_for_sync()
                for runnable in self._plain:
                    group.create_task(runnable.run(), name=_name(runnable))
                if self.elector is not None:
                    group.create_task(self.elector.run(self._run_elected), name="leader-election")
                else:
                    group.create_task(self._run_elected(), name="elected")
                self._started.set()
        finally:
            self._started.clear()
            self._running = False

    async def _run_elected(self) -> None:
        async with asyncio.TaskGroup() as group:
            for runnable in self._elected:
                group.create_task(runnable.run(), name=_name(runnable))


def _name(runnable: Runnable) -> str:
    return str(getattr(runnable, "name", type(runnable).__name__))


__all__ = ["Manager", "Runnable"]
