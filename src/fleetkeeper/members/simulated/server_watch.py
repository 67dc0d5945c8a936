"""Watches of the member API server: a short history of changes per kind.

A Kubernetes client lists a collection, remembers the list's ``resourceVersion`` R and
watches "every change after R". The simulated cluster's own watch streams have no
history (they start with ``ADDED`` for what exists), so the server keeps one
:class:`ChangeLog` per kind, opened the first time the kind is listed or watched. A log
is a subscriber of the cluster's watch hub: the hub hands it every change of its kind
synchronously, inside the write, so the log holds every change in revision order with
no gap — including the old labels, which is what selector semantics need (an object
that stops matching a watch's selector is ``DELETED`` for that watch).

A log is opened *before* the list that a watch will resume from is computed, so any R
a client got from a list of this server is covered. The log keeps the last
:data:`CAPACITY` changes; a watch from a revision older than what it holds (or from
before the log existed) gets one ``ERROR`` event with a ``410 Expired`` Status, which
every client library answers by listing again. Entries hold the stored dicts, which
the cluster never mutates in place, so nothing is copied until an event is sent.

A watch (or a followed pod log) is sent as a :class:`WatchResponse`: a stream of lines that
ends at its timeout, when the client goes away, or when the server closes — whichever
comes first — so an idle watch never outlives its client or its server.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from fleetkeeper.members.simulated.objects import Change, GroupKind, Obj, ObjectKey
from fleetkeeper.members.simulated.watch import Matcher, WatchStream, labels_of

#: changes kept per kind
CAPACITY = 10_000
#: what a watch event carries: (type, object)
Event = tuple[str, Obj]
#: a predicate over an object's key (namespace and name selection of one watch)
KeyFilter = Callable[[ObjectKey], bool]


@dataclass(frozen=True, slots=True)
class Entry:
    revision: int
    change: Change


class ExpiredError(Exception):
    """The requested revision is older than the log's history (410 Expired)."""


async def _registered(stream: WatchStream) -> None:
    """The opener of a log: it is registered with the hub when created, nothing to do."""


class ChangeLog(WatchStream):
    """The recent changes of one kind (a hub subscriber, see the module notes)."""

    def __init__(self, gk: GroupKind, start: int, capacity: int = CAPACITY) -> None:
        super().__init__(gk, lambda labels: True, _registered)
        #: every change after this revision is in the log (until evicted)
        self.start = start
        self._entries: deque[Entry] = deque(maxlen=capacity)
        self._changed = asyncio.Event()
        self.broken = False

    # -- fed by the hub ------------------------------------------------------------------
    def offer(self, change: Change) -> None:
        entries = self._entries
        if len(entries) == entries.maxlen:
            self.start = entries[0].revision
        entries.append(Entry(int(change.new["metadata"]["resourceVersion"]), change))
        self._changed.set()
        self._changed = asyncio.Event()

    def break_with(self, failure: Any) -> None:
        """The hub dropped its streams (the cluster's API failed): this log is over."""
        self.broken = True
        self.close()
        self._changed.set()

    # -- read by watch requests ----------------------------------------------------------
    async def follow(self, since: int, matches: Matcher, keep: KeyFilter) -> AsyncIterator[Event]:
        """The events a watch from revision ``since`` sees, then live ones; ends when the
        log breaks. Raises :class:`ExpiredError` when ``since`` is no longer covered."""
        if since < self.start:
            raise ExpiredError(f"too old resource version: {since} ({self.start})")
        position = since
        while not self.broken:
            changed = self._changed
            entries = list(self._after(position))
            for entry in entries:
                position = entry.revision
                event = classify(entry.change, matches) if keep(entry.change.key) else None
                if event is not None:
                    yield event
            if not entries:
                await changed.wait()

    def _after(self, revision: int) -> list[Entry]:
        if revision < self.start:
            raise ExpiredError(f"too old resource version: {revision} ({self.start})")
        entries = self._entries
        if not entries or entries[-1].revision <= revision:
            return []
        low, high = 0, len(entries)
        while low < high:  # the first entry after ``revision`` (revisions only grow)
            middle = (low + high) // 2
            if entries[middle].revision <= revision:
                low = middle + 1
            else:
                high = middle
        return [entries[i] for i in range(low, len(entries))]


def classify(change: Change, matches: Matcher) -> Event | None:
    """What ``change`` is to a watch with a label selector (None: nothing)."""
    was = change.old is not None and matches(labels_of(change.old))
    now = not change.deleted and matches(labels_of(change.new))
    if was and now:
        return "MODIFIED", change.new
    if was:
        return "DELETED", change.new
    if now:
        return "ADDED", change.new
    return None


def event_line(kind: str, obj: Obj) -> bytes:
    """One watch event as a line of the stream."""
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"


class WatchResponse(Response):
    """A watch stream that also ends when the client goes away or the server closes."""

    def __init__(self, lines: AsyncIterator[bytes], *, timeout: float, closing: asyncio.Event,
                 media_type: str = "application/json") -> None:
        super().__init__(media_type=media_type)
        self._lines = lines
        self._timeout = timeout
        self._closing = closing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", str(self.media_type).encode()),
                                (b"cache-control", b"no-cache")]})

        async def produce() -> None:
            async for line in self._lines:
                await send({"type": "http.response.body", "body": line, "more_body": True})

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        tasks = [asyncio.ensure_future(produce()), asyncio.ensure_future(disconnected()),
                 asyncio.ensure_future(self._closing.wait())]
        try:
            await asyncio.wait(tasks, timeout=self._timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if not tasks[1].done() or tasks[1].cancelled():
            await send({"type": "http.response.body", "body": b"", "more_body": False})


__all__ = ["CAPACITY", "ChangeLog", "Entry", "Event", "ExpiredError", "KeyFilter", "WatchResponse",
           "classify", "event_line"]
