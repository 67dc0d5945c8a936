"""The memory backend passes the store conformance suite."""

from __future__ import annotations

from pathlib import Path

from fleetkeeper.store.testing import StoreConformance


class TestMemoryStore(StoreConformance):
    durable = False

    def url(self, tmp_path: Path) -> str:
        return "memory://"
