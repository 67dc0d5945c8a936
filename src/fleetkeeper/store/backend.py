"""What a storage backend implements: a few primitives behind the :class:`Backend` Protocol.

The :class:`~fleetkeeper.store.core.Store` façade owns every Kubernetes semantic
(revisions, preconditions, generation, finalizers, selectors, watch fan-out, batches);
a backend only keeps records and a bounded history of changes, and commits a group of
changes atomically. That split is what lets ``memory://``, ``sqlite://`` and later
``etcd://`` behave identically: the semantics are written once.

Values passed around:

* :class:`Record` — one stored object state: the serialized JSON (``raw``), the wire
  dict parsed from it (``obj``, parsed lazily and **never mutated** by anyone — the
  façade hands out copies), and its revision;
* :class:`Change` — one committed write, i.e. one watch event: its type, key, the new
  record (for DELETED: the last state stamped with the deletion's revision) and the
  previous record (so a watch with a selector can tell "stopped matching" apart).

Revisions are assigned by the façade, one per change, strictly increasing (without gaps
unless a :class:`ChangeFeed` backend numbers them); ``commit`` receives them in order,
persists objects and history in one transaction, and only then returns (that return is
the acknowledgment). ``expect`` on a change is the revision the façade read the object
at (0: absent); a backend shared by several writers (etcd) must check it and raise
``errors.Conflict``; single-writer backends may rely on the façade's write lock.

A backend shared by several processes (etcd) also implements :class:`ChangeFeed`: the
store itself (not this process) assigns revisions, so the façade asks it which revision
to stamp a change with, its ``commit`` may give a change a later revision than that (it
re-stamps the record in place), and it publishes every change — other processes' too —
to this process's watchers itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import orjson

from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.errors import ApiError
from fleetkeeper.store.interface import EventType


class Key(NamedTuple):
    """Where an object lives: its group, kind, namespace (``""`` if cluster-scoped) and name."""

    group: str
    kind: str
    namespace: str
    name: str

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)


class Record:
    """One stored object state; ``obj`` is shared and must never be mutated."""

    __slots__ = ("_obj", "raw", "revision")

    def __init__(self, raw: bytes, revision: int, obj: dict[str, Any] | None = None) -> None:
        self.raw = raw
        self.revision = revision
        self._obj = obj

    @classmethod
    def of(cls, obj: dict[str, Any], revision: int) -> Record:
        """A record for a freshly built wire dict (which the caller gives up)."""
        return cls(orjson.dumps(obj), revision, obj)

    @property
    def obj(self) -> dict[str, Any]:
        obj = self._obj
        if obj is None:
            obj = self._obj = orjson.loads(self.raw)
        return obj

    def drop_cache(self) -> None:
        """Forget the parsed dict (it is rebuilt from ``raw`` on demand).

        Called once a write is staged or published: parsed trees that outlive a write get
        promoted to the collector's old generation and make full collections frequent.
        """
        self._obj = None

    def copy(self) -> dict[str, Any]:
        """A private deep copy of the wire dict, for handing out."""
        result: dict[str, Any] = orjson.loads(self.raw)
        return result

    def __repr__(self) -> str:
        return f"Record(revision={self.revision}, raw={self.raw[:60]!r}…)"


class Change:
    """One committed write, as a watch event before filtering."""

    __slots__ = ("expect", "key", "prev", "record", "type")

    def __init__(
        self, type: EventType, key: Key, record: Record, prev: Record | None, expect: int = 0
    ) -> None:
        self.type: EventType = type
        self.key = key
        self.record = record
        self.prev = prev
        self.expect = expect

    @property
    def revision(self) -> int:
        return self.record.revision

    def __repr__(self) -> str:
        return f"Change({self.type}, {self.key}, revision={self.revision})"


class Backend(Protocol):
    """Storage primitives; see the module docstring for the division of work."""

    #: the URL scheme this backend serves, e.g. ``"memory"`` or ``"sqlite"``
    name: str

    @property
    def revision(self) -> int:
        """The revision of the last committed change (0 when empty)."""
        ...

    @property
    def compacted(self) -> int:
        """Changes at or below this revision are no longer in the history."""
        ...

    async def get(self, key: Key) -> Record | None:
        """The committed record at ``key``, if any."""
        ...

    async def scan(
        self,
        gk: GroupKind,
        namespace: str | None,
        *,
        after: tuple[str, str] | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        """Committed records of one kind sorted by (namespace, name), strictly after ``after``."""
        ...

    async def commit(self, changes: Sequence[Change]) -> None:
        """Persist ``changes`` (increasing revisions) atomically; return once durable."""
        ...

    async def history(self, since: int, gk: GroupKind | None, namespace: str | None) -> list[Change]:
        """Retained changes with revision > ``since`` (raise ``errors.Gone`` if compacted)."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class ChangeFeed(Protocol):
    """A backend other processes write to as well: it publishes changes itself.

    ``publish`` receives every committed change in revision order — this process's own
    before its ``commit`` returns, other processes' as they arrive — and returns True
    when a watcher's buffer is filling up (the caller should yield). ``fail`` ends every
    open watch with an error (``errors.Gone`` when the backend lost its place in the
    history: clients re-list). The façade calls ``follow`` when it opens and before each
    watch starts; delivery needs a running event loop, so a call only (re)starts it when
    it is not running.

    ``next_revision`` is the revision to stamp a change with: ``after`` is the revision of
    the change staged just before it in the same batch (``None``: it is the first, or
    not in a batch), ``repeat`` whether that batch already changes the same object. The
    numbers strictly increase but may leave gaps.

    ``exists`` tells a create whether its name is taken. It may answer "absent" from the
    changes it has published rather than reading the store (another process's create it
    has not seen yet then fails the create's guarded commit with ``AlreadyExists``); a
    taken name is read from the store.
    """

    def follow(self, publish: Callable[[Sequence[Change]], bool], fail: Callable[[ApiError], None]) -> None:
        ...

    def next_revision(self, after: int | None, *, repeat: bool = False) -> int:
        ...

    async def exists(self, key: Key) -> bool:
        ...


__all__ = ["Backend", "Change", "ChangeFeed", "Key", "Record"]
