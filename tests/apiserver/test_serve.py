"""A real HTTPS server on a free loopback port, reached by the REST client from a kubeconfig."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from fleetkeeper import errors
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.apiserver import (
    ApiServerApp,
    ServerThread,
    Tokens,
    build_app,
    ensure_certificates,
    write_kubeconfig,
)
from fleetkeeper.client.rest import RestClient
from fleetkeeper.client.testing import member
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServerThread, Path]]:
    clock = SystemClock()
    tls = ensure_certificates(tmp_path / "pki", clock=clock)

    @asynccontextmanager
    async def factory() -> AsyncIterator[ApiServerApp]:
        store = open_store(f"sqlite:///{tmp_path / 'state.db'}", clock=clock)
        try:
            yield build_app(store, clock=clock, tokens=Tokens(admin="secret"))
        finally:
            await store.close()

    server = ServerThread(factory, tls=tls).start()
    try:
        yield server, write_kubeconfig(tmp_path / "admin.kubeconfig", server.url, tls.ca_pem(), "secret")
    finally:
        server.stop()


async def test_the_rest_client_talks_https_with_a_token(served: tuple[ServerThread, Path]) -> None:
    server, kubeconfig = served
    assert server.url.startswith("https://127.0.0.1:")
    async with RestClient.from_kubeconfig(kubeconfig) as client:
        made = await client.create(member("m1"))
        events = client.watch(Cluster, resource_version=made.metadata.resource_version)
        await client.patch(Cluster, "m1", patch={"metadata": {"labels": {"seen": "yes"}}})
        async with asyncio.timeout(10):
            event = await anext(events)
        assert (event.type, event.object.labels()) == ("MODIFIED", {"seen": "yes"})
        await events.aclose()  # type: ignore[attr-defined]


async def test_the_server_refuses_clients_that_do_not_trust_its_ca(served: tuple[ServerThread, Path]) -> None:
    server, _ = served
    async with RestClient(server.url, token="secret") as client:
        with pytest.raises(errors.InternalError, match="cannot reach"):
            await client.list(Cluster)


def test_stopping_ends_open_watches(tmp_path: Path) -> None:
    clock = SystemClock()

    @asynccontextmanager
    async def factory() -> AsyncIterator[ApiServerApp]:
        store = open_store("memory://", clock=clock)
        try:
            yield build_app(store, clock=clock)
        finally:
            await store.close()

    server = ServerThread(factory).start()
    clusters = "/apis/cluster.karmada.io/v1alpha1/clusters"
    with httpx.Client(base_url=server.url, timeout=10) as http, \
            http.stream("GET", clusters, params={"watch": "1"}) as response:
        assert response.status_code == 200
        server.stop(timeout=20)
        assert response.read() == b""
