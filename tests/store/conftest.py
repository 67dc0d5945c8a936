"""Fixtures of the etcd backend's tests: a throwaway etcd per test, and two stores sharing one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store

from .etcd_server import EtcdServer, etcd_server


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[EtcdServer]:
    """A real etcd on a free loopback port, its data in the test's temp directory."""
    server = etcd_server(tmp_path / "etcd")
    yield server
    server.stop()


@pytest.fixture
async def pair(etcd: EtcdServer) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on one etcd, as two control-plane processes would open it."""
    one, two = open_store(etcd.url, clock=SystemClock()), open_store(etcd.url, clock=SystemClock())
    yield one, two
    await one.close()
    await two.close()
