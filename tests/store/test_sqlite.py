"""The sqlite backend passes the store conformance suite, durability included; it refuses a
second writer on its file, and serves point reads from memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetkeeper import errors
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.sqlite import SqliteBackend
from fleetkeeper.store.testing import StoreConformance


class TestSqliteStore(StoreConformance):
    durable = True

    def url(self, tmp_path: Path) -> str:
        return f"sqlite://{tmp_path}/state.db"


def _change(revision: int, name: str, body: bytes) -> Change:
    return Change("ADDED", Key("", "ConfigMap", "default", name), Record(body, revision), None)


async def test_a_second_writer_on_the_same_file_is_detected_and_changes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "state.db")
    one, two = SqliteBackend(path), SqliteBackend(path)
    try:
        await one.commit([_change(1, "first", b'{"v": 1}')])
        with pytest.raises(errors.InternalError, match="another process is writing this store"):
            await two.commit([_change(1, "second", b'{"v": 2}')])
        assert await two.get(Key("", "ConfigMap", "default", "second")) is None
        reopened = SqliteBackend(path)
        assert reopened.revision == 1
        found = await reopened.get(Key("", "ConfigMap", "default", "first"))
        assert found is not None and found.raw == b'{"v": 1}'
        assert await reopened.get(Key("", "ConfigMap", "default", "second")) is None
        await reopened.close()
    finally:
        await one.close()
        await two.close()


async def test_reads_come_from_memory_and_follow_every_commit(tmp_path: Path) -> None:
    backend = SqliteBackend(str(tmp_path / "state.db"))
    key = Key("", "ConfigMap", "default", "c")
    try:
        await backend.commit([_change(1, "c", b'{"v": 1}')])
        await backend.commit([Change("MODIFIED", key, Record(b'{"v": 2}', 2), Record(b'{"v": 1}', 1))])
        found = await backend.get(key)
        assert found is not None and (found.revision, found.raw) == (2, b'{"v": 2}')
        await backend.commit([Change("DELETED", key, Record(b'{"v": 2}', 3), Record(b'{"v": 2}', 2))])
        assert await backend.get(key) is None
    finally:
        await backend.close()
