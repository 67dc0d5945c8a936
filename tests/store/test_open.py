"""open_store picks the backend by URL scheme and says clearly what it cannot open."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store
from fleetkeeper.store.sqlite import SqliteBackend


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("state.db", "has no scheme"),
        ("ftp://host/x", "unknown store URL scheme 'ftp'"),
        ("memory://somewhere", "memory:// takes no path"),
        ("sqlite://", "needs a path"),
        ("sqlite:///tmp/x.db?wal=off", "unknown sqlite store option"),
        ("sqlite:///tmp/x.db?synchronous=sometimes", "synchronous must be one of"),
    ],
    ids=[
        "a bare path has no scheme",
        "an unknown scheme is named",
        "memory takes no path",
        "sqlite needs a path",
        "unknown sqlite options are named",
        "a bad synchronous level is named",
    ],
)
def test_bad_store_urls_raise_a_clear_value_error(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_store(url, clock=SystemClock())


@pytest.mark.parametrize(
    "form",
    ["absolute", "relative"],
    ids=["three slashes mean an absolute path", "two slashes mean a relative path"],
)
async def test_sqlite_urls_name_absolute_and_relative_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    monkeypatch.chdir(tmp_path)
    url = {
        "absolute": f"sqlite://{tmp_path}/abs.db",
        "four slashes": f"sqlite:///{tmp_path}/abs.db",
        "relative": "sqlite://rel.db",
    }[form]
    store = open_store(url, clock=SystemClock())
    try:
        assert isinstance(store.backend, SqliteBackend)
        assert store.backend.path == ("rel.db" if form == "relative" else f"{tmp_path}/abs.db")
        assert store.backend.name == "sqlite"
    finally:
        await store.close()
    assert (tmp_path / ("rel.db" if form == "relative" else "abs.db")).exists()


async def test_the_synchronous_option_reaches_sqlite(tmp_path: Path) -> None:
    store = open_store(f"sqlite://{tmp_path}/s.db?synchronous=full", clock=SystemClock())
    try:
        assert isinstance(store.backend, SqliteBackend)
        assert store.backend.synchronous == "FULL"
    finally:
        await store.close()


async def test_memory_urls_open_the_memory_backend() -> None:
    store = open_store("memory://", clock=SystemClock())
    assert store.backend.name == "memory"
    await store.close()
