"""The ``etcd://host:port[,host:port…][?prefix=/fleetkeeper]`` backend: one store, many processes.

Several control-plane processes can share one etcd (3.4+): each opens this backend, and
etcd is the single source of truth for objects, revisions and changes. Keys, values and
how a ``resourceVersion`` is made of an etcd revision and a slot are in
:mod:`.etcd_layout`; how changes reach watchers (this process's and other processes'
alike) and how much history is kept in :mod:`.etcd_feed`. This module does the I/O.

**Writes.** A commit — one write, or a ``store.batch()`` — becomes as few etcd
transactions as possible: consecutive changes share one while they fit (at most
:data:`~.etcd_layout.TXN_CHANGES`, no object twice), each change guarded by
compare-and-swap — a create requires the key to be absent, an update or delete requires
its ``mod_revision`` to be the one the façade read. The backend plans this as the façade
stages changes (:meth:`EtcdBackend.next_revision`): each change is stamped with the
etcd revision its transaction will most likely get and its slot in it, and ``commit``
groups the changes by that stamp. etcd refusing a transaction as too large or as too
many operations splits it in two. When a guard fails, the transaction's changes are
committed one by one instead (each in its own transaction, keeping its slot), so the
change that lost a race raises ``AlreadyExists``/``Conflict``/``NotFound`` while the
others commit — each change is atomic, a batch is not: a crash or a conflict part-way
leaves the committed changes committed and published; later changes of an object whose
change failed are not attempted (they built on it), and ``commit`` raises the first
failure once the rest is committed.

If another process wrote first, etcd's revision is later than the stamp and ``commit``
re-stamps the records — objects a batch handed out before committing may then carry a
stale version, which only makes their next write conflict; so may those of a
transaction etcd made the backend split.

**Creates** ask first whether their name is taken (:meth:`EtcdBackend.exists`): rather
than one etcd read per create, the backend lists a (group, kind, namespace) space's
keys once and the feed keeps that list current (:class:`~.etcd_feed.Presence`). A
taken name is confirmed by reading etcd; "absent" can only be stale by a create of
another process the feed has not delivered yet, which the create's guard refuses at
commit — for a create in a batch, ``AlreadyExists`` then comes when the batch commits
rather than from the create call.

**Reads.** ``get`` is a linearizable read of the latest value; ``scan`` reads at the
etcd revision holding the revision the feed delivered, so a list's items match the
revision it reports, at most :data:`CHUNK` keys per request. **Retention** is etcd
compaction (:class:`~.etcd_feed.Retention`): once more than a tenth of ``history``
changes dropped out of the last ``history``, a commit compacts etcd below them; other
processes may compact too.

Everything runs on the caller's event loop with gRPC deadlines, never loop timers (a
virtual clock would fire those at once — and time may jump while etcd answers, so
simulations belong on memory:// or sqlite://). A request made while etcd is unreachable
waits up to :data:`REQUEST_TIMEOUT` and is re-sent if the connection broke under it,
so an etcd restart delays writes instead of failing them. Opening reads the revision
key synchronously (failing at once when etcd is not there), so ``store.revision`` is
right before anything is awaited; like sqlite, opening does I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import grpc  # type: ignore[import-untyped]
import structlog
from aetcd import rpc

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store import objects as o
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.etcd_feed import Compacted, Delivery, Presence, Retention, decode_events, space_of
from fleetkeeper.store.etcd_layout import (
    DEFAULT_PREFIX,
    SLOTS,
    TXN_CHANGES,
    Layout,
    decode_mark,
    decode_record,
    encode_mark,
    encode_value,
    etcd_revision,
    grpc_target,
    parse_endpoints,
    restamp,
    store_revision,
)

#: seconds for one request, and for connecting at open (gRPC deadlines: real time)
REQUEST_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0
#: seconds a history replay may take
HISTORY_TIMEOUT = 120.0
#: keys per range request
CHUNK = 1000
#: sends of a request whose connection broke
ATTEMPTS = 3
#: consecutive feed stream failures before the feed stops (it restarts on next use)
FEED_ATTEMPTS = 8
#: names the feed keeps current for creates (see :class:`~.etcd_feed.Presence`)
PRESENCE_NAMES = 100_000

_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 256 * 1024 * 1024),
]

#: a request waits for a connection (etcd restarting, a leader election) up to its deadline
_PATIENT: dict[str, Any] = {"timeout": REQUEST_TIMEOUT, "wait_for_ready": True}

#: what a change that lost a race (or cannot be stored) raises; its batch's other changes still commit
_LOST = (errors.AlreadyExists, errors.Conflict, errors.NotFound, errors.RequestEntityTooLarge)

_log = structlog.get_logger("fleetkeeper.store.etcd")

Publish = Callable[[Sequence[Change]], bool]
Fail = Callable[[errors.ApiError], None]


def _mapped(exc: BaseException) -> errors.ApiError:
    """The API error for a failed etcd request."""
    if isinstance(exc, errors.ApiError):
        return exc
    if not isinstance(exc, grpc.aio.AioRpcError):
        return errors.InternalError(f"etcd: {exc!r}")
    details = exc.details() or ""
    if _too_large(exc):
        return errors.RequestEntityTooLarge(f"etcd: {details}")
    return errors.InternalError(f"etcd: {exc.code().name}: {details}")


def _too_large(exc: grpc.aio.AioRpcError) -> bool:
    """Whether etcd refused a request for its bytes (its own limit, or its gRPC server's)."""
    details = exc.details() or ""
    return "request is too large" in details or (
        exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details)


def _too_big(exc: grpc.aio.AioRpcError) -> bool:
    """Whether etcd refused a transaction for its size (bytes, or operations beyond ``--max-txn-ops``)."""
    return _too_large(exc) or "too many operations" in (exc.details() or "")


class _Write(NamedTuple):
    """One change as sent to etcd."""

    change: Change
    key: bytes
    value: bytes
    #: the ``mod_revision`` it requires (0: the key must be absent)
    expect: int
    slot: int


def _transactions(changes: Sequence[Change]) -> Iterator[list[Change]]:
    """``changes`` in runs sharing a transaction: one stamped etcd revision, rising slots, no key twice."""
    run: list[Change] = []
    keys: set[Key] = set()
    for change in changes:
        if run:
            last = run[-1].revision
            if (etcd_revision(change.revision) != etcd_revision(last) or change.revision <= last
                    or change.key in keys or len(run) >= TXN_CHANGES):
                yield run
                run, keys = [], set()
        run.append(change)
        keys.add(change.key)
    if run:
        yield run


class EtcdBackend:
    """A store in etcd; see the module docstring."""

    name = "etcd"

    def __init__(self, endpoints: list[tuple[str, int]], *, prefix: str = DEFAULT_PREFIX,
                 history: int = 10_000) -> None:
        if history < 1:
            raise ValueError("history must keep at least one change")
        self.target = grpc_target(endpoints)
        self.layout = Layout(prefix)
        self._compacted = 0  # etcd revision compacted to (as far as this process knows)
        self._revision, self._start = self._bootstrap()
        self._head = self._start  # the latest etcd revision seen: the next transaction's is likely one more
        self._retention = Retention(history, history // 10, self._start)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._channel: Any = None
        self._kv: Any = None
        self._watch: Any = None
        self._publish: Publish | None = None
        self._fail: Fail | None = None
        self._feed: asyncio.Task[None] | None = None
        self._delivery = Delivery()
        self._presence = Presence(PRESENCE_NAMES)
        self._closed = False

    @property
    def revision(self) -> int:
        return self._revision

    @property
    def compacted(self) -> int:
        # a delete at the compaction revision itself may be gone: history is whole from the next one
        return store_revision(self._compacted + 1) if self._compacted else 0

    # ---------------------------------------------------------------- connection
    def _bootstrap(self) -> tuple[int, int]:
        """(store revision, etcd head) read synchronously at open."""
        channel = grpc.insecure_channel(self.target, options=_OPTIONS)
        try:
            reply = rpc.KVStub(channel).Range(rpc.RangeRequest(key=self.layout.revision_key),
                                              timeout=CONNECT_TIMEOUT)
        except grpc.RpcError as exc:
            raise ConnectionError(f"cannot reach etcd at {self.target}: {exc.code().name}: "
                                  f"{exc.details()}") from None
        finally:
            channel.close()
        return self._marked(reply), int(reply.header.revision)

    @staticmethod
    def _marked(reply: Any) -> int:
        """The store revision a range reply of the revision key shows (0: none written)."""
        if not reply.kvs:
            return 0
        kv = reply.kvs[0]
        return store_revision(kv.mod_revision, decode_mark(kv.value).top)

    def _stub(self) -> Any:
        """The KV stub on this event loop's channel (starting the feed if it is not running)."""
        if self._closed:
            raise errors.InternalError("the etcd store is closed")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a channel and a feed serve one event loop
            self._loop, self._kv, self._feed = loop, None, None
            self._presence.clear()
        if self._kv is None:
            self._channel = rpc.insecure_channel(self.target, options=_OPTIONS)
            self._kv = rpc.KVStub(self._channel)
            self._watch = rpc.WatchStub(self._channel)
        self._ensure_feed()
        return self._kv

    async def _call(self, method: Any, request: Any) -> Any:
        """``method(request)``, sent again when the connection broke under it (etcd restarting).

        Sending a write again is safe: its compare-and-swap fails if the first one was
        applied, and ``_commit_one`` recognises its own value in the failure.
        """
        for _ in range(ATTEMPTS - 1):
            try:
                return await method(request, **_PATIENT)
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
        return await method(request, **_PATIENT)

    async def _request(self, method: Any, request: Any) -> Any:
        try:
            return await self._call(method, request)
        except grpc.aio.AioRpcError as exc:
            raise _mapped(exc) from None

    # ---------------------------------------------------------------- reads
    async def get(self, key: Key) -> Record | None:
        reply = await self._request(self._stub().Range, rpc.RangeRequest(key=self.layout.key(key)))
        if not reply.kvs:
            return None
        kv = reply.kvs[0]
        return decode_record(kv.value, kv.mod_revision)

    async def scan(
        self,
        gk: GroupKind,
        namespace: str | None,
        *,
        after: tuple[str, str] | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        bounds = self.layout.range(gk, namespace, after)
        if bounds is None:
            return []
        start, end = bounds
        stub, at = self._stub(), etcd_revision(self._revision)
        records: list[Record] = []
        wanted = limit if limit is not None else 1 << 62
        for _ in range(1 << 40):  # one round per CHUNK keys
            request = rpc.RangeRequest(key=start, range_end=end, limit=min(CHUNK, wanted - len(records)),
                                       revision=at)
            try:
                reply = await self._call(stub.Range, request)
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.OUT_OF_RANGE or not at:
                    raise _mapped(exc) from None
                at = 0  # that revision is compacted away: read the latest
                continue
            records.extend(decode_record(kv.value, kv.mod_revision) for kv in reply.kvs)
            if not reply.more or len(records) >= wanted:
                break
            start = reply.kvs[-1].key + b"\x00"
        return records

    async def exists(self, key: Key) -> bool:
        """Whether an object is at ``key``, before a create: "absent" as far as the feed delivered.

        Another process's create the feed has not delivered yet is caught by the
        create's guard at commit instead (``AlreadyExists`` then).
        """
        stub = self._stub()
        taken = self._presence.lookup(key) if self._feed is not None else None
        if taken is None and self._feed is not None:
            taken = await self._list_space(stub, key)
        if taken is False:
            return False
        return await self.get(key) is not None  # taken, or not kept: read etcd

    async def _list_space(self, stub: Any, key: Key) -> bool | None:
        """List the names of ``key``'s space for :class:`~.etcd_feed.Presence`; whether ``key``'s is taken."""
        space, at = space_of(key), self._start  # the feed delivers every later change
        if not self._presence.begin(space):
            return None
        names: list[str] | None = None
        more = False
        try:
            bounds = self.layout.range(key.group_kind, key.namespace, None)
            if bounds is not None:
                reply = await self._call(stub.Range, rpc.RangeRequest(
                    key=bounds[0], range_end=bounds[1], keys_only=True, revision=at,
                    limit=self._presence.largest))
                names = [k.name for kv in reply.kvs if (k := self.layout.decode(kv.key)) is not None]
                more = bool(reply.more)
        except grpc.aio.AioRpcError:
            pass  # compacted meanwhile, or etcd unreachable: read etcd for this create
        finally:
            self._presence.finish(space, names, more=more)
        return self._presence.lookup(key)

    # ---------------------------------------------------------------- writes
    def next_revision(self, after: int | None, *, repeat: bool = False) -> int:
        """The revision to stamp a change with: the next slot of ``after``'s transaction, or a new one.

        ``after`` is the change staged just before in the same batch (``None``: this
        change starts a transaction); ``repeat``: the batch already changes this object,
        which one transaction cannot do twice.
        """
        if after is not None and not repeat and after % SLOTS + 1 < TXN_CHANGES:
            return after + 1
        following = etcd_revision(after) + 1 if after is not None else 0
        return store_revision(max(following, max(self._head, self._start) + 1))

    async def commit(self, changes: Sequence[Change]) -> None:
        if not changes:
            return
        stub = self._stub()
        assigned: dict[Key, tuple[int, int]] = {}  # key → (stamped, committed) revision in this commit
        failed: set[Key] = set()
        failure: errors.ApiError | None = None
        last = 0
        for run in _transactions(changes):
            writes: list[_Write] = []
            for change in run:
                if change.key in failed:  # it builds on a change that did not commit
                    continue
                expect = change.expect
                earlier = assigned.get(change.key)
                if earlier is not None and expect == earlier[0]:
                    expect = earlier[1]
                key = self.layout.key(change.key)
                writes.append(_Write(change, key, encode_value(change.record),
                                     etcd_revision(expect) if expect else 0, change.revision % SLOTS))
            stamped = [w.change.revision for w in writes]
            for write, stamp, outcome in zip(writes, stamped, await self._commit_writes(stub, writes),
                                             strict=True):
                if isinstance(outcome, errors.ApiError):
                    failed.add(write.change.key)
                    failure = failure or outcome
                else:
                    assigned[write.change.key] = (stamp, outcome)
                    last = max(last, outcome)
        if last:
            await self._delivered(last)
            self._revision = max(self._revision, last)
            await self._compact(stub)
        if failure is not None:
            raise failure

    async def _commit_writes(self, stub: Any, writes: list[_Write]) -> list[int | errors.ApiError]:
        """Commit ``writes`` as one transaction; each one's revision, or the error it failed with."""
        if not writes:
            return []
        if len(writes) == 1:
            return [await self._commit_alone(stub, writes[0])]
        compares, ops, deleted = [], [], []
        for write in writes:
            compares.append(self._guard(write))
            ops.append(self._op(write))
            if write.change.type == "DELETED":
                deleted.append((write.key, write.value))
        ops.append(rpc.RequestOp(request_put=rpc.PutRequest(
            key=self.layout.revision_key, value=encode_mark(writes[-1].slot, deleted))))
        try:
            reply = await self._call(stub.Txn, rpc.TxnRequest(compare=compares, success=ops))
        except grpc.aio.AioRpcError as exc:
            if not _too_big(exc):
                raise _mapped(exc) from None
            half = len(writes) // 2  # each half in its own transaction; the slots stay as stamped
            return [*await self._commit_writes(stub, writes[:half]),
                    *await self._commit_writes(stub, writes[half:])]
        self._head = max(self._head, int(reply.header.revision))
        if not reply.succeeded:  # a guard failed (or an earlier send was applied): find out which, one by one
            return [await self._commit_alone(stub, write) for write in writes]
        return [self._committed(write, int(reply.header.revision)) for write in writes]

    async def _commit_alone(self, stub: Any, write: _Write) -> int | errors.ApiError:
        try:
            return await self._commit_one(stub, write)
        except _LOST as exc:
            return exc

    @staticmethod
    def _committed(write: _Write, etcd_rev: int) -> int:
        """Give the change the revision its transaction got."""
        revision = store_revision(etcd_rev, write.slot)
        restamp(write.change.record, revision)
        return revision

    @staticmethod
    def _guard(write: _Write) -> Any:
        if not write.expect:
            return rpc.Compare(result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE, key=write.key,
                               create_revision=0)
        return rpc.Compare(result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, key=write.key,
                           mod_revision=write.expect)

    @staticmethod
    def _op(write: _Write) -> Any:
        if write.change.type == "DELETED":
            return rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=write.key))
        return rpc.RequestOp(request_put=rpc.PutRequest(key=write.key, value=write.value))

    async def _commit_one(self, stub: Any, write: _Write) -> int:
        """Run one change as a guarded transaction of its own; its store revision."""
        change, key, value = write.change, write.key, write.value
        deleted = [(key, value)] if change.type == "DELETED" else []
        mark = rpc.RequestOp(request_put=rpc.PutRequest(key=self.layout.revision_key,
                                                        value=encode_mark(write.slot, deleted)))
        failure = [rpc.RequestOp(request_range=rpc.RangeRequest(key=k))
                   for k in (key, self.layout.revision_key)]
        reply = await self._request(stub.Txn, rpc.TxnRequest(
            compare=[self._guard(write)], success=[self._op(write), mark], failure=failure))
        self._head = max(self._head, int(reply.header.revision))
        if reply.succeeded:
            return self._committed(write, int(reply.header.revision))
        now, mark_now = (r.response_range.kvs for r in reply.responses)
        if change.type != "DELETED" and now and now[0].value == value:  # ours, sent before
            return self._committed(write, int(now[0].mod_revision))
        if (change.type == "DELETED" and not now and mark_now
                and decode_mark(mark_now[0].value).deleted.get(key) == value):
            return self._committed(write, int(mark_now[0].mod_revision))
        if change.type == "ADDED":
            raise o.already_exists(change.key)
        raise o.conflict(change.key, o.STALE) if now else o.not_found(change.key)

    async def _compact(self, stub: Any) -> None:
        target = self._retention.due(self._compacted)
        if target is None:
            return
        try:
            await self._call(stub.Compact, rpc.CompactionRequest(revision=target))
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.OUT_OF_RANGE:  # OUT_OF_RANGE: compacted further already
                raise _mapped(exc) from None
        self._retention.compacted()
        self._compacted = max(self._compacted, target)

    # ---------------------------------------------------------------- history
    async def history(self, since: int, gk: GroupKind | None, namespace: str | None) -> list[Change]:
        if since < self.compacted:
            raise self._gone(since)
        self._stub()
        if since >= self._revision:
            return []
        target = etcd_revision(self._revision)
        changes: list[Change] = []
        call = self._watch.Watch(timeout=HISTORY_TIMEOUT)
        try:
            await call.write(self._watch_request(etcd_revision(since)))  # later slots of since's count too
            async for reply in call:
                if reply.compact_revision:
                    self._compacted = max(self._compacted, int(reply.compact_revision))
                    raise self._gone(since)
                if reply.canceled:
                    raise errors.InternalError(f"etcd cancelled a history watch: {reply.cancel_reason}")
                changes.extend(c for c in decode_events(self.layout, reply.events)
                               if c.revision > since
                               and (gk is None or c.key.group_kind == gk)
                               and (namespace is None or c.key.namespace == namespace))
                if reply.events and reply.events[-1].kv.mod_revision >= target:
                    break
        except grpc.aio.AioRpcError as exc:
            raise _mapped(exc) from None
        finally:
            call.cancel()
        return changes

    def _gone(self, since: int) -> errors.Gone:
        return errors.Gone(f"too old resource version: {since} ({self.compacted})")

    def _watch_request(self, start: int) -> Any:
        return rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
            key=self.layout.root, range_end=self.layout.end, start_revision=start, prev_kv=True))

    # ---------------------------------------------------------------- the feed
    def follow(self, publish: Publish, fail: Fail) -> None:
        self._publish, self._fail = publish, fail
        if not self._closed:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return  # not inside an event loop yet: the first request starts it
            self._stub()

    def _ensure_feed(self) -> None:
        if self._feed is None and self._publish is not None:
            self._feed = asyncio.get_running_loop().create_task(self._run_feed(), name="etcd-feed")

    async def _run_feed(self) -> None:
        failure: errors.ApiError | None = None
        failures = 0
        try:
            while failures < FEED_ATTEMPTS:  # consecutive failures; progress resets the count
                try:
                    progressed = await self._follow_stream()
                except Compacted as exc:
                    progressed = await self._restart_at_head(exc.etcd_revision)
                except Exception as exc:  # a broken stream, a cancelled watch, an undecodable event
                    failure, progressed = _mapped(exc), False
                    _log.warning("etcd watch interrupted", target=self.target, revision=self._revision,
                                 attempt=failures + 1, error=str(failure))
                failures = 0 if progressed else failures + 1
                await asyncio.sleep(0.05 * 2 ** min(failures, 5))
        finally:
            self._feed = None
            self._presence.clear()
            self._delivery.release()
            if not self._closed and self._fail is not None:
                _log.warning("etcd watch stopped; watches end with Gone", target=self.target)
                self._fail(errors.Gone(f"the etcd watch stopped ({failure}); re-list"))

    async def _follow_stream(self) -> bool:
        """Deliver changes from one watch stream until it ends; whether it delivered any."""
        progressed = False
        call = self._watch.Watch(wait_for_ready=True)
        try:
            await call.write(self._watch_request(self._start + 1))
            async for reply in call:
                if reply.compact_revision:
                    raise Compacted(reply.compact_revision)
                if reply.canceled:
                    raise errors.InternalError(f"etcd cancelled the watch: {reply.cancel_reason}")
                if reply.events:
                    progressed = True
                    await self._deliver(reply.events)
        finally:
            call.cancel()
        return progressed

    async def _deliver(self, events: Sequence[Any]) -> None:
        changes = decode_events(self.layout, events)
        self._start = int(events[-1].kv.mod_revision)
        pressure = False
        if changes:
            self._retention.seen(changes)
            self._presence.seen(changes)
            pressure = self._publish(changes) if self._publish is not None else False
            self._revision = max(self._revision, changes[-1].revision)
        self._delivery.release(self._revision)
        if pressure:
            await asyncio.sleep(0)

    async def _restart_at_head(self, compacted: int) -> bool:
        """The feed fell behind a compaction: end every watch (clients re-list), go on from now."""
        self._compacted = max(self._compacted, compacted)
        self._presence.clear()
        lost = self._revision
        reply = await self._request(self._kv.Range, rpc.RangeRequest(key=self.layout.revision_key))
        self._revision = max(self._revision, self._marked(reply))
        self._start = max(self._start, int(reply.header.revision))
        self._retention.restart(self._start)
        self._presence.clear()  # and what was listed at the old place meanwhile
        _log.warning("etcd compacted past the watch; watches end with Gone", target=self.target,
                     lost=lost, resumed=self._revision)
        if self._fail is not None:
            self._fail(errors.Gone(f"etcd compacted the history past revision {lost}; re-list"))
        self._delivery.release(self._revision)
        return True

    async def _delivered(self, revision: int) -> None:
        """Wait until the feed has published ``revision`` (or has stopped)."""
        if self._revision < revision and self._feed is not None:
            await self._delivery.wait(revision)

    async def close(self) -> None:
        self._closed = True
        self._presence.clear()
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.cancel()
            await asyncio.gather(feed, return_exceptions=True)
        self._delivery.release()
        if self._channel is not None:
            await self._channel.close()
        self._channel = self._kv = self._watch = None


def open_backend(location: str, options: dict[str, str], *, history: int) -> EtcdBackend:
    """Build the backend for ``etcd://host:port[,host:port…]?prefix=/fleetkeeper``."""
    unknown = set(options) - {"prefix"}
    if unknown:
        raise ValueError(f"unknown etcd store option(s) {sorted(unknown)}; known: prefix")
    prefix = options.get("prefix", DEFAULT_PREFIX)
    return EtcdBackend(parse_endpoints(location), prefix=prefix, history=history)


__all__ = ["EtcdBackend", "open_backend"]
