"""The HAProxy provider with a real HAProxy (Debian ``haproxy``) in front of real member
endpoints: blocking and unblocking go through the runtime API, without a reload, and
fail no request; a new layout reloads seamlessly."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from fleetkeeper.traffic.haproxy import HAProxyError, HAProxyProvider
from fleetkeeper.traffic.routes import RouteTable

from .helpers import Load, send, serving, steady

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None,
                                reason="haproxy is not installed (Debian: apt-get install haproxy)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def haproxy(table: RouteTable, workdir: Path) -> AsyncIterator[tuple[HAProxyProvider, str]]:
    port = free_port()
    provider = HAProxyProvider("127.0.0.1", port, workdir=workdir)
    task = asyncio.get_running_loop().create_task(provider.run())
    try:
        await provider.apply(table)
        await asyncio.wait_for(provider.wait_ready(), 10)
        yield provider, f"http://127.0.0.1:{port}"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert provider.pid is not None


def servers_state(answer: str) -> dict[str, int]:
    """server name → admin state (0 ready, 1 forced maintenance) from ``show servers state``."""
    rows = [line.split() for line in answer.splitlines() if line and not line.startswith("#")]
    return {row[3]: int(row[6]) for row in rows if len(row) > 6}


def test_blocking_is_maintenance_without_a_reload(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving("member1", "member2") as fleet, haproxy(fleet.table(), tmp_path) as (lb, url):
            pid = lb.pid
            load = Load()
            async with httpx.AsyncClient(trust_env=False) as client:
                for _ in range(10):
                    await send(client, url, load)
                assert load.served == {"member1": 5, "member2": 5}
                await lb.apply(fleet.table(blocked=("member1",)))
                state = servers_state(await lb.command("show servers state r0_default_web"))
                assert state["member1"] & 1 and state["member2"] == 0
                for _ in range(10):
                    await send(client, url, load)
                assert load.served == {"member1": 5, "member2": 15}
                await lb.apply(fleet.table())
                for _ in range(10):
                    await send(client, url, load)
            assert load.served == {"member1": 10, "member2": 20} and load.failures == []
            assert (lb.pid, lb.reloads) == (pid, 0)

    asyncio.run(body())


def test_switching_under_steady_load_fails_no_request(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving("member1", "member2") as fleet, haproxy(fleet.table(), tmp_path) as (lb, url):
            load = Load()

            async def flip() -> None:
                for turn in range(6):
                    await asyncio.sleep(0.1)
                    await lb.apply(fleet.table(blocked=("member1",) if turn % 2 == 0 else ()))
                await lb.apply(fleet.table(blocked=("member1",)))

            async with asyncio.timeout(60):
                await asyncio.gather(steady(url, load, count=200, interval=0.004), flip())
                switched = asyncio.get_running_loop().time()
                await steady(url, load, count=20, interval=0.002)
            assert load.failures == [] and load.sent == 220
            assert not [cluster for at, cluster in load.log if at > switched and cluster == "member1"]
            assert lb.reloads == 0

    asyncio.run(body())


def test_a_new_layout_reloads_seamlessly(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving("member1", "member2") as fleet:
            async with haproxy(fleet.table(only=("member1",)), tmp_path) as (lb, url):
                first_pid = lb.pid
                load = Load()
                async with asyncio.timeout(60):
                    await asyncio.gather(steady(url, load, count=100, interval=0.005),
                                         lb.apply(fleet.table()))
                    await steady(url, load, count=20, interval=0.001)
                assert load.failures == []
                assert set(load.served) == {"member1", "member2"}
                assert lb.reloads == 1 and lb.pid != first_pid

    asyncio.run(body())


def test_a_configuration_haproxy_rejects_is_an_error(tmp_path: Path) -> None:
    async def body() -> None:
        provider = HAProxyProvider("not-an-address", free_port(), workdir=tmp_path)
        with pytest.raises(HAProxyError, match="rejected"):
            await provider.apply(RouteTable())
        assert provider.pid is None

    asyncio.run(body())
