"""The built-in load balancer on loopback, in front of real member endpoints.

Requests are counted per serving cluster; switching tables under a steady load must
never fail a request, and a blocked cluster must get no request sent after the switch.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import httpx

from fleetkeeper.traffic.builtin import BACKEND_HEADER, BuiltinProxy
from fleetkeeper.traffic.routes import Backend, Route, RouteTable

from .helpers import Fleet, Load, send, serving, steady


@contextlib.asynccontextmanager
async def proxy(table: RouteTable) -> AsyncIterator[tuple[BuiltinProxy, str]]:
    lb = BuiltinProxy("127.0.0.1", 0)
    await lb.apply(table)
    task = asyncio.get_running_loop().create_task(lb.run())
    try:
        await asyncio.wait_for(lb.wait_ready(), 5)
        host, port = lb.address
        yield lb, f"http://{host}:{port}"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_requests_are_shared_and_a_blocked_cluster_gets_none() -> None:
    async def body() -> None:
        async with serving("member1", "member2") as fleet, proxy(fleet.table()) as (lb, url):
            load = Load()
            async with httpx.AsyncClient(trust_env=False) as client:
                for _ in range(10):
                    await send(client, f"{url}/shop", load)
                response = await client.get(url, headers={"Host": "x"})
                assert response.headers[BACKEND_HEADER] in ("member1", "member2")
                assert load.served == {"member1": 5, "member2": 5}
                await lb.apply(fleet.table(blocked=("member1",)))
                for _ in range(10):
                    await send(client, url, load)
            assert (load.served, load.failures) == ({"member1": 5, "member2": 15}, [])

    asyncio.run(body())


def test_no_route_is_404_and_no_serving_backend_is_503() -> None:
    async def body() -> None:
        async with serving("member1") as fleet:
            only_api = fleet.table(path="/api")
            async with proxy(only_api) as (lb, url), httpx.AsyncClient(trust_env=False) as client:
                assert (await client.get(f"{url}/other")).status_code == 404
                assert (await client.get(f"{url}/api/v1")).status_code == 200
                await lb.apply(fleet.table(blocked=("member1",)))
                assert (await client.get(f"{url}/api")).status_code == 503

    asyncio.run(body())


def test_a_refusing_backend_is_skipped_without_failing_the_request() -> None:
    async def body() -> None:
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        dead_port = closed.getsockname()[1]
        closed.close()
        async with serving("member2") as fleet:
            backends = (Backend("member1", "127.0.0.1", dead_port), Backend("member2", "127.0.0.1",
                                                                            fleet.published["member2"]))
            table = RouteTable((Route("default/web", "", "/", "Prefix", "default/web", backends),))
            async with proxy(table) as (_, url), httpx.AsyncClient(trust_env=False) as client:
                load = Load()
                for _ in range(6):
                    await send(client, url, load)
            assert (load.served, load.failures) == ({"member2": 6}, [])

    asyncio.run(body())


def test_switching_under_steady_load_fails_no_request() -> None:
    async def body() -> None:
        async with serving("member1", "member2") as fleet, proxy(fleet.table()) as (lb, url):
            load = Load()

            async def flip(fleet: Fleet) -> None:
                for turn in range(10):
                    await asyncio.sleep(0.05)
                    await lb.apply(fleet.table(blocked=("member1",) if turn % 2 == 0 else ()))
                await lb.apply(fleet.table(blocked=("member1",)))

            async with asyncio.timeout(30):
                await asyncio.gather(steady(url, load, count=300, interval=0.002), flip(fleet))
                switched = asyncio.get_running_loop().time()
                await steady(url, load, count=20, interval=0.001)
            assert load.failures == []
            assert load.sent == 320 and set(load.served) == {"member1", "member2"}
            assert not [cluster for at, cluster in load.log if at > switched and cluster == "member1"]

    asyncio.run(body())


def test_one_connection_carries_several_requests_and_close_is_honoured() -> None:
    async def body() -> None:
        async with serving("member1") as fleet, proxy(fleet.table()) as (_, url):
            host, port = url.removeprefix("http://").split(":")
            reader, writer = await asyncio.open_connection(host, int(port))
            request = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
            writer.write(request + request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 5)  # EOF: the proxy closed after the second
            writer.close()
            assert answer.count(b"HTTP/1.1 200 OK") == 2
            assert answer.endswith(b"member1\n")

    asyncio.run(body())
