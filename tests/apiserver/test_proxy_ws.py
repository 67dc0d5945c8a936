"""The cluster proxy's WebSocket relay, against a small ``websockets`` echo server on loopback.

The caller reaches the plane in-process (:class:`~fleetkeeper.apiserver.asgi_socket.AsgiDialer`
on the API server's app); the plane dials the member over the network: frames go both ways,
close codes pass through, a frame past the bound closes both sides, an idle relay is
closed, and nothing is left running once a relay ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from fleetkeeper.apiserver.asgi_socket import AsgiDialer
from fleetkeeper.apiserver.proxy import Connection
from fleetkeeper.apiserver.proxy_ws import MAX_FRAME, Closed, Refused, Socket, sendable

from .helpers import ADMIN, AGENT, Api, close_api, open_api

PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"
EXEC = "/api/v1/namespaces/default/pods/p/exec?command=env"
OFFERED = ("v5.channel.k8s.io", "v4.channel.k8s.io")


@dataclass
class _Echo:
    """What the member saw: the headers of each upgrade and how each connection ended."""

    server: Server | None = None
    headers: list[Mapping[str, str]] = field(default_factory=list)
    ended: asyncio.Queue[tuple[int, str]] = field(default_factory=asyncio.Queue)

    async def handle(self, connection: ServerConnection) -> None:
        assert connection.request is not None
        self.headers.append({k.lower(): v for k, v in connection.request.headers.raw_items()})
        if connection.request.path.startswith("/gone"):
            return
        try:
            async for frame in connection:
                if frame == "close":
                    await connection.close(4001, "bye")
                else:
                    await connection.send(frame)
        except ConnectionClosed:
            pass
        self.ended.put_nowait((connection.close_code or 1006, connection.close_reason or ""))


class _Loopback:
    """Reaches ``https://echo`` members at the echo server, with the member's own token."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        if cluster["spec"].get("apiEndpoint") != "https://echo":
            return None
        return Connection(f"http://127.0.0.1:{self.port}", (("Authorization", "Bearer member-token"),))


@pytest.fixture
async def relayed() -> AsyncIterator[tuple[Api, _Echo]]:
    echo = _Echo()

    def choose(connection: ServerConnection, offered: Sequence[Subprotocol]) -> Subprotocol | None:
        return Subprotocol("v4.channel.k8s.io") if "v4.channel.k8s.io" in offered else None

    echo.server = await serve(echo.handle, "127.0.0.1", 0, select_subprotocol=choose, max_size=4 * MAX_FRAME)
    api = await open_api()
    api.app.proxy.transports.insert(0, _Loopback(echo.server.sockets[0].getsockname()[1]))
    for name, spec in (("member1", {"syncMode": "Push", "apiEndpoint": "https://echo"}),
                       ("edge1", {"syncMode": "Pull"})):
        body = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
                "spec": spec}
        made = await api.http.post("/apis/cluster.karmada.io/v1alpha1/clusters", json=body)
        assert made.status_code == 201, made.text
    try:
        yield api, echo
    finally:
        await close_api(api)
        echo.server.close()
        await echo.server.wait_closed()


async def _open(api: Api, token: str, path: str = EXEC, cluster: str = "member1") -> Socket:
    headers = [("Authorization", f"Bearer {token}"), ("X-Caller", "caller")]
    return await AsgiDialer(api.app, "plane").dial(PROXY.format(cluster) + path, headers=headers,
                                                   subprotocols=OFFERED)


async def test_frames_go_both_ways_with_the_members_subprotocol_and_credentials(relayed: Any) -> None:
    api, echo = relayed
    before = asyncio.all_tasks()
    caller = await _open(api, ADMIN)
    assert caller.subprotocol == "v4.channel.k8s.io"
    await caller.send(b"\x00stdin")
    assert await caller.receive() == b"\x00stdin"
    await caller.send("text frame")
    assert await caller.receive() == "text frame"
    seen = echo.headers[0]
    assert seen["authorization"] == "Bearer member-token" and "x-caller" not in seen
    assert seen["sec-websocket-protocol"] == ", ".join(OFFERED)
    await caller.send("close")  # the member closes with 4001 "bye": the caller is closed alike
    with pytest.raises(Closed) as ended:
        await caller.receive()
    assert (ended.value.code, ended.value.reason) == (4001, "bye")
    assert await asyncio.wait_for(echo.ended.get(), 5) == (4001, "bye")
    await caller.close(1000, "")
    await asyncio.sleep(0)
    assert asyncio.all_tasks() - before == set()


async def test_the_callers_close_code_reaches_the_member(relayed: Any) -> None:
    api, echo = relayed
    caller = await _open(api, ADMIN)
    await caller.send(b"x")
    assert await caller.receive() == b"x"
    await caller.close(4002, "done")
    assert await asyncio.wait_for(echo.ended.get(), 5) == (4002, "done")


async def test_a_frame_past_the_bound_closes_both_sides_with_1009(relayed: Any) -> None:
    api, echo = relayed
    caller = await _open(api, ADMIN)
    await caller.send(b"\x00" * (MAX_FRAME + 1))
    with pytest.raises(Closed) as ended:
        await caller.receive()
    assert ended.value.code == 1009
    assert (await asyncio.wait_for(echo.ended.get(), 5))[0] == 1009


async def test_an_idle_relay_is_closed(relayed: Any) -> None:
    api, echo = relayed
    api.app.proxy.idle_timeout = 0.05
    caller = await _open(api, ADMIN)
    with pytest.raises(Closed) as ended:
        await asyncio.wait_for(caller.receive(), 5)
    assert ended.value.code == 1001 and "no frame moved" in ended.value.reason
    assert (await asyncio.wait_for(echo.ended.get(), 5))[0] == 1001


async def test_a_member_that_ends_without_a_close_frame_ends_the_callers_side(relayed: Any) -> None:
    api, _ = relayed
    caller = await _open(api, ADMIN, "/gone")
    with pytest.raises(Closed) as ended:
        await asyncio.wait_for(caller.receive(), 5)
    assert ended.value.code in (1000, 1011)


async def test_refusals_are_the_http_answers_of_a_plain_request(relayed: Any) -> None:
    api, _ = relayed
    with pytest.raises(Refused) as agent:
        await _open(api, AGENT)
    assert agent.value.status == 403 and b'cannot proxy resource \\"clusters/proxy\\"' in agent.value.body
    with pytest.raises(Refused) as pulled:
        await _open(api, ADMIN, cluster="edge1")
    assert pulled.value.status == 503 and b"Pull mode" in pulled.value.body
    with pytest.raises(Refused) as unknown:
        await _open(api, ADMIN, cluster="nowhere")
    assert unknown.value.status == 404


def test_close_codes_that_cannot_be_sent_are_replaced() -> None:
    assert [sendable(c) for c in (1000, 1005, 1006, 1009, 1015, 1004, 4001, 999, 5000)] == \
        [1000, 1000, 1011, 1009, 1011, 1011, 4001, 1011, 1011]
