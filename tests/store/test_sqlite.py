"""The sqlite backend passes the store conformance suite, durability included."""

from __future__ import annotations

from pathlib import Path

from fleetkeeper.store.testing import StoreConformance


class TestSqliteStore(StoreConformance):
    durable = True

    def url(self, tmp_path: Path) -> str:
        return f"sqlite://{tmp_path}/state.db"
