"""The ``etcd://host:port[,host:port…][?prefix=/fleetkeeper]`` backend: one store, many processes.

Several control-plane processes can share one etcd (3.4+): each opens this backend, and
etcd is the single source of truth for objects, revisions and changes. Keys, values and
why ``resourceVersion`` is ``mod_revision - 1`` are in :mod:`.etcd_layout`; how changes
reach watchers (this process's and other processes' alike) in :mod:`.etcd_feed`. This
module does the I/O.

**Writes.** Each change is one etcd transaction guarded by compare-and-swap: a create
requires the key to be absent, an update or delete requires its ``mod_revision`` to be
the one the façade read; a lost race raises ``AlreadyExists``/``Conflict``/``NotFound``.
etcd gives a transaction one revision while the store contract gives every change its
own, so a batch is committed as consecutive transactions: each change is atomic, a
batch is not (a crash or a conflict part-way leaves the earlier changes committed and
published). The façade stamps the revision it expects; if another process wrote first,
etcd's revision is later and ``commit`` re-stamps the record — objects a batch handed
out before committing may then carry a stale version, which only makes their next
write conflict.

**Reads.** ``get`` is a linearizable read of the latest value; ``scan`` reads at the
revision the feed delivered, so a list's items match the revision it reports, at most
:data:`CHUNK` keys per request. **Retention** is etcd compaction: once more than
``history`` (plus a tenth) revisions passed since the last one, a commit compacts etcd
to keep the last ``history``; other processes may compact too.

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
from collections.abc import Callable, Sequence
from typing import Any

import grpc  # type: ignore[import-untyped]
import structlog
from aetcd import rpc

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store import objects as o
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.etcd_feed import Compacted, Delivery, decode_events
from fleetkeeper.store.etcd_layout import (
    DEFAULT_PREFIX,
    OFFSET,
    Layout,
    decode_record,
    encode_value,
    grpc_target,
    parse_endpoints,
    restamp,
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
    if "request is too large" in details:
        return errors.RequestEntityTooLarge(f"etcd: {details}")
    return errors.InternalError(f"etcd: {exc.code().name}: {details}")


class EtcdBackend:
    """A store in etcd; see the module docstring."""

    name = "etcd"

    def __init__(self, endpoints: list[tuple[str, int]], *, prefix: str = DEFAULT_PREFIX,
                 history: int = 10_000) -> None:
        if history < 1:
            raise ValueError("history must keep at least one change")
        self.target = grpc_target(endpoints)
        self.layout = Layout(prefix)
        self._keep = history
        self._slack = history // 10
        self._compacted = 0
        self._revision, self._start = self._bootstrap()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._channel: Any = None
        self._kv: Any = None
        self._watch: Any = None
        self._publish: Publish | None = None
        self._fail: Fail | None = None
        self._feed: asyncio.Task[None] | None = None
        self._delivery = Delivery()
        self._closed = False

    @property
    def revision(self) -> int:
        return self._revision

    @property
    def compacted(self) -> int:
        return self._compacted

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
        last = reply.kvs[0].mod_revision - OFFSET if reply.kvs else 0
        return last, int(reply.header.revision)

    def _stub(self) -> Any:
        """The KV stub on this event loop's channel (starting the feed if it is not running)."""
        if self._closed:
            raise errors.InternalError("the etcd store is closed")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a channel and a feed serve one event loop
            self._loop, self._kv, self._feed = loop, None, None
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
        stub, at = self._stub(), self._revision + OFFSET
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

    # ---------------------------------------------------------------- writes
    async def commit(self, changes: Sequence[Change]) -> None:
        if not changes:
            return
        stub = self._stub()
        assigned: dict[Key, tuple[int, int]] = {}  # key → (expected, actual) revision of this commit
        last = 0
        for change in changes:
            expect = change.expect
            earlier = assigned.get(change.key)
            if earlier is not None and expect == earlier[0]:
                expect = earlier[1]
            revision = await self._commit_one(stub, change, expect)
            assigned[change.key] = (change.revision, revision)
            restamp(change.record, revision)
            last = revision
        await self._delivered(last)
        self._revision = max(self._revision, last)
        await self._compact(stub)

    async def _commit_one(self, stub: Any, change: Change, expect: int) -> int:
        """Run one change as a guarded transaction; its store revision."""
        key = self.layout.key(change.key)
        value = encode_value(change.record)
        if change.type == "ADDED":
            compare = rpc.Compare(result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE, key=key,
                                  create_revision=0)
        else:
            compare = rpc.Compare(result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, key=key,
                                  mod_revision=expect + OFFSET)
        if change.type == "DELETED":
            write = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=key))
            mark = rpc.RequestOp(request_put=rpc.PutRequest(key=self.layout.revision_key, value=value))
        else:
            write = rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))
            mark = rpc.RequestOp(request_put=rpc.PutRequest(key=self.layout.revision_key))
        failure = [rpc.RequestOp(request_range=rpc.RangeRequest(key=k))
                   for k in (key, self.layout.revision_key)]
        reply = await self._request(stub.Txn, rpc.TxnRequest(compare=[compare], success=[write, mark],
                                                             failure=failure))
        if reply.succeeded:
            return int(reply.header.revision) - OFFSET
        now, mark_now = (r.response_range.kvs for r in reply.responses)
        if change.type != "DELETED" and now and now[0].value == value:  # ours, sent twice
            return int(now[0].mod_revision) - OFFSET
        if change.type == "DELETED" and not now and mark_now and mark_now[0].value == value:
            return int(mark_now[0].mod_revision) - OFFSET
        if change.type == "ADDED":
            raise o.already_exists(change.key)
        raise o.conflict(change.key, o.STALE) if now else o.not_found(change.key)

    async def _compact(self, stub: Any) -> None:
        if self._revision - self._compacted <= self._keep + self._slack:
            return
        target = self._revision - self._keep
        try:
            await self._call(stub.Compact, rpc.CompactionRequest(revision=target + OFFSET))
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.OUT_OF_RANGE:  # OUT_OF_RANGE: compacted further already
                raise _mapped(exc) from None
        self._compacted = max(self._compacted, target)

    # ---------------------------------------------------------------- history
    async def history(self, since: int, gk: GroupKind | None, namespace: str | None) -> list[Change]:
        if since < self._compacted:
            raise errors.Gone(f"too old resource version: {since} ({self._compacted + 1})")
        self._stub()
        target = self._revision + OFFSET
        if since + OFFSET >= target:
            return []
        changes: list[Change] = []
        call = self._watch.Watch(timeout=HISTORY_TIMEOUT)
        try:
            await call.write(self._watch_request(since + 1 + OFFSET))
            async for reply in call:
                if reply.compact_revision:
                    self._compacted = max(self._compacted, reply.compact_revision - 1 - OFFSET)
                    raise errors.Gone(f"too old resource version: {since} ({self._compacted + 1})")
                if reply.canceled:
                    raise errors.InternalError(f"etcd cancelled a history watch: {reply.cancel_reason}")
                changes.extend(c for c in decode_events(self.layout, reply.events)
                               if (gk is None or c.key.group_kind == gk)
                               and (namespace is None or c.key.namespace == namespace))
                if reply.events and reply.events[-1].kv.mod_revision >= target:
                    break
        except grpc.aio.AioRpcError as exc:
            raise _mapped(exc) from None
        finally:
            call.cancel()
        return changes

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
        self._start = events[-1].kv.mod_revision
        pressure = self._publish(changes) if changes and self._publish is not None else False
        self._revision = max(self._revision, self._start - OFFSET)
        self._delivery.release(self._revision)
        if pressure:
            await asyncio.sleep(0)

    async def _restart_at_head(self, compacted: int) -> bool:
        """The feed fell behind a compaction: end every watch (clients re-list), go on from now."""
        self._compacted = max(self._compacted, compacted - 1 - OFFSET)
        lost = self._revision
        reply = await self._request(self._kv.Range, rpc.RangeRequest(key=self.layout.revision_key))
        if reply.kvs:
            self._revision = max(self._revision, reply.kvs[0].mod_revision - OFFSET)
        self._start = max(self._start, int(reply.header.revision))
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
