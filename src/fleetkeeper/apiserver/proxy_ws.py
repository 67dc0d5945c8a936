"""WebSockets through the cluster proxy: what ``kubectl exec``, ``attach``, ``cp`` and ``port-forward`` use.

kubectl opens those as a WebSocket upgrade of a ``GET`` (``v5.channel.k8s.io`` and older
channel protocols for exec and attach, ``SPDY/3.1+portforward.k8s.io`` for port-forward). The
cluster proxy authorizes the upgrade like any proxied request, then dials the member with the
cluster's own credentials — never the caller's — offering the caller's subprotocols, accepts
the caller with the one the member chose, and relays frames both ways as they are (binary
and text) until one side ends; the other is then closed with the same code and reason. A
member that refuses the upgrade has its HTTP answer passed back as the refusal.

Bounds: a frame past :data:`MAX_FRAME` closes both sides with ``1009`` (message too big);
a relay where no frame moved for :data:`IDLE_TIMEOUT` (the kubelet's default streaming idle
timeout) is closed with ``1001``, as is every relay when the server stops.

How the member is dialed is the :class:`Dialer` seam: over the network with the
``websockets`` client (:func:`dial_network`: the TLS context, credential headers and proxy
URL of the :class:`~fleetkeeper.apiserver.proxy.Connection`), or in-process for members a
process serves itself (:mod:`fleetkeeper.apiserver.asgi_socket`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

import anyio
import structlog
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.typing import Subprotocol

from fleetkeeper import errors
from fleetkeeper.apiserver.state import status_response
from fleetkeeper.errors import ServiceUnavailable

log = structlog.get_logger("fleetkeeper.apiserver")

if TYPE_CHECKING:
    from fleetkeeper.apiserver.proxy import Connection

#: the largest frame relayed either way
MAX_FRAME = 1 << 20
#: a relay where no frame moved this long is closed (the kubelet's default)
IDLE_TIMEOUT = 4 * 3600.0
#: how long the member may take to accept the upgrade
OPEN_TIMEOUT = 10.0
#: close codes that may be received but never sent (RFC 6455 §7.4.1), and what is sent instead
UNSENDABLE = {1005: 1000, 1006: 1011, 1015: 1011}
Frame = str | bytes


class Closed(Exception):
    """One side of a relay ended, with its close code and reason."""

    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason


class Refused(Exception):
    """The member answered the upgrade with an HTTP response instead of accepting it."""

    def __init__(self, status: int, headers: Sequence[tuple[str, str]], body: bytes) -> None:
        super().__init__(status)
        self.status = status
        self.headers = list(headers)
        self.body = body


class Socket(Protocol):
    """One side of a relay: frames in and out, and a close."""

    @property
    def subprotocol(self) -> str | None:
        """The subprotocol this side agreed to."""
        ...

    async def receive(self) -> Frame:
        """The next frame; raise :class:`Closed` when the side has ended."""
        ...

    async def send(self, frame: Frame) -> None:
        """Send a frame; raise :class:`Closed` when the side has ended."""
        ...

    async def close(self, code: int, reason: str) -> None:
        """Close this side (nothing when it is closed already)."""
        ...


class Dialer(Protocol):
    """Opens a WebSocket to one member."""

    async def dial(self, target: str, *, headers: Sequence[tuple[str, str]],
                   subprotocols: Sequence[str]) -> Socket:
        """A socket to ``target`` (path and query under the member's API root); raise
        :class:`Refused` when the member answers with HTTP, :class:`ServiceUnavailable` when it
        cannot be reached."""
        ...


def sendable(code: int) -> int:
    """A close code that may be sent for one received (``1005`` no code → ``1000``)."""
    if code in UNSENDABLE:
        return UNSENDABLE[code]
    return code if (1000 <= code <= 1014 and code != 1004) or 3000 <= code <= 4999 else 1011


@dataclass(frozen=True)
class _Member:
    """A member reached with the ``websockets`` client."""

    connection: ClientConnection

    @property
    def subprotocol(self) -> str | None:
        return self.connection.subprotocol

    async def receive(self) -> Frame:
        try:
            return await self.connection.recv()
        except ConnectionClosed as exc:
            raise _closed(exc) from None

    async def send(self, frame: Frame) -> None:
        try:
            await self.connection.send(frame)
        except ConnectionClosed as exc:
            raise _closed(exc) from None

    async def close(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await self.connection.close(sendable(code), reason[:120])


def _closed(exc: ConnectionClosed) -> Closed:
    frame = exc.rcvd or exc.sent
    return Closed(frame.code, frame.reason) if frame is not None else Closed(1006)


async def dial_network(connection: Connection, target: str, *, headers: Sequence[tuple[str, str]],
                       subprotocols: Sequence[str]) -> Socket:
    """Dial ``connection``'s member over the network (see the module notes)."""
    url = connection.url.replace("https://", "wss://", 1).replace("http://", "ws://", 1) + target
    tls: ssl.SSLContext | None = None
    if url.startswith("wss://"):
        if isinstance(connection.verify, ssl.SSLContext):
            tls = connection.verify
        else:
            tls = ssl.create_default_context()
            if not connection.verify:
                tls.check_hostname = False
                tls.verify_mode = ssl.CERT_NONE
    proxy: str | Literal[True] = str(connection.proxy.url) if connection.proxy is not None else True
    try:
        opened = await connect(
            url, ssl=tls, additional_headers=list(headers), proxy=proxy, max_size=MAX_FRAME,
            subprotocols=[Subprotocol(p) for p in subprotocols], open_timeout=OPEN_TIMEOUT,
            compression=None, user_agent_header=None)
    except InvalidStatus as exc:
        answer = exc.response
        body = bytes(answer.body or b"")
        raise Refused(answer.status_code, list(answer.headers.raw_items()), body) from None
    except (OSError, TimeoutError, ImportError, ValueError, WebSocketException) as exc:
        raise ServiceUnavailable(f"{type(exc).__name__}: {str(exc)[:200] or 'no answer'}") from None
    return _Member(opened)


class CallerSocket:
    """The caller's side of a relay: an accepted Starlette WebSocket."""

    def __init__(self, websocket: WebSocket) -> None:
        self._websocket = websocket

    @property
    def subprotocol(self) -> str | None:
        return None  # the caller offered; the member chose

    async def receive(self) -> Frame:
        try:
            message = await self._websocket.receive()
        except Exception:  # the caller's connection broke: its side has ended
            raise Closed(1006) from None
        if message["type"] == "websocket.disconnect":
            raise Closed(int(message.get("code") or 1005), str(message.get("reason") or ""))
        data: bytes | None = message.get("bytes")
        return data if data is not None else str(message.get("text") or "")

    async def send(self, frame: Frame) -> None:
        try:
            if isinstance(frame, bytes):
                await self._websocket.send_bytes(frame)
            else:
                await self._websocket.send_text(frame)
        except Exception:  # the caller left while a frame was on its way
            raise Closed(1006) from None

    async def close(self, code: int, reason: str) -> None:
        if self._websocket.application_state != WebSocketState.DISCONNECTED:
            with contextlib.suppress(Exception):
                await self._websocket.close(sendable(code), reason[:120])


@contextlib.asynccontextmanager
async def answering_refusals(websocket: WebSocket) -> AsyncIterator[None]:
    """Handle an upgrade inside: a failure is answered as a plain request's would be, with its
    ``Status``, or ``500`` (logged) for an unexpected one."""
    try:
        yield
    except errors.ApiError as exc:
        await refuse(websocket, status_response(exc))
    except Exception:
        log.exception("upgrade failed", path=websocket.url.path)
        await refuse(websocket, status_response(
            errors.InternalError("an internal error occurred; see the server log")))


async def refuse(websocket: WebSocket, response: Response) -> None:
    """Answer an upgrade not accepted with ``response``, as a plain request would be answered
    (a server without the denial extension can only close it: its clients see ``403``)."""
    if websocket.application_state == WebSocketState.CONNECTING:
        try:
            await websocket.send_denial_response(response)
        except RuntimeError:
            await websocket.close(1008)
    elif websocket.application_state == WebSocketState.CONNECTED:
        await websocket.close(1011)


async def relay(caller: Socket, member: Socket, *, closing: asyncio.Event,
                idle: float = IDLE_TIMEOUT) -> None:
    """Relay frames between ``caller`` and ``member`` until one ends (see the module notes);
    both are closed when it returns, and no task is left running."""
    moved = asyncio.Event()
    up = asyncio.ensure_future(_pump(caller, member, moved))
    down = asyncio.ensure_future(_pump(member, caller, moved))
    stop = asyncio.ensure_future(closing.wait())
    ending = Closed(1001, "the server is stopping")
    try:
        while True:
            done, _ = await asyncio.wait({up, down, stop}, timeout=idle, return_when=asyncio.FIRST_COMPLETED)
            if up in done or down in done:
                ending = (up if up in done else down).result()
                break
            if stop in done:
                break
            if not moved.is_set():
                ending = Closed(1001, f"no frame moved for {idle:g} seconds")
                break
            moved.clear()
    finally:
        with anyio.CancelScope(shield=True):  # the caller's task may be cancelled: still close both
            for task in (up, down, stop):
                task.cancel()
            await asyncio.gather(up, down, stop, return_exceptions=True)
            await asyncio.gather(member.close(ending.code, ending.reason),
                                 caller.close(ending.code, ending.reason), return_exceptions=True)


async def _pump(source: Socket, sink: Socket, moved: asyncio.Event) -> Closed:
    """Frames from ``source`` to ``sink`` until either ends; how it ended."""
    while True:
        try:
            frame = await source.receive()
        except Closed as ended:
            return ended
        if (len(frame) if isinstance(frame, bytes) else len(frame.encode())) > MAX_FRAME:
            return Closed(1009, f"a frame is past {MAX_FRAME} bytes")
        moved.set()
        try:
            await sink.send(frame)
        except Closed as ended:
            return ended


__all__ = [
    "IDLE_TIMEOUT", "MAX_FRAME", "CallerSocket", "Closed", "Dialer", "Frame", "Refused", "Socket",
    "dial_network", "refuse", "relay", "sendable",
]
