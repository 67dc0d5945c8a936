"""A declared controller: what it reconciles, what wakes it, where and how it runs.

Every controller module exports one :class:`ControllerSpec` (``SPEC``), in the spirit of
controller-runtime's builder (``For(...).Watches(...).Complete(r)``): its name, the kind
it is for, a factory that makes its reconciler from plain dependencies (:class:`Deps`:
the context, the shared informers and the controller's own queue — never the manager),
the watches that enqueue its keys, its tier (:mod:`~fleetkeeper.runtime.turns`), its
workers, where it runs (the control plane, a Pull agent, both) and whether it needs
leadership. The wiring layer lists the specs in start order, and :func:`install` builds
each: the queue first, then the reconciler (which may enqueue keys of its own through
:attr:`Deps.keys` from its construction on), the controller, then the watches.

A part that is no controller — a lease renewer, an exporter, or a runnable made of two
queues over one state (the scheduler, the taint-manager) — gives ``runnable`` instead of
``reconciler``: a factory of something that runs until cancelled, built from the same
dependencies (:meth:`Deps.controller` makes queues it runs itself).

Adding a controller is one module with its spec and one line in the tuple of ``cmd/app.py``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, Generic, TypeVar

from fleetkeeper.api.meta import Resource
from fleetkeeper.options import Options
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context, Scope
from fleetkeeper.runtime.controller import Controller, Keys
from fleetkeeper.runtime.handler import MapFunc, Predicate
from fleetkeeper.runtime.manager import Manager, Runnable
from fleetkeeper.runtime.reconcile import Reconciler, Request

T = TypeVar("T", bound=Resource)


class Tier(enum.Enum):
    """Whose turn comes first (see :mod:`~fleetkeeper.runtime.turns`)."""

    #: the failover's decisions: the others wait while these have work
    CRITICAL = "critical"
    #: carrying the decisions to the members: waits for the critical tier only
    DISPATCH = "dispatch"
    #: everything else: waits for both
    OTHERS = "others"
    #: never waits and holds nobody up (detection, traffic)
    EXEMPT = "exempt"



class Runs(enum.Flag):
    """Where a controller runs: the control plane (its Push clusters), a Pull agent (its own), both."""

    PLANE = enum.auto()
    AGENT = enum.auto()
    BOTH = PLANE | AGENT

    def includes(self, scope: Scope) -> bool:
        return bool(self & (Runs.AGENT if scope.is_agent else Runs.PLANE))


@dataclass(frozen=True)
class Watch(Generic[T]):
    """Changes of ``kind`` (in ``namespace``, matching ``label_selector``) that enqueue keys:
    those ``map_to`` finds (default: the object's own), when ``predicate`` says so."""

    kind: type[T]
    map_to: MapFunc[T] | None = None
    _: KW_ONLY
    predicate: Predicate[T] | None = None
    namespace: str | None = None
    label_selector: str | None = None


class Deps:
    """What a factory is handed: the context, the shared informers, and the controller's keys."""

    def __init__(self, ctx: Context, manager: Manager, keys: Keys) -> None:
        self.ctx = ctx
        self.informers: InformerFactory = manager.informers
        #: the controller's queue (a reconciler that enqueues keys itself keeps it)
        self.keys = keys
        #: the manager's turns (a reconcile that works in slices looks at them between its slices)
        self.turns = manager.turns
        self._manager = manager
        #: what runs alongside, added after the spec's own part
        self.alongside: list[Runnable] = []

    def add(self, runnable: Runnable) -> None:
        """Run ``runnable`` alongside the spec's own part, after it (with or without leadership as
        its ``needs_leader_election`` says)."""
        self.alongside.append(runnable)

    def controller(self, name: str, reconciler: Reconciler, *, workers: int = 1, tier: Tier = Tier.OTHERS,
                   keys: Keys | None = None, priority: Callable[[Request], int] | None = None) -> Controller:
        """A controller of its own queue (``keys``, made beforehand, or a new one ordered by
        ``priority``), for a runnable that runs it, returns it or adds it (:meth:`add`)."""
        return self._manager.new_controller(
            name, reconciler, workers=workers, keys=keys, priority=priority, critical=tier is Tier.CRITICAL,
            dispatch=tier is Tier.DISPATCH, wait_turn=tier is not Tier.EXEMPT)


def concurrent_syncs(options: Options) -> int:
    """Workers of most controllers: ``--concurrent-syncs``."""
    return options.concurrent_syncs


def on_plane(scope: Scope) -> bool:
    """Leader-elected on the control plane, not in a Pull agent (one agent per cluster)."""
    return not scope.is_agent


@dataclass(frozen=True)
class ControllerSpec:
    """One controller (or other runnable part) as its module declares it."""

    name: str
    _: KW_ONLY
    #: makes the reconciler; the runtime makes the controller around it
    reconciler: Callable[[Deps], Reconciler] | None = None
    #: or: makes a part that runs until cancelled (no queue of the spec's own; ``None``: it
    #: only handles the informer events it subscribed to)
    runnable: Callable[[Deps], Runnable | None] | None = None
    #: the kind it reconciles (``None``: a runnable over several)
    kind: type[Resource] | None = None
    watches: tuple[Watch[Any], ...] = ()
    tier: Tier = Tier.OTHERS
    workers: int | Callable[[Options], int] = 1
    runs: Runs = Runs.PLANE
    leader_elected: bool | Callable[[Scope], bool] = True
    #: whether the options turn it on (default: always)
    enabled: Callable[[Options], bool] | None = None

    def __post_init__(self) -> None:
        if (self.reconciler is None) == (self.runnable is None):
            raise ValueError(f"spec {self.name!r} needs a reconciler factory or a runnable factory")
        if self.runnable is not None and self.watches:
            raise ValueError(f"spec {self.name!r}: a runnable has no queue to watch for")

    @property
    def module(self) -> str:
        """The module that declares it (where its factory is defined)."""
        factory = self.reconciler or self.runnable
        return str(getattr(factory, "__module__", ""))

    def applies(self, ctx: Context) -> bool:
        """Whether it runs in ``ctx``'s scope with ``ctx``'s options."""
        return self.runs.includes(ctx.scope) and (self.enabled is None or self.enabled(ctx.options))


def install(spec: ControllerSpec, manager: Manager, ctx: Context) -> None:
    """Build what ``spec`` declares and add it to ``manager`` (nothing when it does not apply)."""
    if not spec.applies(ctx):
        return
    elected = spec.leader_elected if isinstance(spec.leader_elected, bool) else spec.leader_elected(ctx.scope)
    keys = Keys(spec.name, clock=ctx.clock)
    deps = Deps(ctx, manager, keys)
    if spec.runnable is not None:
        runnable = spec.runnable(deps)
        if runnable is not None:
            manager.add(runnable, leader_elected=elected)
    else:
        assert spec.reconciler is not None
        reconciler = spec.reconciler(deps)
        workers = spec.workers if isinstance(spec.workers, int) else spec.workers(ctx.options)
        controller = manager.new_controller(
            spec.name, reconciler, workers=workers, leader_elected=elected, keys=keys,
            critical=spec.tier is Tier.CRITICAL, dispatch=spec.tier is Tier.DISPATCH,
            wait_turn=spec.tier is not Tier.EXEMPT)
        manager.add(controller)
        for watch in spec.watches:
            informer = manager.informers.informer_for(watch.kind, watch.namespace,
                                                      label_selector=watch.label_selector)
            keys.watch(informer, watch.map_to, predicate=watch.predicate)
    for runnable in deps.alongside:
        manager.add(runnable)


__all__ = ["ControllerSpec", "Deps", "Runs", "Tier", "Watch", "concurrent_syncs", "install", "on_plane"]
