"""``fleetkeeper member-sim``'s address on the wire: a TCP relay that can refuse or swallow connections.

A member cluster reached over the network fails the way networks fail, and the client
(and so the control plane) must see exactly that: a cluster that is *down* refuses
connections, one behind a *black hole* accepts nothing it answers. An HTTP server
cannot fake either — whatever it does, it answers. So the member's API server listens
on a private loopback port and clients reach it through this relay, which owns the
public address and relays bytes both ways (TLS passes through untouched):

* ``UP`` / ``UNHEALTHY`` — bytes flow (an unhealthy member is the API server's business:
  its health endpoints answer 500);
* ``DOWN`` — the listening socket is closed (new connections: *connection refused*)
  and every open connection is reset, as when a machine goes away;
* ``BLACKHOLE`` — new connections are accepted and never served; open ones stop
  moving bytes. Leaving the black hole resets those connections: a request lost on
  the wire stays lost.

Going back ``UP`` listens on the same port again (``SO_REUSEADDR``), so clients keep
their URL.
"""

from __future__ import annotations

import asyncio

from fleetkeeper.members.simulated.faults import ApiState

#: bytes relayed per read
CHUNK = 64 * 1024


class _Relay:
    """One client connection and, once the wire flows, its backend connection."""

    def __init__(self, client: asyncio.StreamWriter) -> None:
        self.client = client
        self.backend: asyncio.StreamWriter | None = None
        self.tasks: list[asyncio.Task[None]] = []

    def abort(self) -> None:
        """Reset both connections (the peer sees ECONNRESET, no goodbye)."""
        for writer in (self.client, self.backend):
            if writer is not None:
                writer.transport.abort()
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()


class FrontDoor:
    """Listens on the public address and relays to the API server (see the module notes)."""

    def __init__(self, host: str, port: int, backend: tuple[str, int]) -> None:
        self.host = host
        self.port = port
        self._backend = backend
        self._server: asyncio.Server | None = None
        self._relays: set[_Relay] = set()
        #: relays opened before or during a black hole: reset when it ends
        self._lost: set[_Relay] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()
        self.state = ApiState.UP

    async def start(self) -> None:
        """Listen (``port`` 0 picks a free port, then kept for every later start)."""
        if self._server is None:
            self._server = await asyncio.start_server(self._accept, self.host, self.port, reuse_address=True)
            self.port = self._server.sockets[0].getsockname()[1]

    async def set_state(self, state: ApiState) -> None:
        """Make the wire behave as ``state`` says."""
        previous, self.state = self.state, state
        if previous is ApiState.BLACKHOLE and state is not ApiState.BLACKHOLE:
            for relay in list(self._lost):
                relay.abort()
            self._lost.clear()
        if state is ApiState.DOWN:
            await self._stop_listening()
            for relay in list(self._relays):
                relay.abort()
        elif state is ApiState.BLACKHOLE:
            self._flowing.clear()
            self._lost.update(self._relays)
            await self.start()
        else:
            self._flowing.set()
            await self.start()

    async def close(self) -> None:
        """Stop listening and reset every connection."""
        await self._stop_listening()
        for relay in list(self._relays):
            relay.abort()

    async def _stop_listening(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        relay = _Relay(writer)
        self._relays.add(relay)
        try:
            if self.state is ApiState.BLACKHOLE:
                held = asyncio.current_task()
                relay.tasks = [held] if held is not None else []
                self._lost.add(relay)
                await asyncio.Event().wait()  # until the black hole ends and resets the connection
            backend_reader, relay.backend = await asyncio.open_connection(*self._backend)
            relay.tasks = [asyncio.ensure_future(self._pump(reader, relay.backend, relay)),
                           asyncio.ensure_future(self._pump(backend_reader, writer, relay))]
            await asyncio.gather(*relay.tasks, return_exceptions=True)
        except OSError:
            pass
        finally:
            self._relays.discard(relay)
            self._lost.discard(relay)
            relay.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, relay: _Relay) -> None:
        """Copy bytes one way until EOF (then pass the EOF on); in a black hole, hold them."""
        try:
            while data := await reader.read(CHUNK):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except OSError:
            relay.abort()


__all__ = ["CHUNK", "FrontDoor"]
