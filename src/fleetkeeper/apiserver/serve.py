"""Serving the API server over HTTPS with uvicorn.

Two ways, one configuration:

* :func:`serve` runs in the caller's event loop until ``stop`` is set — what
  ``fleetkeeper up`` uses, next to the controllers in the same loop;
* :class:`ServerThread` runs the server on its own thread and event loop — for tests,
  benchmarks and tools that need a real listening server next to synchronous code
  (kubectl subprocesses). Everything the server uses (the store included) is built
  *inside* that loop by an async context manager factory, because asyncio objects
  belong to the loop that made them.

The listening socket is bound before uvicorn starts (``port=0`` picks a free port and
:attr:`ServerThread.port` reports it), so there is no race between choosing a port and
listening on it. Stopping first ends open watches (``ApiServerApp.close``), so uvicorn's
graceful shutdown does not wait for them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import threading
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import uvicorn

from fleetkeeper.apiserver.app import ApiServerApp
from fleetkeeper.apiserver.certs import TLSFiles
from fleetkeeper.apiserver.proxy_ws import MAX_FRAME

T = TypeVar("T")
AppFactory = Callable[[], AbstractAsyncContextManager[ApiServerApp]]
#: bound on the 10 ms polls waiting for uvicorn's startup (30 s)
STARTUP_POLLS = 3000


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``0``: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted connections only then, and
    # without it every keep-alive response waits ~40 ms for a delayed ACK (Nagle's algorithm)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _config(app: ApiServerApp, sock: socket.socket, tls: TLSFiles | None) -> uvicorn.Config:
    host, port = sock.getsockname()[:2]
    return uvicorn.Config(
        app, host=host, port=port, lifespan="off", access_log=False, log_level="warning",
        ssl_certfile=str(tls.cert) if tls else None, ssl_keyfile=str(tls.key) if tls else None,
        timeout_graceful_shutdown=5, timeout_keep_alive=30, server_header=False, ws_max_size=MAX_FRAME,
    )


async def serve(app: ApiServerApp, *, sock: socket.socket, tls: TLSFiles | None,
                stop: asyncio.Event, started: asyncio.Event | None = None) -> None:
    """Serve ``app`` on ``sock`` (HTTPS when ``tls`` is given) until ``stop`` is set.

    ``started`` is set once uvicorn has finished starting up.
    """
    server = uvicorn.Server(_config(app, sock, tls))

    async def supervise() -> None:
        for _ in range(STARTUP_POLLS):
            if server.started or stop.is_set():
                break
            await asyncio.sleep(0.01)
        if started is not None:
            started.set()
        await stop.wait()
        app.close()
        server.should_exit = True

    supervisor = asyncio.ensure_future(supervise())
    try:
        await server.serve(sockets=[sock])
    finally:
        supervisor.cancel()
        app.close()
        if started is not None:
            started.set()


class ServerThread:
    """A real API server on a background thread (see the module notes)."""

    def __init__(self, factory: AppFactory, *, host: str = "127.0.0.1", port: int = 0,
                 tls: TLSFiles | None = None) -> None:
        self._factory = factory
        self._sock = bind(host, port)
        self._tls = tls
        self.host = host
        self.port: int = self._sock.getsockname()[1]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=f"apiserver:{self.port}", daemon=True)

    @property
    def url(self) -> str:
        scheme = "https" if self._tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Start serving; return once the server accepts connections."""
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"the API server did not start within {timeout}s")
        if self._error is not None:
            raise RuntimeError("the API server failed to start") from self._error
        return self

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        """Run ``coro`` on the server's event loop and return its result."""
        assert self._loop is not None, "the server is not running"
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop serving (open watches end) and wait for the thread."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the API server did not stop within {timeout}s")

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as exc:  # reported to start(); the thread must not die silently
            self._error = exc
        finally:
            self._ready.set()
            self._sock.close()

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        started = asyncio.Event()
        async with self._factory() as app:
            server_task = asyncio.ensure_future(
                serve(app, sock=self._sock, tls=self._tls, stop=self._stop, started=started))
            await started.wait()
            self._ready.set()
            await server_task


__all__ = ["AppFactory", "ServerThread", "bind", "serve"]
