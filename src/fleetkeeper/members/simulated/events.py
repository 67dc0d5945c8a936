"""Events of a simulated cluster: what its scheduler, kubelets and controllers report.

``kubectl get events`` and ``kubectl describe`` read ``v1.Event`` objects that Kubernetes'
components write as they act: the scheduler (``Scheduled``, ``FailedScheduling``,
``Preempted``), the kubelet (``Pulled``, ``Created``, ``Started``, ``Killing``, ``BackOff``,
``Unhealthy``) and the workload controllers (``ScalingReplicaSet``, ``SuccessfulCreate``,
``SuccessfulDelete`` …), each with its source component, the object it is about, a reason
and a message in Kubernetes' words.

A repeat — same object, reason and message — is not a new Event: as client-go's event
correlator does, the existing one counts it (``count`` + 1, ``lastTimestamp`` now). An
Event's name is its object's name and the hex nanoseconds of its first occurrence, as
client-go names them; Events of one instant are a nanosecond apart, so names never repeat
(and the uid is derived from the name when read).

Events come with every pod a cluster starts, so they are cheap: a slotted record per
Event, rendered as a ``v1.Event`` only when read; watch events are built only while someone
watches Events; and the log is bounded as an API server bounds it — an Event not repeated
for an hour is gone (Kubernetes' default event TTL), and past :data:`MAX_EVENTS` per cluster
the least recently seen go first.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from fleetkeeper.clock import Clock
from fleetkeeper.members.simulated.objects import Change, GroupKind, Obj, ObjectKey
from fleetkeeper.members.simulated.watch import WatchHub

EVENT = GroupKind("", "Event")
NORMAL, WARNING = "Normal", "Warning"
#: how long an Event lasts after it was last seen (the API server's ``--event-ttl`` default)
TTL_SECONDS = 3600.0
#: at most this many Events per cluster (the least recently seen are dropped first)
MAX_EVENTS = 5000
_UIDS = uuid.UUID("0b6f3f3e-8d4c-4f5e-9a3b-6c1d2e7f8a90")


class Involved(NamedTuple):
    """The object an Event is about (``involvedObject``)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    #: the part of it (``spec.containers{nginx}``), or ""
    field_path: str = ""


def involved(obj: Obj, field_path: str = "") -> Involved:
    """The reference to a stored object."""
    meta = obj["metadata"]
    return Involved(obj["apiVersion"], obj["kind"], meta.get("namespace") or "", meta["name"], meta["uid"],
                    field_path)


@dataclass(slots=True, eq=False)
class Event:
    """One Event (see the module notes)."""

    name: str
    about: Involved
    type: str
    reason: str
    message: str
    component: str
    host: str
    first: str
    last: str
    #: the clock's monotonic time when last seen (for the TTL)
    seen: float
    count: int = 1
    resource_version: str = ""

    @property
    def namespace(self) -> str:
        return self.about.namespace or "default"

    @property
    def key(self) -> ObjectKey:
        return ObjectKey("", "Event", self.namespace, self.name)


class EventLog:
    """The Events of one cluster (see the module notes)."""

    def __init__(self, clock: Clock, next_version: Callable[[], str], hub: WatchHub, *,
                 now: Callable[[], str], capacity: int = MAX_EVENTS, ttl: float = TTL_SECONDS) -> None:
        self.clock = clock
        #: the cluster's next revision, as a resourceVersion (shared with its other objects)
        self.next_version = next_version
        self.hub = hub
        self.now = now
        self.capacity = capacity
        self.ttl = ttl
        #: by (object, reason, message), least recently seen first
        self._by_key: OrderedDict[tuple[Involved, str, str], Event] = OrderedDict()
        self._by_name: dict[tuple[str, str], Event] = {}
        #: the nanoseconds in the last name given (names are made of strictly growing ones)
        self._last_nanos = 0
        #: (monotonic instant, its wall-clock nanoseconds): read once per instant
        self._instant = (-1.0, 0)
        #: when the log last dropped what is over its age (writes look again a minute later)
        self._expired_at = 0.0

    def __len__(self) -> int:
        return len(self._by_key)

    def record(self, about: Involved, reason: str, message: str, *, component: str, host: str = "",
               type: str = NORMAL) -> None:
        """``component`` reports ``reason``/``message`` about ``about`` (a repeat counts on the last one)."""
        key = (about, reason, message)
        seen = self.clock.monotonic()
        event = self._by_key.get(key)
        if event is not None:
            self._by_key.move_to_end(key)
            event.count += 1
            event.last, event.seen = self.now(), seen
            event.resource_version = self.next_version()
            self._publish(event, created=False)
        else:
            now = self.now()
            event = Event(self._name(about, seen), about, type, reason, message, component, host, now, now,
                          seen, resource_version=self.next_version())
            self._by_key[key] = event
            self._by_name[(about.namespace or "default", event.name)] = event
            self._publish(event, created=True)
            if len(self._by_key) > self.capacity or seen - self._expired_at >= 60.0:
                self._expire(seen)

    def get(self, namespace: str, name: str) -> Event | None:
        self._expire(self.clock.monotonic())
        return self._by_name.get((namespace, name))

    def items(self, namespace: str | None = None) -> Iterator[Event]:
        """Events in (namespace, name) order."""
        self._expire(self.clock.monotonic())
        for key in sorted(k for k in self._by_name if namespace is None or k[0] == namespace):
            yield self._by_name[key]

    def delete(self, namespace: str, name: str) -> bool:
        event = self._by_name.get((namespace, name))
        if event is None:
            return False
        self._drop(event)
        return True

    # -- helpers --------------------------------------------------------------------------
    def _name(self, about: Involved, seen: float) -> str:
        """``<object>.<hex nanoseconds>``, a nanosecond after the last name's at the least."""
        if self._instant[0] != seen:
            self._instant = (seen, int(self.clock.now().timestamp() * 1_000_000) * 1000)
        nanos = max(self._instant[1], self._last_nanos + 1)
        self._last_nanos = nanos
        return f"{about.name}.{nanos:x}"

    def _expire(self, now: float) -> None:
        self._expired_at = now
        while self._by_key:
            oldest = next(iter(self._by_key.values()))
            if len(self._by_key) <= self.capacity and now - oldest.seen <= self.ttl:
                return
            self._drop(oldest)

    def _drop(self, event: Event) -> None:
        del self._by_key[(event.about, event.reason, event.message)]
        del self._by_name[(event.namespace, event.name)]
        if self.hub.watching(EVENT):
            last = render(event)
            last["metadata"]["resourceVersion"] = self.next_version()
            self.hub.publish(Change(event.key, last, last, deleted=True))

    def _publish(self, event: Event, *, created: bool) -> None:
        if self.hub.watching(EVENT):
            self.hub.publish(Change(event.key, None if created else _NO_LABELS, render(event)))


_NO_LABELS: Obj = {"metadata": {}}


def render(event: Event) -> Obj:
    """The ``v1.Event`` a reader sees."""
    about = event.about
    reference: dict[str, Any] = {"kind": about.kind, "namespace": about.namespace, "name": about.name,
                                 "uid": about.uid, "apiVersion": about.api_version}
    if not about.namespace:
        del reference["namespace"]
    if about.field_path:
        reference["fieldPath"] = about.field_path
    source = {"component": event.component, **({"host": event.host} if event.host else {})}
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": event.name, "namespace": event.namespace,
                     "uid": str(uuid.uuid5(_UIDS, f"{event.namespace}/{event.name}")),
                     "resourceVersion": event.resource_version, "creationTimestamp": event.first},
        "involvedObject": reference, "reason": event.reason, "message": event.message, "source": source,
        "firstTimestamp": event.first, "lastTimestamp": event.last, "count": event.count, "type": event.type,
        "eventTime": None, "reportingComponent": event.component, "reportingInstance": event.host,
    }


__all__ = ["EVENT", "MAX_EVENTS", "NORMAL", "TTL_SECONDS", "WARNING", "Event", "EventLog", "Involved",
           "involved", "render"]
