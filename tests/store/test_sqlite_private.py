"""A new SQLite store is created readable by its owner only, whatever the umask."""

from __future__ import annotations

import os
from pathlib import Path

from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store


async def test_a_new_database_and_its_wal_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = open_store(f"sqlite:///{tmp_path / 'state.db'}", clock=SystemClock())
        await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}})
        modes = {name: os.stat(tmp_path / name).st_mode & 0o777 for name in os.listdir(tmp_path)}
        await store.close()
    finally:
        os.umask(old)
    assert modes["state.db"] == 0o600 and modes.get("state.db-wal") == 0o600, modes
