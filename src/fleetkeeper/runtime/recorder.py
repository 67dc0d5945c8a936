"""Recording what controllers decide: Kubernetes Events and the failover timeline.

Two audiences, one call site. ``event()`` writes a ``v1`` Event with Karmada's
reasons and messages (Karmada: ``pkg/events``) so ``kubectl describe`` reads as it does
against Karmada. ``timeline()`` writes a :class:`~fleetkeeper.api.tl.TimelineEntry`,
fleetkeeper's durable record of each failover decision with a human message
(``Ready=False (ClusterNotReachable)``, ``evicted from member1 (TaintUntolerated,
Gracefully)``).

**Asynchronous, batched writes** (client-go's event broadcaster does the same). A
reconcile that records does not wait for the write: the object is built at once — its
name, time and message are those of the moment of the decision — and handed to the
client's :class:`Sink`, which writes everything recorded during one turn of the event
loop in the next turn, through one store transaction when the client offers ``batch()``
(the local client): propagation records several ``SyncSucceed`` events per workload, and
a transaction each would be a large share of all writes. The wiring layer makes one sink
per client and every recorder over that client shares it, so entries are written in the
order they were recorded, whichever component recorded them. :meth:`Recorder.flush`
waits until everything recorded so far is written (tests; a clean shutdown).

**Last.** The wiring layer makes the sink wait on the manager's load meter
(:meth:`Sink.defer_while`): while the controllers that take turns are loaded (see
:mod:`~fleetkeeper.runtime.load`: dozens of reconciles a second — the failover's
decisions, the Works that carry them, the status reports that follow), records wait — a
failover records two per binding it moves, a real share of the work on its critical path
(README, Benchmarks) — and are written once the load is gone, in transactions of at most
:data:`CHUNK`. A handful of decisions is no load: their records are written in the next
turn, as always. Names and times are those of the decisions; the objects are built when
written. At most :data:`MAX_DEFERRED` wait: the oldest beyond that are written at once.

**Repeats are counted, not repeated** (client-go's event correlator does the same). An
Event identical to one recorded before — same component, object (by uid), type, reason and
message — is not a new Event: the first one's ``count`` goes up and its ``lastTimestamp``
moves on, so ``kubectl describe`` shows ``(x14 over 5m)`` instead of fourteen lines. A
repeat made before the first was written only changes what will be written; a later one
patches the stored Event (a new one is made if it was deleted meanwhile). The last
:data:`REMEMBERED` distinct Events are remembered.

**Said once.** A state that lasts (a hold, a wait, a configuration that never works) is
told once while it lasts: :meth:`Recorder.once` records only what is news for an object's
topic (:mod:`~fleetkeeper.runtime.told`), :meth:`Recorder.clear` ends the topic when its
state is over, and :meth:`Recorder.forgetting` forgets an object's topics when an informer
reports it deleted — the controllers keep no such memory of their own.

Recording never fails the reconcile that records: a write error is logged and
dropped. Names are derived from the clock and a per-recorder counter (as Kubernetes
derives Event names from a timestamp), so a virtual-time run names them identically
every time.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from typing import Literal, Protocol

import structlog

from fleetkeeper import errors
from fleetkeeper.api import core
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.base import format_time
from fleetkeeper.api.meta import ObjectMeta, Resource
from fleetkeeper.client.interface import batch
from fleetkeeper.clock import Clock
from fleetkeeper.runtime.told import SubjectKey, Told

EventType = Literal["Normal", "Warning"]
Record = core.Event | tl.TimelineEntry
#: an Event to record: type, reason, message
EventNote = tuple[EventType, str, str]
#: a timeline entry to record: action, message, reason
TimelineNote = tuple[str, str, str]
_log = structlog.get_logger("fleetkeeper.recorder")


#: records written per transaction (and per turn of the event loop)
CHUNK = 200
#: records that may wait for the critical path before they are written regardless
MAX_DEFERRED = 50_000
#: distinct Events remembered for counting repeats (client-go's LRU holds as many)
REMEMBERED = 4096

#: what makes two Events the same: component, involved object, type, reason, message
EventKey = tuple[str, str, str, str, str, str, str, str, str]


class _Creator(Protocol):
    async def create(self, obj: Record) -> Resource: ...  # pragma: no cover

    async def patch(self, model: type[core.Event], name: str, namespace: str = "", *,
                    patch: dict[str, object]) -> Resource: ...  # pragma: no cover


class _Seen:
    """One remembered Event: where it is stored and how often it has been recorded."""

    __slots__ = ("count", "last", "name", "namespace", "patching", "written")

    def __init__(self, name: str, namespace: str, now: datetime) -> None:
        self.name, self.namespace = name, namespace
        self.count, self.last = 1, now
        self.written = False
        self.patching = False


class Gate(Protocol):
    """What the sink waits on before writing (:class:`~fleetkeeper.runtime.load.LoadMeter`)."""

    async def unloaded(self) -> None: ...  # pragma: no cover


class Sink:
    """The write-behind buffer of one client: what was recorded, written in order, in batches."""

    def __init__(self, client: _Creator) -> None:
        self._client = client
        #: what was recorded, as functions that build the objects (at write time: building a
        #: model is a cost the recording reconcile need not pay)
        self._pending: list[Callable[[], Record] | _Repeat] = []
        self._task: asyncio.Task[None] | None = None
        self.gates: list[Gate] = []
        #: the Events recorded lately, for counting repeats (oldest first)
        self.seen: OrderedDict[EventKey, _Seen] = OrderedDict()

    def defer_while(self, gate: Gate) -> None:
        """Records wait for ``gate`` before they are written."""
        self.gates.append(gate)

    def remember(self, key: EventKey, seen: _Seen) -> None:
        self.seen[key] = seen
        if len(self.seen) > REMEMBERED:
            self.seen.popitem(last=False)

    def repeat(self, key: EventKey, now: datetime) -> bool:
        """Count a repeat of a remembered Event; whether ``key`` was one (nothing new to write then)."""
        seen = self.seen.get(key)
        if seen is None:
            return False
        self.seen.move_to_end(key)
        seen.count += 1
        seen.last = now
        if seen.written and not seen.patching:
            seen.patching = True
            self.put(_Repeat(key, seen))
        return True

    def put(self, build: Callable[[], Record] | _Repeat) -> None:
        self._pending.append(build)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._drain(), name="recorder-sink")

    async def flush(self) -> None:
        """Return once everything put so far is written (or dropped with a warning)."""
        while (task := self._task) is not None and not task.done():
            await asyncio.shield(task)

    async def _drain(self) -> None:
        while self._pending:
            if len(self._pending) <= MAX_DEFERRED:
                for gate in self.gates:
                    await gate.unloaded()
            builds, self._pending = self._pending[:CHUNK], self._pending[CHUNK:]
            await self._write(builds)

    async def _write(self, builds: list[Callable[[], Record] | _Repeat]) -> None:
        try:
            async with batch(self._client):
                for build in builds:
                    obj: Record | None = None
                    try:
                        if isinstance(build, _Repeat):
                            await self._count(build)
                            continue
                        obj = build()
                        await self._client.create(obj)
                    except Exception as exc:  # one bad record must not lose the others
                        _log.warning("record failed", kind=getattr(obj, "kind", None),
                                     name=getattr(obj, "name", None), error=str(exc))
        except Exception as exc:  # the transaction itself failed: everything in it is lost
            _log.warning("records failed", records=len(builds), error=str(exc))

    async def _count(self, repeat: _Repeat) -> None:
        """Bring a stored Event's count and last time up to date (a new one if it is gone)."""
        seen = repeat.seen
        seen.patching = False
        try:
            await self._client.patch(core.Event, seen.name, seen.namespace, patch={
                "count": seen.count, "lastTimestamp": format_time(seen.last)})
        except errors.NotFound:
            self.seen.pop(repeat.key, None)


class _Repeat:
    """A remembered Event to bring up to date in the store (its count and last time)."""

    __slots__ = ("key", "seen")

    def __init__(self, key: EventKey, seen: _Seen) -> None:
        self.key, self.seen = key, seen


class Recorder:
    """Records Events and timeline entries on behalf of one component."""

    def __init__(self, sink: Sink, clock: Clock, component: str) -> None:
        self._sink = sink
        self._clock = clock
        self.component = component
        self._seq = 0
        #: what this component has said once (see :meth:`once`)
        self.told = Told()

    def _name(self, base: str, salt: str) -> str:
        self._seq += 1
        micros = int(self._clock.now().timestamp() * 1_000_000)
        digest = hashlib.blake2b(f"{self.component}|{salt}|{self._seq}".encode(), digest_size=4).hexdigest()
        return f"{base[:200]}.{micros:x}{digest}"

    async def event(self, obj: Resource, type_: EventType, reason: str, message: str) -> None:
        """Record a Kubernetes Event about ``obj`` (its name and time are those of now); a
        repeat of a remembered one counts on it (see the module notes)."""
        now = self._clock.now()
        meta = obj.metadata
        api_version, kind, subject = obj.api_version, obj.kind, obj.name
        namespace, uid, revision = meta.namespace, meta.uid, meta.resource_version
        component = self.component
        key: EventKey = (component, api_version, kind, namespace or "", subject, uid or "", type_, reason,
                         message)
        if self._sink.repeat(key, now):
            return
        name = self._name(obj.name, reason + message)
        seen = _Seen(name, namespace or "default", now)
        self._sink.remember(key, seen)

        def build() -> Record:
            seen.written = True  # from now on a repeat patches the stored Event
            return core.Event(
                metadata=ObjectMeta(name=name, namespace=seen.namespace),
                involved_object=core.ObjectReference(api_version=api_version, kind=kind, name=subject,
                                                     namespace=namespace, uid=uid, resource_version=revision),
                reason=reason, message=message, type=type_, count=seen.count,
                first_timestamp=now, last_timestamp=seen.last, event_time=now,
                source=core.EventSource(component=component), reporting_component=component,
            )

        self._sink.put(build)

    async def timeline(self, obj: Resource | tl.Subject, action: str, message: str, *,
                       reason: str = "") -> None:
        """Record one failover decision about ``obj`` on the timeline."""
        if isinstance(obj, tl.Subject):
            of = (obj.api_version, obj.kind, obj.name, obj.namespace)
        else:
            of = (obj.api_version, obj.kind, obj.name, obj.metadata.namespace)
        name = self._name("tl", f"{of[1]}/{of[3]}/{of[2]}|{action}|{message}")
        now, component = self._clock.now(), self.component

        def build() -> Record:
            subject = tl.Subject(api_version=of[0], kind=of[1], name=of[2], namespace=of[3])
            return tl.TimelineEntry(metadata=ObjectMeta(name=name), time=now, subject=subject, action=action,
                                    reason=reason, message=message, component=component)

        self._sink.put(build)

    async def flush(self) -> None:
        """Wait until everything recorded through this recorder's sink so far is written."""
        await self._sink.flush()

    # ---------------------------------------------------------------- said once
    async def once(self, obj: Resource, topic: Hashable, *, value: Hashable = True,
                   event: EventNote | None = None, timeline: TimelineNote | None = None) -> bool:
        """Record ``event`` and then ``timeline`` about ``obj`` unless ``value`` is what was told
        last on ``topic`` (until :meth:`clear` or :meth:`forget`); whether they were recorded."""
        if not self.first(obj, topic, value):
            return False
        if event is not None:
            await self.event(obj, *event)
        if timeline is not None:
            action, message, reason = timeline
            await self.timeline(obj, action, message, reason=reason)
        return True

    def first(self, obj: Resource, topic: Hashable, value: Hashable = True) -> bool:
        """Remember ``value`` as told about ``obj`` on ``topic``; whether it is news (the caller
        then records it: :meth:`once` for an Event and a timeline entry)."""
        return self.told.tell(SubjectKey.of(obj), topic, value, uid=obj.metadata.uid)

    def said(self, obj: Resource | tl.Subject, topic: Hashable) -> Hashable | None:
        """The value last told about ``obj`` on ``topic`` (None when nothing is)."""
        return self.told.get(SubjectKey.of(obj), topic)

    def clear(self, obj: Resource | tl.Subject, topic: Hashable) -> bool:
        """What ``topic`` told of ``obj`` is over (told again if it comes back); whether it was told."""
        return self.told.clear(SubjectKey.of(obj), topic)

    def clear_topic(self, topic: Hashable) -> None:
        """What ``topic`` told of is over, whatever object it was told about."""
        self.told.clear_topic(topic)

    def forget(self, obj: Resource) -> None:
        """``obj`` is deleted: forget everything told about it (and what is told about it later)."""
        self.told.forget(SubjectKey.of(obj), uid=obj.metadata.uid)

    def forgetting(self) -> Forgetting:
        """An informer handler that forgets what was told about each object deleted."""
        return Forgetting(self)


class Forgetting:
    """Informer handler: the recorder forgets an object's topics when the object is deleted."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def on_add(self, obj: Resource) -> None:
        """Nothing was told about a new object."""

    def on_update(self, old: Resource, new: Resource) -> None:
        """An update leaves what was told (a topic is cleared by the state it told of)."""

    def on_delete(self, obj: Resource) -> None:
        self._recorder.forget(obj)


__all__ = ["CHUNK", "MAX_DEFERRED", "EventNote", "EventType", "Forgetting", "Gate", "Recorder", "Sink",
           "TimelineNote"]
