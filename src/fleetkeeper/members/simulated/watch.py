"""Watches on a simulated cluster: no tasks, bounded memory, nothing to leak.

A :class:`WatchStream` is a plain async iterator. It registers with the cluster's
:class:`WatchHub` on its first read (after passing the fault gate), queueing ``ADDED``
for every object that exists, and from then on the hub hands it each change of its
kind synchronously, inside the write. Nothing runs in the background, so a consumer
that stops reading costs no task; ``aclose()`` unregisters at once, and the hub only
holds streams weakly, so a stream dropped without ``aclose()`` disappears with its last
reference.

**Bounded.** A slow consumer must not make a fast cluster grow without limit, and the
writer must never wait for a reader. Undelivered events are therefore *coalesced per
object* (the queue holds at most two entries per object): ``ADDED``+``MODIFIED`` becomes
``ADDED`` with the newer state, ``MODIFIED``+``MODIFIED`` the newer ``MODIFIED``,
``ADDED``+``DELETED`` vanishes (the consumer never saw the object), ``DELETED``+``ADDED``
stays two events. Per object the order is kept; between objects, an object's events are
delivered in the order its first pending event arrived. For status read-back — the
purpose — only the latest state of each object matters.

**Selectors** behave as in Kubernetes: an object modified so that it stops matching is
reported ``DELETED``; one that starts matching, ``ADDED``.

**Faults.** When the API goes down or into a black hole the hub breaks every open stream:
the next read fails the way any call would have failed at that moment.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, NoReturn

from fleetkeeper.members.interface import MemberEvent
from fleetkeeper.members.simulated.objects import Change, GroupKind, Obj, clone
from fleetkeeper.store.backend import Key

EventType = Literal["ADDED", "MODIFIED", "DELETED"]
Matcher = Callable[[dict[str, str]], bool]
Failure = Callable[[], Coroutine[Any, Any, NoReturn]]
Opener = Callable[["WatchStream"], Awaitable[None]]


def labels_of(obj: Obj | None) -> dict[str, str]:
    if obj is None:
        return {}
    labels: dict[str, str] = obj["metadata"].get("labels") or {}
    return labels


class WatchStream:
    """One consumer's watch of one kind (an ``AsyncIterator[MemberEvent]``)."""

    def __init__(self, gk: GroupKind, matches: Matcher, opener: Opener) -> None:
        self.gk = gk
        self.matches = matches
        self._opener: Opener | None = opener
        self._pending: OrderedDict[Key, list[tuple[EventType, Obj]]] = OrderedDict()
        self._wake = asyncio.Event()
        self._failure: Failure | None = None
        self._closed = False

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> MemberEvent:
        if self._opener is not None:
            opener, self._opener = self._opener, None
            try:
                await opener(self)  # passes the fault gate, queues ADDED for what exists, registers
            except BaseException:
                self.close()
                raise
        while not (self._pending or self._failure or self._closed):
            self._wake.clear()
            await self._wake.wait()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            self._closed = True
            await failure()
        if self._closed:
            raise StopAsyncIteration
        key, events = next(iter(self._pending.items()))
        event_type, obj = events.pop(0)
        if not events:
            del self._pending[key]
        return MemberEvent(event_type, clone(obj))

    async def aclose(self) -> None:
        """Stop: the hub forgets the stream and the iteration ends."""
        self.close()

    def close(self) -> None:
        """End the iteration now (what ``aclose`` does, callable from synchronous code)."""
        self._closed = True
        self._opener = None
        self._pending.clear()
        self._wake.set()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- fed by the hub ------------------------------------------------------------------
    def queue(self, event_type: EventType, key: Key, obj: Obj) -> None:
        events = self._pending.setdefault(key, [])
        last = events[-1][0] if events else None
        if last == "ADDED" and event_type != "ADDED":
            events.pop()
            if event_type == "MODIFIED":
                events.append(("ADDED", obj))
        elif last == "MODIFIED":
            events[-1] = (event_type, obj)
        else:
            events.append((event_type, obj))
        if not events:
            del self._pending[key]
        self._wake.set()

    def offer(self, change: Change) -> None:
        """Queue what ``change`` means to this stream's selector."""
        was = change.old is not None and self.matches(labels_of(change.old))
        now = not change.deleted and self.matches(labels_of(change.new))
        if was and now:
            self.queue("MODIFIED", change.key, change.new)
        elif was:
            self.queue("DELETED", change.key, change.new)
        elif now:
            self.queue("ADDED", change.key, change.new)

    def break_with(self, failure: Failure) -> None:
        self._failure = failure
        self._pending.clear()
        self._wake.set()


class WatchHub:
    """The open streams of one cluster, by kind (held weakly).

    Streams are kept as weak references in plain dicts rather than weak sets: every
    write of the cluster publishes, and iterating a ``WeakSet`` (its iteration guard and
    pending-removal bookkeeping) cost more than the offer itself."""

    def __init__(self) -> None:
        self._streams: dict[GroupKind, dict[int, weakref.ref[WatchStream]]] = {}

    def register(self, stream: WatchStream) -> None:
        """Start handing ``stream`` the changes of its kind."""
        self._streams.setdefault(stream.gk, {})[id(stream)] = weakref.ref(stream)

    def _open(self, gk: GroupKind) -> list[WatchStream]:
        """The open streams of a kind (forgetting closed and collected ones)."""
        refs = self._streams.get(gk)
        if not refs:
            return []
        out: list[WatchStream] = []
        for ident, ref in list(refs.items()):
            stream = ref()
            if stream is None or stream.closed:
                del refs[ident]
            else:
                out.append(stream)
        return out

    def watching(self, gk: GroupKind) -> bool:
        """Whether anyone watches a kind (lets writers skip rendering events nobody reads)."""
        return bool(self._open(gk))

    def publish(self, change: Change) -> None:
        """Offer one change to every open stream of its kind."""
        for stream in self._open(change.key.group_kind):
            stream.offer(change)

    def break_all(self, failure: Failure) -> None:
        """The connection of every open stream is lost."""
        for gk in list(self._streams):
            for stream in self._open(gk):
                stream.break_with(failure)
        self._streams.clear()

    def close_all(self) -> None:
        """End every open stream (their consumers see the iteration stop)."""
        for gk in list(self._streams):
            for stream in self._open(gk):
                stream.close()
        self._streams.clear()

    def open_count(self) -> int:
        """Open streams (for tests that check nothing leaks)."""
        return sum(len(self._open(gk)) for gk in list(self._streams))


__all__ = ["EventType", "Matcher", "WatchHub", "WatchStream", "labels_of"]
