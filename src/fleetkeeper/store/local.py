"""A synchronous in-memory store, for a simulation whose controllers run inside each call.

:class:`~fleetkeeper.store.core.Store` is asynchronous and serializes every write, which is
right for an API server and far too slow for a simulated cluster whose controllers write
tens of thousands of objects in a burst. :class:`LocalStore` keeps the same write semantics
(:mod:`.objects` stamps ``uid``, ``creationTimestamp``, ``generation`` and one revision
counter's ``resourceVersion``) without the cost: objects are wire dicts that are **never
mutated in place** — every write stores a new dict sharing unchanged sub-trees — so readers
get consistent snapshots for free and a listener may keep what it is told about.

Indexes kept so no call scans every object: by kind → namespace → name (list of one
namespace, namespace deletion) and by owner uid (garbage collection of dependents).
Listeners hear every :class:`Write`. The revision counter is the caller's too: rows it
keeps outside the store (a simulated cluster's pods and events) take their
``resourceVersion`` from :meth:`LocalStore.next_version`, so there is one order of changes.

:class:`RevisionLog` is the bounded history a watch resumes from: the changes of one kind
after a revision, or ``Gone`` once they are no longer kept, as kube-apiserver answers a
revision its watch cache has let go.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store import objects as o
from fleetkeeper.store.backend import Change, Key

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Write:
    """One write: ``old`` is None on create; on delete ``new`` is the last state (stamped
    with the deletion's revision) and ``deleted`` is set."""

    key: Key
    old: Obj | None
    new: Obj
    deleted: bool = False


Listener = Callable[[Write], None]


class LocalStore:
    """Objects of every kind a simulation stores as dicts (see the module notes)."""

    def __init__(self, *, uid_factory: Callable[[], str], now: Callable[[], str]) -> None:
        #: the revision of the last change
        self.revision = 0
        self.new_uid = uid_factory
        #: the current time as a timestamp
        self.now = now
        self._by_kind: dict[GroupKind, dict[str, dict[str, Obj]]] = {}
        self._dependents: dict[str, set[Key]] = {}
        self.listeners: list[Listener] = []

    def next_version(self) -> str:
        """Take the next revision, as the ``resourceVersion`` it stamps."""
        self.revision += 1
        return str(self.revision)

    # -- reads ---------------------------------------------------------------------------
    def get(self, key: Key) -> Obj | None:
        return self._by_kind.get(key.group_kind, {}).get(key.namespace, {}).get(key.name)

    def items(self, gk: GroupKind, namespace: str | None = None) -> Iterator[Obj]:
        """Objects of a kind in (namespace, name) order."""
        spaces = self._by_kind.get(gk, {})
        names = [namespace] if namespace is not None else sorted(spaces)
        for ns in names:
            objects = spaces.get(ns, {})
            for name in sorted(objects):
                yield objects[name]

    def namespace_keys(self, namespace: str) -> list[Key]:
        """Every stored object of one namespace (for namespace deletion)."""
        return [Key(gk.group, gk.kind, namespace, name)
                for gk in sorted(self._by_kind) for name in sorted(self._by_kind[gk].get(namespace, {}))]

    def dependents(self, uid: str) -> list[Key]:
        """Objects whose ownerReferences name ``uid``."""
        return sorted(self._dependents.get(uid, ()))

    # -- writes --------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        """Store a new object (``AlreadyExists`` when taken); the store keeps ``obj``'s sub-trees."""
        meta = obj["metadata"]
        group = obj["apiVersion"].rpartition("/")[0]
        key = Key(group, obj["kind"], meta.get("namespace") or "", meta["name"])
        if self.get(key) is not None:
            raise o.already_exists(key)
        return self.write(key, None, obj, body_changed=True)

    def replace(self, key: Key, **fields: Any) -> Obj:
        """Replace top-level fields of a stored object (a controller's update); no-op when equal."""
        live = self.get(key)
        if live is None:
            raise o.not_found(key)
        if all(live.get(name) == value for name, value in fields.items()):
            return live
        new = {**live, **fields}
        body_changed = any(name not in ("metadata", "status") for name in fields)
        return self.write(key, live, new, body_changed=body_changed)

    def write(self, key: Key, live: Obj | None, new: Obj, *, body_changed: bool) -> Obj:
        """Stamp server-owned metadata on a copy of ``new`` (a create keeps a ``uid`` it was given;
        an update moves ``generation`` on when ``body_changed``), store it, tell listeners."""
        meta = dict(new["metadata"])
        if live is None:
            o.stamp_created(meta, uid=meta.get("uid") or self.new_uid(), now=self.now(),
                            version=self.next_version())
        else:
            o.carry_identity(meta, live["metadata"], changed=body_changed)
            meta["resourceVersion"] = self.next_version()
        new = {**new, "metadata": meta}
        self._by_kind.setdefault(key.group_kind, {}).setdefault(key.namespace, {})[key.name] = new
        self._index_owners(key, live, new)
        for listener in self.listeners:
            listener(Write(key, live, new))
        return new

    def remove(self, key: Key) -> Obj | None:
        """Remove one object (no cascade: garbage collection is the caller's)."""
        spaces = self._by_kind.get(key.group_kind, {})
        live = spaces.get(key.namespace, {}).pop(key.name, None)
        if live is None:
            return None
        if not spaces[key.namespace]:
            del spaces[key.namespace]
        self._index_owners(key, live, None)
        self.revision += 1
        gone = o.restamp(live, self.revision)
        for listener in self.listeners:
            listener(Write(key, live, gone, deleted=True))
        return gone

    def _index_owners(self, key: Key, old: Obj | None, new: Obj | None) -> None:
        for ref in owner_uids(old):
            self._dependents.get(ref, set()).discard(key)
            if not self._dependents.get(ref, True):
                del self._dependents[ref]
        for ref in owner_uids(new):
            self._dependents.setdefault(ref, set()).add(key)


def owner_uids(obj: Obj | None) -> list[str]:
    """The uids an object's ``ownerReferences`` name."""
    if obj is None:
        return []
    return [str(ref["uid"]) for ref in obj["metadata"].get("ownerReferences") or [] if ref.get("uid")]


class RevisionLog:
    """The last ``capacity`` changes of one kind, in revision order, for watches that resume.

    Every change after :attr:`start` is kept until evicted: evicting the oldest moves
    ``start`` to its revision, and :meth:`after` a revision below ``start`` is ``Gone``.
    """

    def __init__(self, *, start: int, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a revision log keeps at least one change")
        self.start = start
        self._changes: deque[Change] = deque(maxlen=capacity)
        self._revisions: deque[int] = deque(maxlen=capacity)

    def __len__(self) -> int:
        return len(self._changes)

    def append(self, change: Change) -> None:
        """Keep ``change`` (its revision above every kept one's), evicting the oldest when full."""
        changes = self._changes
        if len(changes) == changes.maxlen:
            self.start = changes[0].revision
        changes.append(change)
        self._revisions.append(change.revision)

    def after(self, revision: int) -> list[Change]:
        """The kept changes after ``revision`` (``Gone`` when some are no longer kept)."""
        if revision < self.start:
            raise gone(revision, self.start)
        first = bisect.bisect_right(self._revisions, revision)
        return list(islice(self._changes, first, None))

    def clear(self) -> None:
        """Forget every change (the log's owner starts over with a log of its own)."""
        self._changes.clear()
        self._revisions.clear()


def gone(revision: int, start: int) -> errors.Gone:
    """What a watch from ``revision`` is told when its log starts after ``start``."""
    return errors.Gone(f"too old resource version: {revision} ({start + 1})")


__all__ = ["Listener", "LocalStore", "Obj", "RevisionLog", "Write", "gone", "owner_uids"]
