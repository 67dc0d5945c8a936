"""The sqlite backend checkpoints its write-ahead log from a thread of its own, and the
committing connection still bounds the log when that thread falls behind."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from fleetkeeper.store import sqlite as sqlite_backend
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.sqlite import SqliteBackend
from fleetkeeper.store.sqlite_checkpoint import Checkpointer, pages_of

BODY = b'{"data": "' + b"x" * 3000 + b'"}'


def _change(revision: int) -> Change:
    key = Key("", "ConfigMap", "default", f"c{revision % 50}")
    kind = "ADDED" if revision <= 50 else "MODIFIED"
    prev = None if kind == "ADDED" else Record(BODY, revision - 50)
    return Change(kind, key, Record(BODY, revision), prev)


def _size(path: str) -> int:
    return os.path.getsize(path)


def _threads(path: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"sqlite-checkpoint:{path}"]


def _wait(condition: object, seconds: float = 10.0) -> bool:
    """Poll ``condition`` (a callable) until it holds, at most ``seconds`` of real time."""
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


async def test_commits_wake_the_thread_that_checkpoints_and_close_stops_it(tmp_path: Path) -> None:
    path = str(tmp_path / "state.db")
    backend = SqliteBackend(path)
    checkpointer = backend._checkpointer
    assert checkpointer is not None and len(_threads(path)) == 1
    before = _size(path)
    revision = 0
    while checkpointer.runs == 0 and revision < 2000:  # a few steps' worth of pages
        revision += 1
        await backend.commit([_change(revision)])
        if revision % 100 == 0:
            _wait(lambda: checkpointer.runs > 0, seconds=1.0)
    assert _wait(lambda: checkpointer.runs > 0), checkpointer.error
    assert checkpointer.frames > 0
    assert _size(path) > before  # pages were copied into the database file
    await backend.close()
    assert _threads(path) == []
    reopened = SqliteBackend(path)
    try:
        assert reopened.revision == revision
        found = await reopened.get(Key("", "ConfigMap", "default", f"c{revision % 50}"))
        assert found is not None and found.raw == BODY and found.revision == revision
    finally:
        await reopened.close()


async def test_the_committing_connection_bounds_the_log_when_the_thread_falls_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Idle(Checkpointer):  # a thread that never gets to run a checkpoint
        def wrote(self, pages: int) -> None:
            pass

    monkeypatch.setattr(sqlite_backend, "Checkpointer", Idle)
    monkeypatch.setattr(sqlite_backend, "LIMIT", 64)
    path = str(tmp_path / "state.db")
    backend = SqliteBackend(path)
    try:
        sizes = []
        for revision in range(1, 401):  # about 1,600 pages written
            await backend.commit([_change(revision)])
            sizes.append(_size(path + "-wal"))
        # the log starts over after each checkpoint at 64 pages instead of growing to all of them
        assert max(sizes) < 200 * 4096, max(sizes)
        assert backend._checkpointer is not None and backend._checkpointer.runs == 0
    finally:
        await backend.close()


async def test_an_in_memory_database_has_no_log_and_no_thread() -> None:
    backend = SqliteBackend(":memory:")
    try:
        assert backend._checkpointer is None
        await backend.commit([_change(1)])
        assert (await backend.get(_change(1).key)) is not None
    finally:
        await backend.close()


def test_the_page_estimate_counts_rows_and_body_bytes() -> None:
    assert pages_of(1, 100) == 3
    assert pages_of(4, 4 * 4096) == 1 + 8 + 8  # each body is written twice (object and event)
