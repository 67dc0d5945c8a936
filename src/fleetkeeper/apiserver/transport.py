"""An httpx transport that calls the API server in-process, streaming included.

``httpx.ASGITransport`` buffers the whole response before returning it, so a watch —
an endless response — would never return. This transport runs the ASGI app as a task
and hands httpx each body chunk as the app sends it; closing the response (leaving
``client.stream(...)``) tells the app the client disconnected, which ends the watch.

This is how the REST client is exercised against a real API server without sockets::

    app = build_app(store, clock=clock)
    client = RestClient("http://fleetkeeper.invalid", transport=InProcessTransport(app))
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.types import ASGIApp, Message


class _Body(httpx.AsyncByteStream):
    def __init__(self, queue: asyncio.Queue[bytes | None], task: asyncio.Task[None],
                 disconnected: asyncio.Event) -> None:
        self._queue = queue
        self._task = task
        self._disconnected = disconnected

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await self._queue.get()
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        self._disconnected.set()
        if not self._task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=5.0)
            except TimeoutError:
                self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task


class InProcessTransport(httpx.AsyncBaseTransport):
    """Send httpx requests straight to an ASGI app in the same event loop."""

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        exchange = _Exchange(await request.aread())
        task = asyncio.create_task(exchange.run(self.app, _scope(request, self.client)))
        await exchange.started.wait()
        if exchange.status is None:
            with contextlib.suppress(BaseException):
                await task
            raise RuntimeError("the application ended without a response") from exchange.error
        stream = _Body(exchange.queue, task, exchange.disconnected)
        return httpx.Response(exchange.status, headers=exchange.headers, stream=stream, request=request)


def _scope(request: httpx.Request, client: tuple[str, int]) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "method": request.method, "scheme": request.url.scheme, "path": request.url.path,
        "raw_path": request.url.raw_path.split(b"?")[0], "query_string": request.url.query,
        "root_path": "", "headers": [(k.lower(), v) for k, v in request.headers.raw],
        "server": (request.url.host, request.url.port or 80), "client": client,
    }


class _Exchange:
    """The app's side of one request: ``receive``/``send`` over a queue of body chunks."""

    def __init__(self, body: bytes) -> None:
        self.body: bytes | None = body
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.started = asyncio.Event()
        self.disconnected = asyncio.Event()
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.error: BaseException | None = None

    async def receive(self) -> Message:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status, self.headers = message["status"], list(message.get("headers", []))
            self.started.set()
        elif message["type"] == "http.response.body":
            if self.disconnected.is_set():
                raise OSError("the client closed the response")
            chunk = message.get("body", b"")
            if chunk:
                self.queue.put_nowait(chunk)
            if not message.get("more_body", False):
                self.queue.put_nowait(None)

    async def run(self, app: ASGIApp, scope: dict[str, Any]) -> None:
        try:
            await app(scope, self.receive, self.send)
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            self.started.set()
            self.queue.put_nowait(None)


__all__ = ["InProcessTransport"]
