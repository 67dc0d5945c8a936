"""The informer's in-memory store: objects by key, plus secondary indices.

Objects are kept by their :attr:`~fleetkeeper.api.meta.Resource.key` (``ns/name``, or
``name`` for cluster-scoped kinds — the same text as ``str(Request)``). An *index* is a
named function from an object to the values it should be found under, e.g. "Works by
the binding that owns them" or "bindings by target cluster"; ``by_index(name, value)``
answers "which objects have this value" without scanning. Indices are maintained on
every put and remove, and an index added late is built over what is already stored.

Results come back sorted by key so callers see the same order on every run. Objects
are shared with the cache, not copied: treat them as read-only and ``deep_copy()``
before changing one.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Generic, TypeVar

from fleetkeeper.api.meta import Resource

T = TypeVar("T", bound=Resource)

#: object → the index values it is found under
IndexFunc = Callable[[T], list[str]]


class Indexer(Generic[T]):
    """Objects by key with named secondary indices."""

    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        self._funcs: dict[str, IndexFunc[T]] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        #: per index, the values each stored key is found under (what a replacement compares to)
        self._values: dict[str, dict[str, tuple[str, ...]]] = {}

    # ------------------------------------------------------------------ reads
    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def keys(self) -> builtins.list[str]:
        return sorted(self._items)

    def list(self) -> builtins.list[T]:
        return [self._items[key] for key in sorted(self._items)]

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        """Objects whose index ``name`` yields ``value``, sorted by key."""
        return [self._items[key] for key in self.index_keys(name, value)]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        """Keys of the objects whose index ``name`` yields ``value``, sorted."""
        index = self._indices.get(name)
        if index is None:
            raise KeyError(f"no index named {name!r}")
        return sorted(index.get(value, ()))

    # ------------------------------------------------------------------ writes
    def add_indexer(self, name: str, fn: IndexFunc[T]) -> None:
        """Add an index; it covers the objects already stored too."""
        if name in self._funcs:
            raise ValueError(f"index {name!r} already exists")
        self._funcs[name] = fn
        self._indices[name] = {}
        self._values[name] = {}
        for key, obj in self._items.items():
            self._index_one(name, key, obj)

    def put(self, obj: T) -> T | None:
        """Store ``obj`` under its key; return the object it replaced, if any."""
        key = obj.key
        old = self._items.get(key)
        self._items[key] = obj
        for name in self._funcs:
            self._index_one(name, key, obj)
        return old

    def remove(self, key: str) -> T | None:
        """Forget the object under ``key``; return it, if there was one."""
        old = self._items.pop(key, None)
        if old is not None:
            for name, index in self._indices.items():
                for value in self._values[name].pop(key, ()):
                    self._drop(index, value, key)
        return old

    # ------------------------------------------------------------------ internals
    def _index_one(self, name: str, key: str, obj: T) -> None:
        """Index ``obj`` under ``key``, moving only the values that differ from the version
        it replaces (most updates change nothing an index looks at)."""
        values = tuple(self._funcs[name](obj))
        stored = self._values[name]
        before = stored.get(key)
        if values == before:
            return
        index = self._indices[name]
        for value in before or ():
            if value not in values:
                self._drop(index, value, key)
        for value in values:
            index.setdefault(value, set()).add(key)
        stored[key] = values

    @staticmethod
    def _drop(index: dict[str, set[str]], value: str, key: str) -> None:
        keys = index.get(value)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del index[value]


__all__ = ["IndexFunc", "Indexer"]
