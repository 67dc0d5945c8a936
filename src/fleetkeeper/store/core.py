"""The Store façade: Kubernetes storage semantics written once, over any :class:`Backend`.

Every write runs as one short critical section under the store's write lock: read the
current record, check preconditions, build the new object (:mod:`.objects`), take the
next revision, commit to the backend, then publish to watchers (:mod:`.watch`). A write
is acknowledged — its coroutine returns — only after the backend's commit returned, so
an acknowledged write survives a crash of a durable backend, and watchers never see a
change that could still be rolled back.

``batch()`` holds the write lock for the duration of a block: writes made inside by the
task that opened it are staged (an overlay that this task's reads see), committed to
the backend as one transaction when the block ends, and published only then. An
exception inside the block discards them all, revisions included. Other tasks keep
reading committed state and wait to write.

State is stored as the JSON bytes serialized before a write returns, so a caller may
mutate its input afterwards; returned objects and watch events are private copies parsed
from those bytes (the copying cost lands on each reader, never on the writer). Parsed
caches are dropped once a write is published, keeping long-lived state out of reach of
Python's cyclic garbage collector — the dominant cost at scale otherwise.

A create or an update (not a delete) whose encoded object is over
:data:`~fleetkeeper.api.limits.MAX_OBJECT_BYTES` is refused with ``413`` before anything
is staged — the length of the bytes the snapshot encodes anyway, so every writer (the API
server, dry runs, controllers through the local client) is held to it at no extra cost.

``uid_factory`` makes uids (and generated names) deterministic in simulations; times come
from the injected clock.

A backend shared by several processes (a :class:`~.backend.ChangeFeed`, i.e. etcd) is
the one place that sees every process's writes, so there the façade does not publish:
the backend feeds this process's watchers itself, in its revision order, its own
writes before their commit returns. Such a backend also numbers the changes: the façade
stamps each with the revision the backend plans for it (strictly increasing, not
necessarily consecutive), and the backend assigns the final one at commit (another
process may have written first). And it says whether a name is taken before a create
(``exists``): it may answer from what it has seen, as the create's commit is guarded
anyway — a name another process took meanwhile fails that commit with AlreadyExists.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.base import format_time
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.api.selectors import parse_field_selector, parse_label_selector
from fleetkeeper.clock import Clock
from fleetkeeper.store import objects as o
from fleetkeeper.store.backend import Backend, Change, ChangeFeed, Key, Record
from fleetkeeper.store.interface import EventType, ListResult, Watch
from fleetkeeper.store.listing import Lister, decode_continue, encode_continue
from fleetkeeper.store.watch import Hub, StoreWatch


def _uuid4() -> str:
    return str(uuid.uuid4())


class _Batch:
    """Writes staged by one task inside ``Store.batch()``."""

    __slots__ = ("changes", "overlay", "owner")

    def __init__(self, owner: asyncio.Task[Any] | None) -> None:
        self.owner = owner
        self.changes: list[Change] = []
        self.overlay: dict[Key, Record | None] = {}

    def add(self, change: Change) -> None:
        _drop_caches((change,))  # the parsed cache may also share values with the caller's input
        self.changes.append(change)
        self.overlay[change.key] = None if change.type == "DELETED" else change.record


class _Guard:
    """``async with store._guard()``: the write lock, re-entered freely by a batch's owner."""

    __slots__ = ("locked", "store")

    def __init__(self, store: Store) -> None:
        self.store = store
        self.locked = False

    async def __aenter__(self) -> None:
        if self.store._owned_batch() is None:
            await self.store._lock.acquire()
            self.locked = True

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.locked:
            self.store._lock.release()


class Store:
    """The façade every caller uses (it implements ``StoreProtocol``)."""

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Clock,
        uid_factory: Callable[[], str] | None = None,
        watch_queue: int = 10_000,
    ) -> None:
        self._backend = backend
        self._clock = clock
        self._uid = uid_factory or _uuid4
        self._hub = Hub(max(1, watch_queue))
        self._lister = Lister(backend)
        self._lock = asyncio.Lock()
        self._batch: _Batch | None = None
        #: the record of the last shared read, whose parse the write that usually follows reuses
        self._hint: tuple[Key, Record] | None = None
        self._assigned = backend.revision  # the last revision handed to a change
        self._closed = False
        self._feed = backend if isinstance(backend, ChangeFeed) else None
        if self._feed is not None:
            self._feed.follow(self._publish_fed, self._hub.fail_all)

    # ---------------------------------------------------------------- introspection
    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def revision(self) -> int:
        """The revision of the last committed write."""
        return self._backend.revision

    @property
    def watchers(self) -> int:
        """How many watches are open."""
        return len(self._hub)

    # ---------------------------------------------------------------- reads
    async def get(self, gk: GroupKind, namespace: str, name: str, *, shared: bool = False) -> dict[str, Any]:
        key = Key(gk.group, gk.kind, namespace, name)
        record = await self._read(key)
        if record is None:
            raise o.not_found(key)
        if not shared:
            return record.copy()
        self._hint = (key, record)
        return record.obj

    async def list(
        self,
        gk: GroupKind,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListResult:
        labels = parse_label_selector(label_selector) if label_selector else ()
        fields = parse_field_selector(field_selector) if field_selector else ()
        revision, after = self.revision, None
        if continue_token:
            revision, after = decode_continue(continue_token)
            if not 0 <= revision <= self.revision:
                raise errors.BadRequest(f"invalid continue token {continue_token!r}: revision {revision} "
                                        f"is not one this store has reached ({self.revision})")
        batch = self._owned_batch()
        overlay = None
        if batch is not None:
            overlay = {k: r for k, r in batch.overlay.items() if k.group_kind == gk}
        elif revision < self.revision:  # a later page: the state of the first page's revision
            overlay = await self._as_of(revision, gk, namespace)
        items, last = await self._lister.page(gk, namespace, labels, fields, after=after,
                                              limit=limit if limit and limit > 0 else None, overlay=overlay)
        token = encode_continue(revision, last) if last is not None else None
        return ListResult(items=items, revision=revision, continue_token=token)

    async def _as_of(self, revision: int, gk: GroupKind, namespace: str | None) -> dict[Key, Record | None]:
        """What changed since ``revision``, as the records to list instead (``None``: absent
        then): a continued list shows the state its first page was cut from, as Kubernetes
        does, or is ``Gone`` once that state has left the history."""
        try:
            changes = await self._backend.history(revision, gk, namespace)
        except errors.Gone:
            raise errors.Gone(
                f"the continue token of revision {revision} is too old to list a consistent result; "
                "list again without it") from None
        overlay: dict[Key, Record | None] = {}
        for change in changes:
            if change.key not in overlay:  # the first change after the revision says what was there
                overlay[change.key] = (None if change.type == "ADDED"
                                       else change.prev if change.prev is not None else change.record)
        return overlay

    # ---------------------------------------------------------------- writes
    async def create(
        self, obj: dict[str, Any], *, shared: bool = False, dry_run: bool = False
    ) -> dict[str, Any]:
        """Store a new object; ``dry_run``: every check and the system metadata a create fills,
        nothing stored (no ``resourceVersion``, as kube-apiserver answers a dry run)."""
        new = o.copy_in(obj)
        async with _Guard(self):
            key = await self._claim_name(new)
            if dry_run:
                o.prepare_create(new, uid=self._uid(), now=self._now(), revision=0)
                del new["metadata"]["resourceVersion"]
                o.check_size(key, o.encoded(new))
                return new
            revision = self._next_revision(key)
            o.prepare_create(new, uid=self._uid(), now=self._now(), revision=revision)
            change = Change("ADDED", key, o.snapshot(new, revision), None)
            o.check_size(key, change.record.raw)
            await self._apply(change)
        return new if shared and change.record.revision == revision else change.record.copy()

    async def update(
        self, obj: dict[str, Any], *, subresource: str | None = None, shared: bool = False,
        with_status: bool = False, dry_run: bool = False,
    ) -> dict[str, Any]:
        """Write an existing object; ``dry_run``: every check, and the object as it would be
        stored (system metadata kept, generation bumped), at its current ``resourceVersion``."""
        if subresource not in (None, "status", "finalize"):
            raise errors.BadRequest(f"unknown subresource {subresource!r}")
        if subresource == "finalize" and (obj.get("apiVersion"), obj.get("kind")) != ("v1", "Namespace"):
            raise errors.BadRequest("only a Namespace has the finalize subresource")
        new = o.copy_in(obj)
        key = o.key_of(new)
        async with _Guard(self):
            current = await self._read(key)
            if current is None:
                raise o.not_found(key)
            wanted = new["metadata"].get("resourceVersion")
            if wanted and wanted != str(current.revision):
                raise o.conflict(key, o.STALE)
            old = current.obj
            if subresource == "status":
                result = o.prepare_status_update(new, old)
            elif subresource == "finalize":
                result = o.prepare_finalize_update(new, old)
            else:
                result = o.prepare_update(new, old, key, with_status=with_status)
            result["metadata"]["resourceVersion"] = str(current.revision)
            if dry_run:
                o.check_size(key, o.encoded(result), current)
                return result
            if o.same_content(result, old):
                return old if shared else current.copy()
            revision = self._next_revision(key)
            result["metadata"]["resourceVersion"] = str(revision)
            kind: EventType = "DELETED" if o.is_finished(result) else "MODIFIED"
            change = Change(kind, key, o.snapshot(result, revision), current, current.revision)
            if kind == "MODIFIED":
                o.check_size(key, change.record.raw, current)
            await self._apply(change)
        # a shared backend may restamp the record at commit: then the stored bytes are the truth
        return result if shared and change.record.revision == revision else change.record.copy()

    async def delete(
        self,
        gk: GroupKind,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
    ) -> dict[str, Any]:
        key = Key(gk.group, gk.kind, namespace, name)
        async with _Guard(self):
            current = await self._read(key)
            if current is None:
                raise o.not_found(key)
            meta = current.obj["metadata"]
            if uid and uid != meta.get("uid"):
                raise o.conflict(key, f"Precondition failed: UID in precondition: {uid}, "
                                      f"UID in object meta: {meta.get('uid')}")
            if resource_version and resource_version != str(current.revision):
                raise o.conflict(key, o.STALE)
            revision = self._next_revision(key)
            if o.held(current.obj):
                if meta.get("deletionTimestamp"):
                    return current.copy()
                held = o.restamp(o.mark_deleting(current.obj, now=self._now()), revision)
                change = Change("MODIFIED", key, o.snapshot(held, revision), current, current.revision)
            else:
                last = o.restamp(current.obj, revision)
                change = Change("DELETED", key, o.snapshot(last, revision), current, current.revision)
            await self._apply(change)
        return change.record.copy()

    @asynccontextmanager
    async def batch(self) -> AsyncIterator[None]:
        """Group the writes made inside (by this task) into one backend transaction."""
        if self._owned_batch() is not None:
            yield  # nested: part of the enclosing batch
            return
        await self._lock.acquire()
        batch = self._batch = _Batch(asyncio.current_task())
        try:
            try:
                yield
            finally:
                self._batch = None
            if batch.changes:
                await self._commit(batch.changes)
        except BaseException:
            self._assigned = self._backend.revision
            raise
        finally:
            self._lock.release()
        if batch.changes and self._feed is None:
            pressure = self._hub.publish(batch.changes)
            _drop_caches(batch.changes)
            if pressure:
                await asyncio.sleep(0)

    # ---------------------------------------------------------------- watch
    def watch(
        self,
        gk: GroupKind | None,
        namespace: str | None = None,
        *,
        since: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        labels = parse_label_selector(label_selector) if label_selector else ()
        fields = parse_field_selector(field_selector) if field_selector else ()
        current = self.revision
        if since is None or since < 0:
            since = current
        compacted = self._backend.compacted
        if since < compacted:
            raise errors.Gone(f"too old resource version: {since} ({compacted + 1})")
        sub = self._hub.subscribe(gk, namespace, labels, fields, since=since)
        if self._feed is not None and not self._closed:
            self._feed.follow(self._publish_fed, self._hub.fail_all)
        if self._closed:
            sub.close()
        backend = self._backend

        async def history() -> list[Change]:
            return await backend.history(since, gk, namespace)

        return StoreWatch(sub, history if since < current else None)

    async def close(self) -> None:
        """End every watch and release the backend."""
        if self._closed:
            return
        self._closed = True
        self._hub.close_all()
        async with self._lock:
            await self._backend.close()

    # ---------------------------------------------------------------- internals
    def _owned_batch(self) -> _Batch | None:
        batch = self._batch
        if batch is not None and batch.owner is asyncio.current_task():
            return batch
        return None

    def _now(self) -> str:
        return format_time(self._clock.now())

    async def _read(self, key: Key) -> Record | None:
        batch = self._batch
        if batch is not None and key in batch.overlay and batch.owner is asyncio.current_task():
            return batch.overlay[key]
        record = await self._backend.get(key)
        hint = self._hint
        if hint is not None and record is not None and hint[0] == key and hint[1].revision == record.revision:
            return hint[1]  # the same state, already parsed
        return record

    async def _claim_name(self, new: dict[str, Any]) -> Key:
        meta = new["metadata"]
        prefix = meta.get("generateName")
        if meta.get("name") or not prefix:
            key = o.key_of(new)
            if await self._exists(key):
                raise o.already_exists(key)
            return key
        for _ in range(8):
            meta["name"] = o.generated_name(str(prefix), self._uid())
            key = o.key_of(new)
            if not await self._exists(key):
                return key
        raise o.already_exists(key)

    async def _exists(self, key: Key) -> bool:
        """Whether an object is at ``key``, before creating it (a shared backend's commit checks again)."""
        batch = self._batch
        if batch is not None and key in batch.overlay and batch.owner is asyncio.current_task():
            return batch.overlay[key] is not None
        if self._feed is not None:
            return await self._feed.exists(key)
        return await self._backend.get(key) is not None

    def _next_revision(self, key: Key) -> int:
        """The revision to stamp the next change (of ``key``) with."""
        if self._feed is None:
            return self._assigned + 1
        batch = self._owned_batch()
        if batch is None or not batch.changes:
            return self._feed.next_revision(None)
        return self._feed.next_revision(batch.changes[-1].revision, repeat=key in batch.overlay)

    async def _apply(self, change: Change) -> None:
        self._assigned = change.revision
        batch = self._owned_batch()
        if batch is not None:
            batch.add(change)
            return
        await self._commit((change,))
        pressure = self._hub.publish((change,)) if self._feed is None else False
        _drop_caches((change,))
        if pressure:
            await asyncio.sleep(0)

    async def _commit(self, changes: Sequence[Change]) -> None:
        if self._closed:
            raise errors.InternalError("the store is closed")
        try:
            await self._backend.commit(changes)
        except BaseException:
            self._assigned = self._backend.revision
            raise
        self._assigned = max(self._assigned, self._backend.revision)

    def _publish_fed(self, changes: Sequence[Change]) -> bool:
        """What a :class:`ChangeFeed` backend calls with committed changes (see the module docstring)."""
        pressure = self._hub.publish(changes)
        _drop_caches(changes)
        return pressure


def _drop_caches(changes: Sequence[Change]) -> None:
    for change in changes:
        change.record.drop_cache()
        if change.prev is not None:
            change.prev.drop_cache()


__all__ = ["Store"]
