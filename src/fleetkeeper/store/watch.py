"""Watch fan-out: one committed change, many watchers, nobody blocks the writer.

Each open watch is a :class:`Subscriber` registered with the :class:`Hub` under the
group-kind it watches (or ``None`` for every kind). After a commit the store calls
:meth:`Hub.publish`, which for every change touches only the subscribers of that kind:
it filters by namespace and selectors, and appends a small ``(type, record, revision)``
item to the subscriber's bounded buffer, waking its reader. The writer never waits and
never copies objects: the reader turns an item into an :class:`Event` (a private copy
of the object) when it takes it, so copying costs are paid by each consumer.

A subscriber whose buffer is full has fallen too far behind; rather than grow without
bound or block writers, its watch ends with :class:`errors.Gone`, which tells the client
to re-list, exactly what Kubernetes does to a slow watcher. ``publish`` reports when
some buffer is more than half full, so the store can yield once and let readers drain.

Selectors follow Kubernetes' cacher: a MODIFIED change that makes an object stop
matching is delivered as DELETED (with the previous content and the new revision), one
that makes it start matching as ADDED.

A watch resumed from an older revision first replays the backend's history, then the
live buffer; items at or below the last delivered revision are skipped, so the overlap
between the two never produces a duplicate and registration before the history read
never leaves a gap.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Self

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.api.selectors import FieldRequirements, LabelRequirements
from fleetkeeper.store.backend import Change, Record
from fleetkeeper.store.interface import Event, EventType
from fleetkeeper.store.listing import matches

Item = tuple[EventType, Record, int]


class Subscriber:
    """The hub's side of one watch: its filter and its bounded buffer."""

    __slots__ = (
        "buffer", "capacity", "closed", "error", "fields", "gk", "hub", "labels", "last", "namespace",
        "selective", "waiter",
    )

    def __init__(
        self, hub: Hub, gk: GroupKind | None, namespace: str | None, labels: LabelRequirements,
        fields: FieldRequirements, *, since: int, capacity: int,
    ) -> None:
        self.hub = hub
        self.gk = gk
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        self.selective = bool(labels or fields)
        self.buffer: deque[Item] = deque()
        self.capacity = capacity
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.error: errors.ApiError | None = None
        self.last = since

    def matches(self, obj: dict[str, Any]) -> bool:
        return matches(self.labels, self.fields, obj)

    def transform(self, change: Change) -> Item | None:
        """What this watcher sees of ``change`` (``None``: nothing)."""
        if self.namespace is not None and change.key.namespace != self.namespace:
            return None
        record = change.record
        if not self.selective:
            return (change.type, record, record.revision)
        now_matches = self.matches(record.obj)
        if change.type != "MODIFIED":
            return (change.type, record, record.revision) if now_matches else None
        prev = change.prev
        was_matching = prev is not None and self.matches(prev.obj)
        if now_matches:
            return ("MODIFIED" if was_matching else "ADDED", record, record.revision)
        if was_matching and prev is not None:
            return ("DELETED", prev, record.revision)
        return None

    def offer(self, change: Change) -> bool:
        """Queue ``change`` if it concerns this watcher; True when the buffer is filling up."""
        item = self.transform(change)
        if item is None or self.closed:
            return False
        buffer = self.buffer
        if len(buffer) >= self.capacity:
            self.fail(errors.Gone(
                f"watch fell more than {self.capacity} events behind at revision {item[2]}; re-list"
            ))
            return False
        buffer.append(item)
        self.wake()
        return len(buffer) > self.capacity >> 1

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def fail(self, error: errors.ApiError) -> None:
        self.error = error
        self.buffer.clear()
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.hub.unsubscribe(self)
        self.wake()


class Hub:
    """The registry of open watches, indexed by group-kind."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._by_gk: dict[tuple[str, str] | None, dict[int, Subscriber]] = {}

    def __len__(self) -> int:
        return sum(len(subs) for subs in self._by_gk.values())

    def subscribe(
        self, gk: GroupKind | None, namespace: str | None, labels: LabelRequirements,
        fields: FieldRequirements, *, since: int,
    ) -> Subscriber:
        sub = Subscriber(self, gk, namespace, labels, fields, since=since, capacity=self.capacity)
        self._by_gk.setdefault(gk, {})[id(sub)] = sub
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        subs = self._by_gk.get(sub.gk)
        if subs is not None:
            subs.pop(id(sub), None)
            if not subs:
                del self._by_gk[sub.gk]

    def publish(self, changes: Sequence[Change]) -> bool:
        """Offer committed changes to the interested watchers; True if one is filling up."""
        by_gk = self._by_gk
        if not by_gk:
            return False
        pressure = False
        every = by_gk.get(None)
        for change in changes:
            key = change.key
            subs = by_gk.get((key.group, key.kind))
            if subs:
                for sub in list(subs.values()):
                    pressure = sub.offer(change) or pressure
            if every:
                for sub in list(every.values()):
                    pressure = sub.offer(change) or pressure
        return pressure

    def close_all(self) -> None:
        for subs in list(self._by_gk.values()):
            for sub in list(subs.values()):
                sub.close()

    def fail_all(self, error: errors.ApiError) -> None:
        """End every open watch with ``error``."""
        for subs in list(self._by_gk.values()):
            for sub in list(subs.values()):
                sub.fail(error)


HistoryReader = Callable[[], Awaitable[list[Change]]]


class StoreWatch:
    """An open watch (the store's :class:`~fleetkeeper.store.interface.Watch`)."""

    def __init__(self, sub: Subscriber, history: HistoryReader | None) -> None:
        self._sub = sub
        self._history = history
        self._backlog: deque[Item] = deque()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        sub = self._sub
        if self._history is not None:
            await self._replay()
        while True:
            if self._backlog:
                item = self._backlog.popleft()
            elif sub.buffer:
                item = sub.buffer.popleft()
            elif sub.error is not None:
                error, sub.error = sub.error, None
                raise error
            elif sub.closed:
                raise StopAsyncIteration
            else:
                waiter = sub.waiter = asyncio.get_running_loop().create_future()
                await waiter
                continue
            kind, record, revision = item
            if revision <= sub.last:
                continue
            sub.last = revision
            obj = record.copy()
            if record.revision != revision:
                obj["metadata"]["resourceVersion"] = str(revision)
            return Event(kind, obj, revision)

    async def _replay(self) -> None:
        history, self._history = self._history, None
        assert history is not None
        try:
            changes = await history()
        except errors.ApiError as exc:
            self._sub.fail(exc)
            return
        for change in changes:
            item = self._sub.transform(change)
            if item is not None:
                self._backlog.append(item)

    async def close(self) -> None:
        self._sub.close()

    def __del__(self) -> None:
        sub = getattr(self, "_sub", None)
        if sub is not None and not sub.closed:
            sub.closed = True
            sub.hub.unsubscribe(sub)


__all__ = ["Hub", "StoreWatch", "Subscriber"]
