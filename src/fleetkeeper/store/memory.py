"""The ``memory://`` backend: records in dicts, history in a list. For tests and simulations.

Nothing survives the process. Objects are kept as their JSON bytes plus revision, in
plain tuples: bytes and tuples of untracked values are invisible to Python's cyclic
garbage collector, so a store of a hundred thousand objects costs the collector nothing
(keeping parsed dicts made full collections dominate write time). :class:`Record`
wrappers are made on the way out, so a caller's parsed cache never sticks to storage.

Records are grouped per kind; a kind's sorted key list is rebuilt lazily after an
object is added or removed, so lists stay ordered without sorting on every write. The
history keeps at least ``history`` changes and is trimmed in steps of a tenth of that,
so trimming costs are amortised. Revisions are contiguous, so finding where a resumed
watch starts is an index computation.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.interface import EventType

#: one retained change: type, key (a plain tuple: the collector untracks those, not NamedTuples),
#: body, revision, previous body, previous revision
_Past = tuple[EventType, tuple[str, str, str, str], bytes, int, bytes | None, int]


class _Kind:
    """The records of one group-kind, with a lazily sorted key list."""

    __slots__ = ("records", "sorted_keys")

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], tuple[bytes, int]] = {}
        self.sorted_keys: list[tuple[str, str]] | None = None

    def keys(self) -> list[tuple[str, str]]:
        keys = self.sorted_keys
        if keys is None:
            keys = self.sorted_keys = sorted(self.records)
        return keys


class MemoryBackend:
    """Process-local storage; see the module docstring."""

    name = "memory"

    def __init__(self, *, history: int = 10_000) -> None:
        if history < 1:
            raise ValueError("history must keep at least one change")
        self._kinds: dict[tuple[str, str], _Kind] = {}
        self._history: list[_Past] = []
        self._keep = history
        self._slack = history // 10
        self._revision = 0
        self._compacted = 0

    @property
    def revision(self) -> int:
        return self._revision

    @property
    def compacted(self) -> int:
        return self._compacted

    async def get(self, key: Key) -> Record | None:
        kind = self._kinds.get((key.group, key.kind))
        if kind is None:
            return None
        stored = kind.records.get((key.namespace, key.name))
        return None if stored is None else Record(*stored)

    async def scan(
        self,
        gk: GroupKind,
        namespace: str | None,
        *,
        after: tuple[str, str] | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        kind = self._kinds.get(gk)
        if kind is None:
            return []
        keys = kind.keys()
        if namespace is not None:
            lo = bisect.bisect_left(keys, (namespace, ""))
            hi = bisect.bisect_left(keys, (namespace + "\x00", ""))
        else:
            lo, hi = 0, len(keys)
        if after is not None:
            lo = max(lo, bisect.bisect_right(keys, after))
        if limit is not None:
            hi = min(hi, lo + limit)
        records = kind.records
        return [Record(*records[k]) for k in keys[lo:hi]]

    async def commit(self, changes: Sequence[Change]) -> None:
        if not changes:
            return
        expected = self._revision + 1
        for change in changes:
            if change.revision != expected:
                raise errors.InternalError(f"revision {change.revision} committed out of order "
                                           f"(expected {expected})")
            expected += 1
        history = self._history
        for change in changes:
            self._apply(change)
            prev = change.prev
            key = change.key
            history.append((change.type, (key.group, key.kind, key.namespace, key.name),
                            change.record.raw, change.record.revision,
                            None if prev is None else prev.raw, 0 if prev is None else prev.revision))
        self._revision = changes[-1].revision
        self._trim()

    def _apply(self, change: Change) -> None:
        key = change.key
        gk = (key.group, key.kind)
        kind = self._kinds.get(gk)
        if kind is None:
            kind = self._kinds[gk] = _Kind()
        records = kind.records
        name = (key.namespace, key.name)
        if change.type == "DELETED":
            if records.pop(name, None) is not None:
                kind.sorted_keys = None
            if not records:
                del self._kinds[gk]
            return
        if name not in records:
            kind.sorted_keys = None
        records[name] = (change.record.raw, change.record.revision)

    def _trim(self) -> None:
        excess = len(self._history) - self._keep
        if excess > self._slack:
            del self._history[:excess]
            self._compacted = self._history[0][3] - 1

    async def history(self, since: int, gk: GroupKind | None, namespace: str | None) -> list[Change]:
        if since < self._compacted:
            raise errors.Gone(f"too old resource version: {since} ({self._compacted + 1})")
        start = max(0, since - self._compacted)
        return [
            Change(kind, Key(*key), Record(raw, revision),
                   None if prev is None else Record(prev, prev_revision))
            for kind, key, raw, revision, prev, prev_revision in self._history[start:]
            if (gk is None or (key[0], key[1]) == gk) and (namespace is None or key[2] == namespace)
        ]

    async def close(self) -> None:
        self._kinds.clear()
        self._history.clear()





def open_backend(location: str, options: dict[str, str], *, history: int) -> MemoryBackend:
    """Build the backend for ``memory://`` (no location, no options)."""
    if location or options:
        raise ValueError(f"memory:// takes no path or options, got {location!r} {options!r}")
    return MemoryBackend(history=history)

__all__ = ["MemoryBackend", "open_backend"]
