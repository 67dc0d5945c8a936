"""Watches of a simulated cluster served as a Store, with the store's own watch machinery.

:class:`~fleetkeeper.members.simulated.api_store.ClusterStore` hands watches out through
:mod:`fleetkeeper.store.watch` (per-kind subscribers, selector transitions, bounded buffers
that end a slow watcher with ``Gone``). What feeds that hub is one :class:`Tap` per kind: a
stream of the cluster's own watch hub, registered the first time the store is asked about
the kind (so a cluster nobody serves pays nothing), which turns each change of the engine
into a store change and keeps the last :data:`HISTORY` of them in the store's
:class:`~fleetkeeper.store.local.RevisionLog`. A watch from an older revision replays them;
one from before the tap's history is ``Gone``, and the client lists again, as kube-apiserver
answers a revision its watch cache no longer holds.

Nothing is serialized when the engine writes: a change holds the engine's dicts (which it
never mutates in place) and a watcher copies an object when it takes the event. Pods and
events are rendered per change with only their old labels, so a tap of those kinds keeps
their last rendering: the previous state a field selector is checked against.

Faults: when the cluster's API goes down or into the black hole its hub breaks every
stream, taps included; every open watch then fails the way a call fails at that moment
(``faults.py``), and the taps start over, with a new history, on the next call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NoReturn, Self

from fleetkeeper import errors
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.members.simulated import objects as sim
from fleetkeeper.members.simulated.watch import WatchStream
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.interface import Event, EventType
from fleetkeeper.store.local import RevisionLog, gone
from fleetkeeper.store.watch import StoreWatch

#: changes kept per kind for watches that resume from an older revision
HISTORY = 10_000

Failure = Callable[[], Coroutine[Any, Any, NoReturn]]
Publish = Callable[[Change], None]
Ended = Callable[["Failure | None"], None]


class Held(Record):
    """A record of an engine dict: copied when a watcher takes it, never serialized."""

    __slots__ = ()

    def __init__(self, obj: sim.Obj, revision: int) -> None:
        super().__init__(b"", revision, obj)

    def copy(self) -> dict[str, Any]:
        return json_copy(self.obj)

    def drop_cache(self) -> None:
        """The engine's dict is the only form: kept."""


class Broken(errors.ApiError):
    """A watch lost to a fault; :class:`ClusterWatch` turns it into the fault's own failure."""

    def __init__(self, failure: Failure) -> None:
        super().__init__("the member cluster's API failed")
        self.failure = failure


async def _registered(stream: WatchStream) -> None:
    """A tap is registered with the hub when created: nothing to open."""


def _revision(obj: sim.Obj) -> int:
    version = obj["metadata"].get("resourceVersion")
    return int(version) if version else 0


class Tap(WatchStream):
    """The changes of one kind, from the cluster's hub into the store's (see the module notes)."""

    def __init__(self, gk: sim.GroupKind, *, start: int, capacity: int, publish: Publish, ended: Ended,
                 rendered: list[sim.Obj] | None) -> None:
        super().__init__(gk, lambda labels: True, _registered)
        self.broken = False
        self._history = RevisionLog(start=start, capacity=capacity)
        self._publish = publish
        self._ended = ended
        self._last: dict[Key, sim.Obj] | None = (
            None if rendered is None else {sim.ObjectKey.of(obj): obj for obj in rendered})

    # -- fed by the cluster's hub --------------------------------------------------------
    def offer(self, change: sim.Change) -> None:
        key, new, old = change.key, change.new, change.old
        last = self._last
        if last is not None:  # a rendered kind: its change carries only the old labels
            old = last.pop(key, old) if change.deleted else last.get(key, old)
            if not change.deleted:
                last[key] = new
        kind: EventType = "DELETED" if change.deleted else "ADDED" if change.old is None else "MODIFIED"
        revision = _revision(new)
        prev = None if old is None else Held(old, _revision(old))
        item = Change(kind, Key(*key), Held(new, revision), prev)
        self._history.append(item)
        self._publish(item)

    def break_with(self, failure: Failure) -> None:
        """The cluster's API failed: the hub dropped its streams."""
        self._end(failure)

    def close(self) -> None:
        """The cluster ended its watches (``SimulatedCluster.close``)."""
        self._end(None)

    def _end(self, failure: Failure | None) -> None:
        super().close()
        if not self.broken:
            self.broken = True
            self._history.clear()
            self._ended(failure)

    def detach(self) -> None:
        """Stop without ending anyone's watch (the store closes)."""
        self.broken = True
        super().close()

    # -- read by watches -----------------------------------------------------------------
    @property
    def start(self) -> int:
        """Every change after this revision is in the history (until evicted)."""
        return self._history.start

    def after(self, revision: int) -> list[Change]:
        """The kept changes after ``revision`` (``Gone`` when some are no longer kept)."""
        if self.broken:
            raise gone(revision, self.start)
        return self._history.after(revision)

    def rewind(self, found: dict[tuple[str, str], sim.Obj], revision: int, namespace: str | None) -> None:
        """Turn ``found`` (the objects now, by namespace and name) into the objects at ``revision``:
        a continued list shows what its first page was cut from, or is ``Gone`` once that has
        left the history."""
        try:
            changes = self.after(revision)
        except errors.Gone:
            raise errors.Gone(
                f"the continue token of revision {revision} is too old to list a consistent result; "
                "list again without it") from None
        seen: set[tuple[str, str]] = set()
        for change in changes:
            position = (change.key.namespace, change.key.name)
            if (namespace is not None and change.key.namespace != namespace) or position in seen:
                continue
            seen.add(position)  # the first change after the revision says what was there
            if change.type == "ADDED":
                found.pop(position, None)
            else:
                found[position] = (change.prev if change.prev is not None else change.record).obj


class ClusterWatch:
    """An open watch (the store's ``Watch``): the cluster's fault gate, then the store's stream."""

    def __init__(self, inner: StoreWatch, gate: Callable[[], Awaitable[None]]) -> None:
        self._inner = inner
        self._gate: Callable[[], Awaitable[None]] | None = gate

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        if self._gate is not None:
            gate, self._gate = self._gate, None
            try:
                await gate()
            except BaseException:
                await self._inner.close()
                raise
        try:
            return await anext(self._inner)
        except Broken as exc:
            await exc.failure()

    async def close(self) -> None:
        await self._inner.close()


__all__ = ["HISTORY", "Broken", "ClusterWatch", "Held", "Tap", "gone"]
