"""A WebSocket to an ASGI app in the same event loop, without a socket.

The cluster proxy reaches the members a process serves itself (``fleetkeeper up``'s
simulated members) in-process; their upgraded connections (``kubectl exec``) go the same
way: :class:`AsgiDialer` runs the app with a ``websocket`` scope as a task and turns its
ASGI messages into the :class:`~fleetkeeper.apiserver.proxy_ws.Socket` the relay uses. An
app that refuses the upgrade with an HTTP answer (the denial extension, which the scope
offers) or by closing before it accepts (``403``, as uvicorn answers it) raises
:class:`~fleetkeeper.apiserver.proxy_ws.Refused`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from starlette.types import ASGIApp, Message

from fleetkeeper.apiserver.proxy_ws import Closed, Frame, Refused, Socket

#: how long an app may take to end once its socket is closed, before it is cancelled
CLOSE_GRACE = 5.0
_ENDED: Message = {"type": "fleetkeeper.ended"}


class AsgiSocket:
    """One in-process WebSocket (made by :class:`AsgiDialer`)."""

    def __init__(self, app: ASGIApp, scope: dict[str, Any]) -> None:
        self._to_app: asyncio.Queue[Message] = asyncio.Queue()
        self._from_app: asyncio.Queue[Message] = asyncio.Queue()
        self._to_app.put_nowait({"type": "websocket.connect"})
        self._task = asyncio.create_task(self._run(app, scope))
        self._ended: Closed | None = None
        self.subprotocol: str | None = None

    async def _run(self, app: ASGIApp, scope: dict[str, Any]) -> None:
        try:
            await app(scope, self._to_app.get, self._from_app.put)
        finally:
            self._from_app.put_nowait(_ENDED)

    async def opened(self) -> None:
        """Wait for the app to accept; raise :class:`Refused` when it does not."""
        first = await self._from_app.get()
        if first["type"] == "websocket.accept":
            self.subprotocol = first.get("subprotocol")
            return
        await self._finish()
        if first["type"] != "websocket.http.response.start":
            raise Refused(403 if first["type"] == "websocket.close" else 500, [], b"")
        body = bytearray()
        while (part := await self._from_app.get())["type"] == "websocket.http.response.body":
            body += part.get("body", b"")
            if not part.get("more_body"):
                break
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in first.get("headers") or []]
        raise Refused(int(first["status"]), headers, bytes(body))

    async def receive(self) -> Frame:
        if self._ended is not None:
            raise self._ended
        message = await self._from_app.get()
        if message["type"] == "websocket.send":
            data: bytes | None = message.get("bytes")
            return data if data is not None else str(message.get("text") or "")
        if message["type"] == "websocket.close":
            self._ended = Closed(int(message.get("code") or 1000), str(message.get("reason") or ""))
        else:
            self._ended = Closed(1011, "the member's handler ended without closing")
        self._to_app.put_nowait({"type": "websocket.disconnect", "code": self._ended.code})
        raise self._ended

    async def send(self, frame: Frame) -> None:
        if self._ended is not None:
            raise self._ended
        key = "bytes" if isinstance(frame, bytes) else "text"
        self._to_app.put_nowait({"type": "websocket.receive", key: frame})

    async def close(self, code: int, reason: str) -> None:
        if self._ended is None:
            self._ended = Closed(code, reason)
            self._to_app.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        await self._finish()

    async def _finish(self) -> None:
        """Let the app end (cancelled past :data:`CLOSE_GRACE`)."""
        if not self._task.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._task), timeout=CLOSE_GRACE)
            self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task


class AsgiDialer:
    """A :class:`~fleetkeeper.apiserver.proxy_ws.Dialer` for an ASGI app served in-process."""

    def __init__(self, app: ASGIApp, host: str) -> None:
        self.app = app
        self.host = host

    async def dial(self, target: str, *, headers: Sequence[tuple[str, str]],
                   subprotocols: Sequence[str]) -> Socket:
        path, _, query = target.partition("?")
        scope: dict[str, Any] = {
            "type": "websocket", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1",
            "scheme": "ws", "path": unquote(path), "raw_path": path.encode("latin-1"),
            "query_string": query.encode("latin-1"), "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
            "server": (self.host, 80), "client": ("127.0.0.1", 50000), "subprotocols": list(subprotocols),
            "extensions": {"websocket.http.response": {}},
        }
        socket = AsgiSocket(self.app, scope)
        await socket.opened()
        return socket


__all__ = ["AsgiDialer", "AsgiSocket"]
