"""The informer: a list+watch cache of one kind, and the source of controller events.

An informer keeps an up-to-date, indexed copy of the objects of one model type
(optionally one namespace, optionally a label/field selector) and tells its handlers
about every change. It follows client-go's reflector:

1. **list** — read every object and the revision the list was read at; *replace* the
   cache with it, reporting the difference to handlers (new → add, changed
   resourceVersion → update, missing → delete). After the first list the informer
   has synced (:meth:`wait_for_sync`).
2. **watch from that revision** — the store streams every later change in revision
   order with no gaps, so nothing that happened between the list and the watch is
   lost. Each event updates the cache first, then the handlers, and advances the
   remembered revision (bookmarks only advance it).
3. **restart** — when a watch ends cleanly the informer resumes watching from the last
   revision it saw (no re-list needed: nothing was missed). When the watch answers
   :class:`~fleetkeeper.errors.Gone` (410: the revision was compacted) or fails in any
   other way, the cache may be stale, so it **re-lists** — the replace step turns
   whatever changed meanwhile into the right add/update/delete events. Every restart
   waits a :class:`~fleetkeeper.runtime.backoff.Backoff` delay (0.8 s doubling to
   30 s) so a broken server is not hammered.

Handlers run synchronously inside the informer's task, in registration order; a
handler that raises is logged and does not stop the others or the informer. A handler
added to an informer that already holds objects is first replayed an add for each of
them, so a late controller sees the same world as an early one.

Cached objects are shared, not copied: read-only for callers (``deep_copy()`` first).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator
from typing import Any, Generic, Protocol, TypeVar

import structlog
from structlog.typing import FilteringBoundLogger

from fleetkeeper import errors
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.interface import Reader, Watcher, WatchEvent
from fleetkeeper.clock import Clock
from fleetkeeper.runtime.backoff import Backoff
from fleetkeeper.runtime.handler import EventHandler
from fleetkeeper.runtime.indexer import Indexer, IndexFunc

T = TypeVar("T", bound=Resource)

#: objects changed in place while cached, when :func:`guard_cache` turned the check on
_changed: builtins.list[str] | None = None


def guard_cache(on: bool = True) -> builtins.list[str]:
    """Check that cached objects stay as they were delivered (a debugging and test aid).

    While on, every informer remembers each object's content as it enters the cache and
    compares it when the object leaves (replaced or deleted); what differs is listed in
    the returned list. Costs an encoding per event: not for production."""
    global _changed
    _changed = [] if on else None
    return _changed if _changed is not None else []


class ListWatcher(Reader, Watcher, Protocol):
    """The part of a client an informer needs."""


class Informer(Generic[T]):
    """A synced, indexed cache of one kind that reports changes to handlers."""

    def __init__(
        self,
        client: ListWatcher,
        model: type[T],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        clock: Clock,
        logger: FilteringBoundLogger | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.model = model
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self._client = client
        self._clock = clock
        self._backoff = backoff if backoff is not None else Backoff(clock=clock)
        base: FilteringBoundLogger = logger if logger is not None else structlog.get_logger("fleetkeeper")
        self._log = base.bind(informer=model.KIND or model.__name__, namespace=namespace)
        self._store: Indexer[T] = Indexer()
        self._handlers: builtins.list[EventHandler[T]] = []
        self._synced = asyncio.Event()
        self._resource_version: str | None = None
        #: content of each cached object as delivered, while :func:`guard_cache` is on (with the
        #: list of that guard: an entry from an earlier guard may predate puts made while off)
        self._delivered: dict[str, tuple[builtins.list[str], dict[str, Any]]] = {}
        #: how many times the informer has listed (1 after the first sync); for tests and metrics
        self.lists = 0

    # ------------------------------------------------------------------ cache reads
    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        """Return once the first list has been loaded."""
        await self._synced.wait()

    @property
    def resource_version(self) -> str | None:
        """The last revision the cache reflects."""
        return self._resource_version

    def get(self, key: str) -> T | None:
        """The cached object under ``key`` (``ns/name`` or ``name``; ``str(request)`` works)."""
        return self._store.get(key)

    def list(self) -> builtins.list[T]:
        """Every cached object, sorted by key."""
        return self._store.list()

    def keys(self) -> builtins.list[str]:
        return self._store.keys()

    def add_indexer(self, name: str, fn: IndexFunc[T]) -> None:
        """Index the cache by ``fn``'s values (see :class:`~fleetkeeper.runtime.indexer.Indexer`)."""
        self._store.add_indexer(name, fn)

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        """Cached objects whose index ``name`` yields ``value``, sorted by key."""
        return self._store.by_index(name, value)

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        """Keys of the cached objects whose index ``name`` yields ``value``, sorted."""
        return self._store.index_keys(name, value)

    def add_handler(self, handler: EventHandler[T]) -> None:
        """Report changes to ``handler``; objects already cached are replayed as adds."""
        self._handlers.append(handler)
        for obj in self._store.list():
            self._call(handler.on_add, obj)

    def remove_handler(self, handler: EventHandler[T]) -> None:
        """Stop reporting changes to ``handler`` (one added with :meth:`add_handler`); a change
        being reported right now still reaches it."""
        self._handlers.remove(handler)

    # ------------------------------------------------------------------ the loop
    async def run(self) -> None:
        """List, then watch, forever (until cancelled); re-list when the watch is lost."""
        while True:
            try:
                await self._list()
                while True:
                    await self._watch()
                    await self._clock.sleep(self._backoff.next())
            except errors.Gone:
                self._log.info("watch expired; re-listing", resource_version=self._resource_version)
            except Exception as exc:
                self._log.warning("list/watch failed; re-listing", error=repr(exc))
            await self._clock.sleep(self._backoff.next())

    async def _list(self) -> None:
        result = await self._client.list(
            self.model, self.namespace, label_selector=self.label_selector, field_selector=self.field_selector
        )
        self.lists += 1
        self._replace(result.items)
        self._resource_version = result.resource_version
        if not self._synced.is_set():
            self._log.debug("synced", objects=len(self._store), resource_version=result.resource_version)
            self._synced.set()

    async def _watch(self) -> None:
        """Apply one watch stream's events until it ends (raises what the stream raises)."""
        stream = self._client.watch(
            self.model, self.namespace, resource_version=self._resource_version,
            label_selector=self.label_selector, field_selector=self.field_selector,
        )
        try:
            async for event in stream:
                self._apply(event)
        finally:
            await _close(stream)

    # ------------------------------------------------------------------ cache writes
    def _replace(self, items: builtins.list[T]) -> None:
        seen: set[str] = set()
        for obj in items:
            key = obj.key
            seen.add(key)
            old = self._store.get(key)
            if old is None:
                self._put(obj)
                self._notify_add(obj)
            elif old.metadata.resource_version != obj.metadata.resource_version:
                self._put(obj)
                self._notify_update(old, obj)
        for key in sorted(set(self._store.keys()) - seen):
            gone = self._remove(key)
            assert gone is not None
            self._notify_delete(gone)

    def _apply(self, event: WatchEvent[T]) -> None:
        obj = event.object
        if event.type == "DELETED":
            self._remove(obj.key)
            self._notify_delete(obj)
        elif event.type in ("ADDED", "MODIFIED"):
            old = self._put(obj)
            if old is None:
                self._notify_add(obj)
            else:
                self._notify_update(old, obj)
        if obj.metadata.resource_version:
            self._resource_version = obj.metadata.resource_version

    def _put(self, obj: T) -> T | None:
        old = self._store.put(obj)
        if _changed is not None:
            if old is not None:
                self._check(old)
            self._delivered[obj.key] = (_changed, obj.to_dict())
        return old

    def _remove(self, key: str) -> T | None:
        old = self._store.remove(key)
        if _changed is not None and old is not None:
            self._check(old)
        return old

    def _check(self, old: T) -> None:
        assert _changed is not None
        delivered = self._delivered.pop(old.key, None)
        if delivered is not None and delivered[0] is _changed and delivered[1] != old.to_dict():
            _changed.append(f"{self.model.KIND} {old.key} resourceVersion "
                            f"{old.metadata.resource_version} was changed in place while cached")

    def _notify_add(self, obj: T) -> None:
        for handler in tuple(self._handlers):
            self._call(handler.on_add, obj)

    def _notify_update(self, old: T, new: T) -> None:
        for handler in tuple(self._handlers):
            self._call(handler.on_update, old, new)

    def _notify_delete(self, obj: T) -> None:
        for handler in tuple(self._handlers):
            self._call(handler.on_delete, obj)

    def _call(self, method: Any, *objs: T) -> None:
        try:
            method(*objs)
        except Exception as exc:
            self._log.error("event handler failed", handler=repr(method), error=repr(exc), exc_info=exc)


async def _close(stream: AsyncIterator[Any]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


__all__ = ["Informer", "ListWatcher"]
