"""The etcd backend's feed: how changes reach this process's watchers; history, retention, presence.

No etcd client here (only :mod:`.etcd` imports one): events are the client's protobuf
messages, read by attribute — ``kv`` (key, value, mod_revision, version), ``prev_kv``
(unset: ``mod_revision == 0``) and ``type`` (0 put, 1 delete).

**The feed.** One prefix watch per process, from the revision seen at open, with
previous values, is the only path to this process's watchers: the backend publishes
what it reads there through the façade's hub, so a write from another process reaches
local watchers exactly like a local one — in revision order, with no gaps or
duplicates. A local write returns only once the feed has delivered it
(:class:`Delivery`), so acknowledged writes are visible to this process's watchers, as
with the in-process backends. A broken stream resumes from the last delivered etcd
revision; if etcd has compacted past it, every watch ends with ``errors.Gone`` (clients
re-list) and the feed restarts at the head. After too many consecutive failures it
stops, ends the watches the same way, and restarts on next use.

**History.** A watch resumed from an older store revision replays etcd's own history: a
temporary prefix watch from the etcd revision holding that store revision (its later
changes in the same transaction count too), read until it reaches the revision the feed
had delivered — every transaction of the store has an event under the prefix, so the
end is always seen. etcd reporting that revision compacted is ``errors.Gone``.

**Decoding.** etcd sends all events of one revision in one response, in the order of
the transaction's operations, so a revision's events are decoded together (see
:mod:`.etcd_layout` for the numbers): each object event becomes a :class:`Change`
whose revision takes its slot from the stored value's stamp; the revision key's event
carries, for each deleted object, its final state. A put of a key's first version is
ADDED, a later one MODIFIED; ``prev_kv`` is the previous record, which a watch with a
selector needs to tell "stopped matching" from "never matched". Keys written or deleted
outside the store (no stamp, no final state) take their place among the revision's
events as slot.

**Retention** (:class:`Retention`) counts what the feed delivered: the store keeps at
least ``history`` changes, however many each transaction holds, and compacts etcd
below them.

**Presence** (:class:`Presence`) answers a create's "is this name taken?" from what the
feed delivered, so that a batch of creates does not wait for one etcd read each.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from typing import Any

from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.etcd_layout import (
    Layout,
    decode_mark,
    decode_record,
    etcd_revision,
    restamp_raw,
    store_revision,
)
from fleetkeeper.store.interface import EventType

_DELETE = 1  # mvccpb.Event.EventType.DELETE


class Compacted(Exception):
    """etcd no longer has the history a watch asked for."""

    def __init__(self, etcd_revision: int) -> None:
        super().__init__(f"compacted up to etcd revision {etcd_revision}")
        self.etcd_revision = etcd_revision


def decode_events(layout: Layout, events: Iterable[Any]) -> list[Change]:
    """The store changes in a run of watch events (any number of whole revisions), in revision order."""
    changes: list[Change] = []
    revision_key = layout.revision_key
    for _, group in itertools.groupby(events, key=lambda e: e.kv.mod_revision):
        batch = list(group)
        mark = next((e.kv.value for e in batch if e.kv.key == revision_key), b"")
        deleted = decode_mark(mark).deleted if mark else {}
        decoded = [change for slot, event in enumerate(batch)
                   if event.kv.key != revision_key
                   and (change := _change(layout, event, deleted, slot)) is not None]
        decoded.sort(key=lambda c: c.record.revision)  # already in slot order when the store wrote them
        changes.extend(decoded)
    return changes


def _change(layout: Layout, event: Any, deleted: dict[bytes, bytes], slot: int) -> Change | None:
    kv, prev_kv = event.kv, event.prev_kv
    key = layout.decode(kv.key)
    if key is None:
        return None
    prev = decode_record(prev_kv.value, prev_kv.mod_revision) if prev_kv.mod_revision else None
    if event.type != _DELETE:
        kind: EventType = "ADDED" if kv.version == 1 else "MODIFIED"
        return Change(kind, key, decode_record(kv.value, kv.mod_revision, slot), prev)
    final = deleted.get(kv.key)
    if final is not None:
        return Change("DELETED", key, decode_record(final, kv.mod_revision, slot), prev)
    if prev is None:
        return None  # deleted outside the store, its last state compacted away
    revision = store_revision(kv.mod_revision, slot)
    return Change("DELETED", key, Record(restamp_raw(prev.raw, revision), revision), prev)


class Retention:
    """Where etcd may be compacted while the store keeps at least ``keep`` changes.

    The feed reports every delivered change (:meth:`seen`); the newest etcd revisions
    holding ``keep`` changes are kept, and so is the one before them (its ``base``), so
    a watch may resume from any of its changes. Below that is compactable once more than
    ``slack`` changes have dropped out since the last compaction. What happened before
    the feed started is not known: a transaction holds at least one change, so the last
    ``keep`` etcd revisions hold at least ``keep`` changes.
    """

    def __init__(self, keep: int, slack: int, head: int) -> None:
        self.keep = keep
        self.slack = slack
        self._recent: deque[tuple[int, int]] = deque()  # (etcd revision, changes), oldest first
        self._held = 0
        self.base = 0
        self._dropped = 0
        self.restart(head)

    def restart(self, head: int) -> None:
        """Forget what was seen; the feed goes on after etcd revision ``head``."""
        self._recent.clear()
        self._held = 0
        base = max(self.base, head - self.keep)
        self._dropped += base - self.base
        self.base = base

    def seen(self, changes: Sequence[Change]) -> None:
        """Count delivered changes (in revision order)."""
        recent = self._recent
        for change in changes:
            revision = etcd_revision(change.record.revision)
            if recent and recent[-1][0] == revision:
                recent[-1] = (revision, recent[-1][1] + 1)
            else:
                recent.append((revision, 1))
            self._held += 1
        while recent and self._held - recent[0][1] >= self.keep:
            revision, count = recent.popleft()
            self._held -= count
            self._dropped += count
            self.base = revision

    def due(self, compacted: int) -> int | None:
        """The etcd revision to compact to, if it is time (``compacted``: etcd's compaction so far)."""
        target = self.base - 1
        if target <= compacted or self._dropped <= self.slack:
            return None
        return target

    def compacted(self) -> None:
        """A compaction to :meth:`due`'s revision was made."""
        self._dropped = 0


#: where a name is unique: (group, kind, namespace)
Space = tuple[str, str, str]


def space_of(key: Key) -> Space:
    return (key.group, key.kind, key.namespace)


class Presence:
    """Which names are taken in some spaces, as of the revision the feed delivered.

    A space is listed once (its keys only, at the feed's revision: :meth:`begin`,
    :meth:`finish`) and kept current by :meth:`seen` with every change the feed
    delivers — those delivered while the list loads included. So "absent" can only be
    stale by what another process wrote and the feed has not delivered yet, which a
    create's guard catches at commit; "taken" is confirmed by reading etcd. At most
    ``budget`` names are held, whole spaces evicted least recently used first; a space
    holding more than a quarter of them is not kept (creates there read etcd), and is not
    listed again while it is remembered as such.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.largest = budget // 4
        self._spaces: OrderedDict[Space, set[str]] = OrderedDict()
        self._loading: dict[Space, list[Change]] = {}
        self._large: OrderedDict[Space, None] = OrderedDict()
        self._held = 0

    def __len__(self) -> int:
        return self._held

    def lookup(self, key: Key) -> bool | None:
        """Whether ``key``'s name is taken (``None``: its space is not kept)."""
        space = space_of(key)
        names = self._spaces.get(space)
        if names is None:
            return None
        self._spaces.move_to_end(space)
        return key.name in names

    def begin(self, space: Space) -> bool:
        """Whether to list ``space`` now (it is neither kept, nor loading, nor too large)."""
        if space in self._spaces or space in self._loading or space in self._large:
            return False
        self._loading[space] = []
        return True

    def finish(self, space: Space, names: Sequence[str] | None, *, more: bool = False) -> None:
        """The names ``space`` held at the revision :meth:`begin` was called at.

        ``None``: they could not be listed; ``more``: it held more than those.
        """
        log = self._loading.pop(space, None)
        if log is None or names is None:
            return  # forgotten meanwhile, or not listed
        if more or len(names) > self.largest:
            self._too_large(space)
            return
        taken = set(names)
        for change in log:
            if change.type == "DELETED":
                taken.discard(change.key.name)
            else:
                taken.add(change.key.name)
        self._spaces[space] = taken
        self._held += len(taken)
        self._trim()

    def seen(self, changes: Sequence[Change]) -> None:
        """Apply delivered changes (in revision order)."""
        spaces, loading = self._spaces, self._loading
        for change in changes:
            key = change.key
            space = (key.group, key.kind, key.namespace)
            names = spaces.get(space)
            if names is None:
                log = loading.get(space)
                if log is not None:
                    log.append(change)
            elif change.type == "DELETED":
                if key.name in names:
                    names.discard(key.name)
                    self._held -= 1
            elif key.name not in names:
                names.add(key.name)
                self._held += 1
                if len(names) > self.largest:
                    self._held -= len(names)
                    del spaces[space]
                    self._too_large(space)
        self._trim()

    def clear(self) -> None:
        """Forget everything (the feed lost its place, or stopped)."""
        self._spaces.clear()
        self._loading.clear()
        self._large.clear()
        self._held = 0

    def _too_large(self, space: Space) -> None:
        self._large[space] = None
        while len(self._large) > 1024:
            self._large.popitem(last=False)

    def _trim(self) -> None:
        while self._held > self.budget and self._spaces:
            _, names = self._spaces.popitem(last=False)
            self._held -= len(names)


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


__all__ = ["Compacted", "Delivery", "Presence", "Retention", "Space", "decode_events", "space_of"]
