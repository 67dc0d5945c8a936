"""The built-in load balancer: a small HTTP/1.1 reverse proxy on asyncio.

It listens on one address and, for each request, takes the route the
:class:`~fleetkeeper.traffic.routes.RouteTable` gives for its ``Host`` and path, picks
the next serving backend round-robin and forwards the request (``httpx``, pooled
keep-alive connections per backend). The answer goes back as it came, with
``X-Fleetkeeper-Backend: <cluster>`` added; no route is ``404``, a route without a
serving backend ``503``.

**Switching without failures.** A new table replaces the old one in one assignment, so
every request is routed by one table or the other, never a mix; requests already sent
to a backend that becomes blocked finish there (the backend keeps serving — blocking is
about *new* traffic). A backend that refuses the connection (or does not accept it in
``connect_timeout``) never saw the request, so the next backend is tried; any other
failure is ``502``, since the request may have been processed.

Deliberately small: requests and responses are read whole (``Content-Length``; chunked
request bodies are refused with ``411``), which is what health endpoints and the APIs
behind an ingress in tests need. It is a provider for trying fleetkeeper out and for
tests; the HAProxy provider is for serving real traffic.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools

import httpx
import structlog

from fleetkeeper.traffic.routes import Backend, Route, RouteTable

BACKEND_HEADER = "X-Fleetkeeper-Backend"
MAX_HEAD = 64 * 1024
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer",
                         "transfer-encoding", "upgrade", "content-length", "host"})
_log = structlog.get_logger("fleetkeeper.traffic.builtin")


class _Reject(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class BuiltinProxy:
    """The built-in L7 provider (see the module notes)."""

    name = "traffic-builtin"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, connect_timeout: float = 2.0,
                 timeout: float = 30.0) -> None:
        self._host = host
        self._port = port
        self._table = RouteTable()
        self._turn = itertools.count()
        self._timeouts = httpx.Timeout(timeout, connect=connect_timeout)
        self._client: httpx.AsyncClient | None = None
        self._server: asyncio.Server | None = None
        self._ready = asyncio.Event()

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("the proxy is not serving")
        host, port = self._server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    async def wait_ready(self) -> None:
        await self._ready.wait()

    async def apply(self, table: RouteTable) -> None:
        self._table = table

    async def run(self) -> None:
        self._client = httpx.AsyncClient(timeout=self._timeouts, trust_env=False)
        try:
            self._server = await asyncio.start_server(self._serve, self._host, self._port, limit=MAX_HEAD)
            self._ready.set()
            async with self._server:
                await self._server.serve_forever()
        finally:
            self._ready.clear()
            await self._client.aclose()

    # ------------------------------------------------------------------ one connection
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    return
                method, target, version, headers = _parse_head(head)
                close = _wants_close(version, headers)
                try:
                    body = await _read_body(reader, headers)
                    status, reason, out_headers, content = await self._forward(method, target, headers, body)
                except _Reject as exc:
                    status, reason, out_headers, content = exc.status, exc.reason, [], f"{exc}\n".encode()
                writer.write(_render(status, reason, out_headers, content, close=close))
                await writer.drain()
                if close:
                    return
        except (ConnectionError, ValueError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _forward(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
                       ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        host = next((v for k, v in headers if k.lower() == "host"), "")
        route = self._table.match(host, target)
        if route is None:
            raise _Reject(404, "Not Found")
        assert self._client is not None
        forwarded = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
        for backend in self._order(route):
            url = f"http://{backend.host}:{backend.port}{target}"
            try:
                response = await self._client.request(method, url, headers=forwarded, content=body or None)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                _log.info("backend refused; trying the next", cluster=backend.cluster, error=repr(exc))
                continue
            except httpx.HTTPError as exc:
                _log.warning("backend failed", cluster=backend.cluster, error=repr(exc))
                raise _Reject(502, "Bad Gateway") from None
            out = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_BY_HOP]
            out.append((BACKEND_HEADER, backend.cluster))
            return response.status_code, response.reason_phrase, out, response.content
        raise _Reject(503, "Service Unavailable")

    def _order(self, route: Route) -> list[Backend]:
        """The serving backends, starting at the next one in turn."""
        serving = list(route.serving)
        if not serving:
            return []
        start = next(self._turn) % len(serving)
        return serving[start:] + serving[:start]


def _parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return method, target, version, headers


def _wants_close(version: str, headers: list[tuple[str, str]]) -> bool:
    connection = next((v.lower() for k, v in headers if k.lower() == "connection"), "")
    return connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]]) -> bytes:
    values = {k.lower(): v for k, v in headers}
    if "chunked" in values.get("transfer-encoding", "").lower():
        raise _Reject(411, "Length Required")
    length = int(values.get("content-length", "0") or 0)
    return await reader.readexactly(length) if length else b""


def _render(status: int, reason: str, headers: list[tuple[str, str]], body: bytes, *, close: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers]
    lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


__all__ = ["BACKEND_HEADER", "BuiltinProxy"]
