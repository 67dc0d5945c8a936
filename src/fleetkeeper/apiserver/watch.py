"""Watch: ``GET <collection>?watch=true`` as a chunked stream of JSON lines.

Each line is ``{"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {…}}``.
Where the stream starts depends on the query, as in Kubernetes:

* ``resourceVersion=N`` — every change after revision N (resuming a watch). A revision
  older than the store's history answers ``200`` with one ``ERROR`` event carrying a
  ``410 Expired`` Status (what every client library understands: re-list);
* ``resourceVersion`` empty or ``0`` — synthetic ``ADDED`` events for the current
  objects, then changes;
* ``sendInitialEvents=true`` (kubectl's *WatchList*, used by ``delete --wait`` and
  ``wait --for``) — the current objects as ``ADDED``, then a ``BOOKMARK`` annotated
  ``k8s.io/initial-events-end: "true"``, then changes. Without that bookmark kubectl
  hangs until its timeout;
* ``sendInitialEvents=false`` with no resourceVersion — changes from now on only.

With ``allowWatchBookmarks=true`` an idle stream gets a ``BOOKMARK`` every
``bookmark_interval`` seconds carrying the last revision it delivered (always a safe
place to resume). The stream ends after ``timeoutSeconds`` (or the server's default),
when the client goes away, or when the server stops; clients then re-watch from their
last resourceVersion. With a Table ``Accept`` each event's object is a one-row Table, the row
carrying the object as ``includeObject`` asks (its metadata unless told otherwise).

:class:`WatchResponse` is a raw ASGI response: it streams and, at the same time,
listens for the client's disconnect, so an idle watch is released at once instead of
lingering until its next event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from fleetkeeper import errors
from fleetkeeper.api.crd import definition
from fleetkeeper.api.printing.table import include_object, wants_table
from fleetkeeper.apiserver import fieldlabels, tables
from fleetkeeper.apiserver.request import parse_bool, parse_int
from fleetkeeper.apiserver.state import Context, ServerState
from fleetkeeper.store.interface import Event, Watch

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
#: initial events are sent in chunks of this many lines
CHUNK = 200


def _line(kind: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"


class _Stream:
    """The event source of one watch request, prepared before the response starts."""

    def __init__(self, state: ServerState, ctx: Context) -> None:
        self.state = state
        self.ctx = ctx
        self.table = wants_table(ctx.accept)
        self.include = include_object(ctx.param("includeObject")) if self.table else "Metadata"
        self.initial: list[dict[str, Any]] = []
        self.initial_end = False
        self.watch: Watch | None = None
        self.error: errors.ApiError | None = None
        self.last = 0
        requested = parse_int("timeoutSeconds", ctx.param("timeoutSeconds"))
        self.timeout = float(requested) if requested is not None and requested > 0 \
            else state.config.watch_timeout
        self.bookmarks = ctx.flag("allowWatchBookmarks")

    async def open(self) -> None:
        """List and subscribe (raising 4xx errors now, before the 200 is sent)."""
        ctx, store, info = self.ctx, self.state.store, self.ctx.target.info
        labels, fields = ctx.param("labelSelector") or None, fieldlabels.field_selector(ctx)
        rv = ctx.param("resourceVersion") or ""
        send_initial = ctx.param("sendInitialEvents")
        since: int | None
        if send_initial not in (None, "") and parse_bool("sendInitialEvents", send_initial):
            self.initial_end = True
        if self.initial_end or (send_initial in (None, "") and rv in ("", "0")):
            listed = await store.list(info.group_kind, ctx.target.namespace, label_selector=labels,
                                      field_selector=fields)
            self.initial, since = listed.items, listed.revision
        elif rv in ("", "0"):
            since = None
        else:
            since = parse_int("resourceVersion", rv)
        try:
            self.watch = store.watch(info.group_kind, ctx.target.namespace, since=since,
                                     label_selector=labels, field_selector=fields)
        except errors.Gone as exc:
            self.error = exc
        self.last = since if since is not None else store.revision

    def _render(self, obj: dict[str, Any]) -> dict[str, Any]:
        if not self.table:
            return obj
        info = self.ctx.target.info
        rv = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        return tables.table(info.group, info.kind, [obj], now=self.state.clock.now(), resource_version=rv,
                            include_object=self.include, custom=definition(info))

    def _bookmark(self, *, end: bool) -> bytes:
        info = self.ctx.target.info
        meta: dict[str, Any] = {"resourceVersion": str(self.last)}
        if end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return _line("BOOKMARK", {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta})

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        for start in range(0, len(self.initial), CHUNK):
            yield b"".join(_line("ADDED", self._render(o)) for o in self.initial[start:start + CHUNK])
        self.initial = []
        if self.initial_end:
            yield self._bookmark(end=True)
        if self.error is not None:
            yield _line("ERROR", self.error.to_status())
            return
        assert self.watch is not None
        async with contextlib.aclosing(self._live(self.watch)) as live:
            async for chunk in live:
                yield chunk

    async def _live(self, watch: Watch) -> AsyncGenerator[bytes, None]:
        clock = self.state.clock
        deadline = clock.monotonic() + self.timeout
        iterator = watch.__aiter__()
        pending: asyncio.Future[Event] | None = None
        interval = self.state.config.bookmark_interval
        try:
            while (remaining := deadline - clock.monotonic()) > 0:
                if pending is None:
                    pending = asyncio.ensure_future(iterator.__anext__())
                wait = min(remaining, interval) if self.bookmarks else remaining
                done, _ = await asyncio.wait({pending}, timeout=wait)
                if not done:
                    if self.bookmarks and remaining > wait:
                        yield self._bookmark(end=False)
                    continue
                task, pending = pending, None
                try:
                    event = task.result()
                except StopAsyncIteration:
                    return
                except errors.ApiError as exc:
                    yield _line("ERROR", exc.to_status())
                    return
                self.last = event.revision
                yield _line(event.type, self._render(event.object))
        finally:
            if pending is not None:
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
            await watch.close()

    async def close(self) -> None:
        if self.watch is not None:
            await self.watch.close()


class WatchResponse(Response):
    """Streams a watch; ends on timeout, client disconnect or server stop (see module notes)."""

    def __init__(self, stream: _Stream, closing: asyncio.Event) -> None:
        super().__init__(status_code=200, media_type="application/json")
        self._stream = stream
        self._closing = closing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-cache, private")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        producer = asyncio.ensure_future(self._produce(send))
        gone = asyncio.ensure_future(self._disconnected(receive))
        stopping = asyncio.ensure_future(self._closing.wait())
        try:
            done, _ = await asyncio.wait({producer, gone, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (producer, gone, stopping):
                task.cancel()
            await asyncio.gather(producer, gone, stopping, return_exceptions=True)
            await self._stream.close()
        clean = gone not in done and (stopping in done or producer.exception() is None)
        if clean:
            with contextlib.suppress(OSError, RuntimeError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _produce(self, send: Send) -> None:
        chunks = self._stream.chunks()
        try:
            async for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            await chunks.aclose()

    @staticmethod
    async def _disconnected(receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return


async def watch_response(state: ServerState, ctx: Context) -> Response:
    """Prepare a watch (4xx errors surface here) and return its streaming response."""
    stream = _Stream(state, ctx)
    await stream.open()
    return WatchResponse(stream, state.closing)


__all__ = ["INITIAL_EVENTS_END", "WatchResponse", "watch_response"]
