"""The etcd backend's feed: how changes reach this process's watchers, and history.

No etcd client here (only :mod:`.etcd` imports one): events are the client's protobuf
messages, read by attribute — ``kv`` (key, value, mod_revision, version), ``prev_kv``
(unset: ``mod_revision == 0``) and ``type`` (0 put, 1 delete).

**The feed.** One prefix watch per process, from the revision seen at open, with
previous values, is the only path to this process's watchers: the backend publishes
what it reads there through the façade's hub, so a write from another process reaches
local watchers exactly like a local one — in etcd's revision order, with no gaps or
duplicates. A local write returns only once the feed has delivered it
(:class:`Delivery`), so acknowledged writes are visible to this process's watchers, as
with the in-process backends. A broken stream resumes from the last delivered
revision; if etcd has compacted past it, every watch ends with ``errors.Gone`` (clients
re-list) and the feed restarts at the head. After too many consecutive failures it
stops, ends the watches the same way, and restarts on next use.

**History.** A watch resumed from an older revision replays etcd's own history: a
temporary prefix watch from that revision, read until it reaches the revision the feed
had delivered — every revision the feed delivers has an event under the prefix, so the
end is always seen. etcd reporting that revision compacted is ``errors.Gone``.

**Decoding.** etcd sends all events of one revision in one response, in the order of
the transaction's operations, so a revision's events are decoded together: the
object's event becomes the :class:`Change`; the revision key's event (see
:mod:`.etcd_layout`) contributes, for a delete, the object's final state. A put of a
key's first version is ADDED, a later one MODIFIED; ``prev_kv`` is the previous
record, which a watch with a selector needs to tell "stopped matching" from "never
matched".
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Iterable
from typing import Any

from fleetkeeper.store.backend import Change, Record
from fleetkeeper.store.etcd_layout import OFFSET, Layout, decode_record, restamp_raw
from fleetkeeper.store.interface import EventType

_DELETE = 1  # mvccpb.Event.EventType.DELETE


class Compacted(Exception):
    """etcd no longer has the history a watch asked for."""

    def __init__(self, etcd_revision: int) -> None:
        super().__init__(f"compacted up to etcd revision {etcd_revision}")
        self.etcd_revision = etcd_revision


def decode_events(layout: Layout, events: Iterable[Any]) -> list[Change]:
    """The store changes in a run of watch events (any number of whole revisions)."""
    changes: list[Change] = []
    revision_key = layout.revision_key
    for _, group in itertools.groupby(events, key=lambda e: e.kv.mod_revision):
        batch = list(group)
        final = next((e.kv.value for e in batch if e.kv.key == revision_key), b"")
        for event in batch:
            change = _change(layout, event, final) if event.kv.key != revision_key else None
            if change is not None:
                changes.append(change)
    return changes


def _change(layout: Layout, event: Any, final: bytes) -> Change | None:
    kv, prev_kv = event.kv, event.prev_kv
    key = layout.decode(kv.key)
    if key is None:
        return None
    prev = decode_record(prev_kv.value, prev_kv.mod_revision) if prev_kv.mod_revision else None
    if event.type != _DELETE:
        kind: EventType = "ADDED" if kv.version == 1 else "MODIFIED"
        return Change(kind, key, decode_record(kv.value, kv.mod_revision), prev)
    if final:
        return Change("DELETED", key, decode_record(final, kv.mod_revision), prev)
    if prev is None:
        return None  # deleted outside the store, its last state compacted away
    revision = kv.mod_revision - OFFSET
    return Change("DELETED", key, Record(restamp_raw(prev.raw, revision), revision), prev)


class Delivery:
    """Writers waiting until the feed has published a revision."""

    def __init__(self) -> None:
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._tickets = itertools.count()

    async def wait(self, revision: int) -> None:
        """Return once :meth:`release` has been called with ``revision`` or later (or with None)."""
        waiter = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (revision, next(self._tickets), waiter))
        await waiter

    def release(self, revision: int | None = None) -> None:
        """Wake the writers waiting for ``revision`` or earlier (all of them when ``None``)."""
        waiters = self._waiters
        while waiters and (revision is None or waiters[0][0] <= revision):
            waiter = heapq.heappop(waiters)[2]
            if not waiter.done():
                waiter.set_result(None)


__all__ = ["Compacted", "Delivery", "decode_events"]
