"""The controller: a workqueue, a reconciler, and one short worker loop.

A controller owns a :class:`~fleetkeeper.runtime.workqueue.Workqueue` of
:class:`~fleetkeeper.runtime.reconcile.Request` keys. Sources (informers, through
:class:`~fleetkeeper.runtime.handler.EnqueueMapped`) and anyone else call
:meth:`Controller.enqueue`; ``workers`` tasks take keys and reconcile them. The queue
guarantees a key is never reconciled by two workers at once, so reconcilers need no
locks of their own.

The worker loop is deliberately short — the three outcomes of docs/architecture.md (Reconcile):

* the reconciler raised → retry after the rate limiter's delay (per-key exponential
  backoff combined with a global token bucket), logged with the error;
* it raised :class:`~fleetkeeper.errors.TerminalError` → log, forget the backoff, drop;
  so do the failures no retry can mend (:func:`gives_up`): the API refused what the reconcile
  wrote as invalid (:class:`~fleetkeeper.errors.Invalid`: the same objects give the same
  write), a native interpreter rule failed on the object, or a Lua customization failed
  ``SCRIPT_RETRIES`` times in a row (a script may have hit its time limit on a busy
  process, so it gets a few retries first) — said once, at error level; the key comes back
  when one of the objects it is made from changes;
* it returned ``Result(requeue_after=x)`` → forget the backoff, come back in ``x`` s;
* it returned ``Result()`` → forget the backoff; done until the next event.

**What a retry says.** A failure fleetkeeper raises on purpose (a
:class:`~fleetkeeper.errors.FleetkeeperError`: a member unreachable, a conflict, a binding
that cannot be scheduled) is an expected outcome: one line at info or warning, without a
traceback. Anything else is a bug, logged at error with its traceback. Either way a key
failing the same way again is said once per minute of the injected clock, with the count
of lines held back (:mod:`~fleetkeeper.runtime.throttle`), and starts afresh once it succeeds.

Every reconcile gets a reconcile id (``<controller>#<n>``, counted per controller so a
virtual-time run logs the same ids every time). It is bound on the log lines and in
structlog's context variables for the duration of the reconcile, and readable through
:func:`current_reconcile_id`, so anything the reconciler logs or records carries it.

**Taking turns.** A worker yields to the event loop after every reconcile. With the
in-process store nothing a reconcile awaits suspends it, so without that a worker would
drain its whole queue in one step — a thousand applies at a stretch while informers,
timers and the other controllers wait — and the pipeline would run in stale phases
instead of flowing. Each busy worker thus gets one reconcile per loop turn: a
controller's worker count is its share of the process when everything is busy —
except that controllers on the failover's critical path go first
(:mod:`~fleetkeeper.runtime.turns`).

``run()`` runs the workers until cancelled. Cancelling it does not shut the queue
down: a key whose reconcile was interrupted is queued again, and keys keep
accumulating while the controller is stopped — which is what a leader-elected
controller needs when it loses leadership and later wins it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Protocol, TypedDict, TypeVar

import structlog
from structlog.typing import FilteringBoundLogger

from fleetkeeper import errors
from fleetkeeper.api.meta import Resource
from fleetkeeper.clock import Clock
from fleetkeeper.errors import TerminalError
from fleetkeeper.runtime.handler import EnqueueMapped, EventHandler, MapFunc, Predicate
from fleetkeeper.runtime.metrics import CONTROLLERS, Metrics, Outcome, PrometheusMetrics
from fleetkeeper.runtime.ratelimit import RateLimiter
from fleetkeeper.runtime.reconcile import Reconciler, Request, Result
from fleetkeeper.runtime.throttle import LogThrottle
from fleetkeeper.runtime.turns import CRITICAL, DISPATCH, OTHERS, Turns
from fleetkeeper.runtime.workqueue import ShutDown, Workqueue

T = TypeVar("T", bound=Resource)
T_co = TypeVar("T_co", bound=Resource, covariant=True)

#: retries of a key whose Lua customization keeps failing, before the key is dropped
SCRIPT_RETRIES = 5
#: the least a key waits for a busy customization before it is tried again (seconds)
BUSY_AGAIN = 0.05

_RECONCILE_ID: ContextVar[str | None] = ContextVar("fleetkeeper_reconcile_id", default=None)
_CONTROLLER: ContextVar[Controller | None] = ContextVar("fleetkeeper_controller", default=None)


def gives_up(exc: Exception, retries: int) -> bool:
    """Whether a reconcile that raised ``exc`` after ``retries`` retries is dropped instead of
    retried (see the module notes): no retry makes the objects it reads any different."""
    if isinstance(exc, errors.ScriptError):
        return retries >= SCRIPT_RETRIES
    return isinstance(exc, errors.Invalid | errors.InterpreterError)


def current_reconcile_id() -> str | None:
    """The id of the reconcile running in this task, if any."""
    return _RECONCILE_ID.get()


@contextlib.contextmanager
def awaiting_io() -> Iterator[None]:
    """Inside a reconcile: what is awaited here waits on something outside the process (a
    member cluster), so meanwhile the reconcile does not hold anyone's turn — the
    controllers waiting for its tier go on (see :mod:`~fleetkeeper.runtime.turns`).
    Outside a reconcile it does nothing."""
    controller = _CONTROLLER.get()
    if controller is None:
        yield
        return
    controller._away += 1
    if controller.turns is not None and controller.takes_turns:
        controller.turns.wake(controller.tier)
    try:
        yield
    finally:
        controller._away -= 1


class Source(Protocol[T_co]):
    """Something that reports changes of objects to handlers (an informer)."""

    def add_handler(self, handler: EventHandler[T_co]) -> None: ...


class Keys:
    """A controller's queue as its reconciler and event handlers see it: keys go in.

    Made before the reconciler (see :mod:`~fleetkeeper.runtime.spec`), so a reconciler that
    enqueues keys of its own gets them at construction."""

    def __init__(self, name: str, *, clock: Clock, rate_limiter: RateLimiter | None = None,
                 priority: Callable[[Request], int] | None = None) -> None:
        #: ``priority``: ready keys come out highest priority first (see the workqueue)
        self.queue: Workqueue[Request] = Workqueue(clock=clock, rate_limiter=rate_limiter, name=name,
                                                   priority=priority)

    def enqueue(self, request: Request) -> None:
        """Ask for ``request`` to be reconciled (coalesces with a pending ask)."""
        self.queue.add(request)

    def enqueue_after(self, request: Request, seconds: float) -> None:
        """Ask for ``request`` to be reconciled ``seconds`` from now."""
        self.queue.add_after(request, seconds)

    def watch(self, source: Source[T], map_to: MapFunc[T] | None = None, *,
              predicate: Predicate[T] | None = None) -> None:
        """Enqueue what ``map_to`` (default: the object's own key) finds for each change of ``source``."""
        source.add_handler(EnqueueMapped(self, map_to, predicate=predicate))


class ControllerOptions(TypedDict, total=False):
    """How a controller made by the manager runs (the keywords of :class:`Controller` but its clock
    and logger, which are the manager's)."""

    workers: int
    rate_limiter: RateLimiter | None
    metrics: Metrics | None
    leader_elected: bool
    critical: bool
    dispatch: bool
    wait_turn: bool
    priority: Callable[[Request], int] | None
    keys: Keys | None


class Controller:
    """Reconciles the keys enqueued to it with ``workers`` concurrent workers."""

    #: the manager starts this only while it holds leadership
    needs_leader_election: bool

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        workers: int = 1,
        clock: Clock,
        rate_limiter: RateLimiter | None = None,
        logger: FilteringBoundLogger | None = None,
        metrics: Metrics | None = None,
        leader_elected: bool = True,
        critical: bool = False,
        dispatch: bool = False,
        wait_turn: bool = True,
        priority: Callable[[Request], int] | None = None,
        keys: Keys | None = None,
    ) -> None:
        """``keys``: the queue made beforehand (``rate_limiter`` and ``priority`` are then its own)."""
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.name = name
        self.workers = workers
        self.needs_leader_election = leader_elected
        self._reconciler = reconciler
        self._clock = clock
        self.keys = keys if keys is not None else Keys(name, clock=clock, rate_limiter=rate_limiter,
                                                       priority=priority)
        self._queue = self.keys.queue
        base: FilteringBoundLogger = logger if logger is not None else structlog.get_logger("fleetkeeper")
        self._log = base.bind(controller=name)
        self._metrics: Metrics = metrics if metrics is not None else PrometheusMetrics()
        #: which repeated failures of a key are said (see the module notes)
        self._quiet = LogThrottle(clock)
        self._ids = itertools.count(1)
        self._running = False
        #: its turn (see :mod:`~fleetkeeper.runtime.turns`): 0 critical (the failover's
        #: decisions), 1 dispatch (carries decisions to the members), 2 the others
        self.tier = CRITICAL if critical else DISPATCH if dispatch else OTHERS
        #: whether this controller's workers wait while earlier tiers are busy (never for critical ones)
        self.wait_turn = wait_turn and not critical
        #: the turns this controller takes part in (its manager's), if any
        self.turns: Turns | None = None
        self._active = 0
        #: reconciles of ``_active`` awaiting something outside the process (:func:`awaiting_io`)
        self._away = 0
        CONTROLLERS.add(self)

    @property
    def critical(self) -> bool:
        return self.tier == CRITICAL

    @property
    def takes_turns(self) -> bool:
        """Critical, dispatch, or waiting for them: the exempt controllers never hold anything up."""
        return self.tier < OTHERS or self.wait_turn

    @property
    def running(self) -> bool:
        return self._running

    @property
    def active_workers(self) -> int:
        """Workers reconciling a key now."""
        return self._active

    @property
    def busy(self) -> bool:
        """Keys ready or being reconciled (not those waiting for a deadline, nor reconciles
        awaiting a member: :func:`awaiting_io`)."""
        return self._active > self._away or len(self._queue) > 0

    @property
    def queue(self) -> Workqueue[Request]:
        return self._queue

    def enqueue(self, request: Request) -> None:
        """Ask for ``request`` to be reconciled (coalesces with a pending ask)."""
        self._queue.add(request)

    def enqueue_after(self, request: Request, seconds: float) -> None:
        """Ask for ``request`` to be reconciled ``seconds`` from now."""
        self._queue.add_after(request, seconds)

    def watch(self, source: Source[T], map_to: MapFunc[T] | None = None, *,
              predicate: Predicate[T] | None = None) -> None:
        """Enqueue what ``map_to`` (default: the object's own key) finds for each change of ``source``."""
        self.keys.watch(source, map_to, predicate=predicate)

    def shutdown(self) -> None:
        """Stop for good: workers finish what is ready, then ``run`` returns."""
        self._queue.shutdown()

    async def run(self) -> None:
        """Run the workers until cancelled (or until :meth:`shutdown`)."""
        if self._running:
            raise RuntimeError(f"controller {self.name!r} is already running")
        self._running = True
        self._log.info("controller starting", workers=self.workers)
        try:
            async with asyncio.TaskGroup() as group:
                for index in range(self.workers):
                    group.create_task(self._worker(), name=f"{self.name}-worker-{index}")
        finally:
            self._running = False
            if self.turns is not None and self.takes_turns:
                self.turns.check(self.tier)
            self._log.info("controller stopped")

    async def _worker(self) -> None:
        while True:
            try:
                request = await self._queue.get()
            except ShutDown:
                return
            self._active += 1
            try:
                if self.turns is not None:
                    if self.critical:
                        self.turns.started()
                    elif self.wait_turn:
                        await self.turns.wait(self.tier)
                await self._reconcile_one(request)
            finally:
                self._active -= 1
                self._queue.done(request)
                if self.turns is not None and self.takes_turns:
                    self.turns.check(self.tier)
            await asyncio.sleep(0)  # everything else takes its turn (see the module notes)

    async def _reconcile_one(self, request: Request) -> None:
        reconcile_id = f"{self.name}#{next(self._ids)}"
        log = self._log.bind(namespace=request.namespace, name=request.name, reconcile_id=reconcile_id)
        token = _RECONCILE_ID.set(reconcile_id)
        mine = _CONTROLLER.set(self)
        started = self._clock.monotonic()
        try:
            with structlog.contextvars.bound_contextvars(controller=self.name, reconcile_id=reconcile_id):
                outcome = await self._attempt(request, log)
        finally:
            _CONTROLLER.reset(mine)
            _RECONCILE_ID.reset(token)
        self._metrics.observe(self.name, outcome, self._clock.monotonic() - started)

    async def _attempt(self, request: Request, log: FilteringBoundLogger) -> Outcome:
        try:
            result = await self._reconciler.reconcile(request)
        except asyncio.CancelledError:
            self._queue.add(request)  # interrupted: look again when we run next
            raise
        except TerminalError as exc:
            log.error("reconcile failed terminally; dropping the key", error=str(exc))
            self._queue.forget(request)
            return "terminal"
        except errors.CustomizationBusy as exc:
            # not a failure: the key comes back once the customization may be free, without a retry counted
            log.info("customization busy; trying again later", error=str(exc), after=exc.wait)
            self._queue.add_after(request, max(exc.wait, BUSY_AGAIN))
            return "requeue_after"
        except Exception as exc:
            retries = self._queue.num_requeues(request)
            if gives_up(exc, retries):
                log.error("reconcile cannot succeed with the objects as they are; dropping the key until "
                          "they change", error=str(exc), error_type=type(exc).__name__, retries=retries)
                self._queue.forget(request)
                return "terminal"
            self._queue.add_rate_limited(request)
            self._say_retry(request, exc, log)
            return "error"
        return self._settle(request, result, log)

    def _say_retry(self, request: Request, exc: Exception, log: FilteringBoundLogger) -> None:
        """One line about a failure to be retried, unless the key said the same lately."""
        held = self._quiet.admit(request, type(exc).__name__)
        if held is None:
            return
        retries = self._queue.num_requeues(request)
        if held:
            log = log.bind(suppressed=held)
        if isinstance(exc, errors.Conflict | errors.AlreadyExists):
            # optimistic concurrency: someone wrote first; the retry reads the new version
            log.info("object changed meanwhile; retrying", error=str(exc), retries=retries)
        elif isinstance(exc, errors.MemberError):
            # an outage, not a bug: no traceback, the cluster's conditions tell the story
            log.warning("member cluster not reachable; retrying with backoff", error=str(exc),
                        retries=retries)
        elif isinstance(exc, errors.ScriptError):
            log.warning("customization failed; retrying with backoff", error=str(exc), retries=retries)
        elif isinstance(exc, errors.FleetkeeperError):
            log.warning("reconcile failed; retrying with backoff", error=str(exc),
                        error_type=type(exc).__name__, retries=retries)
        else:
            log.error("reconcile failed; retrying with backoff", error=repr(exc), retries=retries,
                      exc_info=exc)

    def _settle(self, request: Request, result: Result, log: FilteringBoundLogger) -> Outcome:
        self._quiet.forget(request)
        self._queue.forget(request)
        if result.requeue_after is None:
            log.debug("reconciled")
            return "success"
        self._queue.add_after(request, result.requeue_after)
        log.debug("reconciled; requeue scheduled", requeue_after=result.requeue_after)
        return "requeue_after"


__all__ = ["BUSY_AGAIN", "SCRIPT_RETRIES", "Controller", "ControllerOptions", "Keys", "Source", "awaiting_io",
           "current_reconcile_id", "gives_up"]
