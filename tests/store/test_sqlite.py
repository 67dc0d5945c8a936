"""The sqlite backend passes the store conformance suite, durability included; it refuses a
second writer on its file, and serves point reads from memory."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import VirtualClock
from fleetkeeper.store import Store, open_store
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.sqlite import SqliteBackend
from fleetkeeper.store.testing import StoreConformance

CONFIGMAPS = GroupKind("", "ConfigMap")


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


def _labelled(name: str, tier: str, revision: int) -> bytes:
    return orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": name, "namespace": "default", "labels": {"tier": tier},
                                      "resourceVersion": str(revision)}})


async def _store(path: Path, history: int) -> Store:
    return open_store(f"sqlite://{path}", clock=VirtualClock(), history=history)


async def _fill(store: Store, prefix: str, count: int) -> None:
    for index in range(count):
        await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": f"{prefix}-{index}", "namespace": "default"}})


async def _left_web(store: Store, since: int) -> tuple[str, dict[str, str], int]:
    watch = store.watch(CONFIGMAPS, since=since, label_selector="tier=web")
    try:
        event = await asyncio.wait_for(anext(aiter(watch)), 1)
    finally:
        await watch.close()
    return event.type, event.object["metadata"]["labels"], event.revision


async def test_a_previous_state_older_than_the_history_is_kept_inline(tmp_path: Path) -> None:
    store = await _store(tmp_path / "state.db", history=10)
    try:
        kept = await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "kept", "namespace": "default",
                                                "labels": {"tier": "web"}}})
        await _fill(store, "filler", 30)
        assert store.backend.compacted > rv(kept), "kept's only event is compacted away"
        left = await store.update({**kept, "metadata": {**kept["metadata"], "labels": {"tier": "db"}}})
        assert await _left_web(store, rv(left) - 1) == ("DELETED", {"tier": "web"}, rv(left))
    finally:
        await store.close()


async def test_compaction_keeps_the_events_that_later_events_name_as_their_previous_state(
        tmp_path: Path) -> None:
    store = await _store(tmp_path / "state.db", history=10)
    try:
        made = await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "x", "namespace": "default",
                                                "labels": {"tier": "web"}}})
        web = await store.update({**made, "data": {"k": "v"}})
        await _fill(store, "filler", 8)
        left = await store.update({**web, "metadata": {**web["metadata"], "labels": {"tier": "db"}}})
        await _fill(store, "more", 8)
        assert rv(web) < store.backend.compacted < rv(left), "web's event is below the boundary"
        assert await _left_web(store, rv(left) - 1) == ("DELETED", {"tier": "web"}, rv(left))
    finally:
        await store.close()


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def test_modified_rows_name_their_previous_event_instead_of_repeating_it(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = await _store(path, history=1000)
    try:
        made = await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "c", "namespace": "default"}})
        await store.update({**made, "data": {"k": "v"}})
    finally:
        await store.close()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT rev, type, prev IS NULL, prev_rev FROM events ORDER BY rev").fetchall()
    db.close()
    assert rows == [(1, "ADDED", 1, None), (2, "MODIFIED", 1, 1)]


async def test_the_compaction_boundary_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = await _store(path, history=10)
    kept = await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "kept", "namespace": "default"}})
    for index in range(25):
        await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": f"filler-{index}", "namespace": "default"}})
    await store.update({**kept, "data": {"k": "v"}})  # names kept's row, which compaction then keeps
    for index in range(12):
        await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": f"more-{index}", "namespace": "default"}})
    boundary = store.backend.compacted
    await store.close()
    reopened = await _store(path, history=10)
    try:
        assert reopened.backend.compacted == boundary > 1
        with pytest.raises(errors.Gone):
            watch = reopened.watch(CONFIGMAPS, since=1)
            await asyncio.wait_for(anext(aiter(watch)), 1)
    finally:
        await reopened.close()


async def test_a_schema_1_file_is_upgraded_and_its_inline_previous_states_still_serve(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
        INSERT INTO meta (k, v) VALUES ('revision', 2), ('schema', 1);
        CREATE TABLE objects (grp TEXT NOT NULL, kind TEXT NOT NULL, ns TEXT NOT NULL,
            name TEXT NOT NULL, rev INTEGER NOT NULL, body BLOB NOT NULL,
            PRIMARY KEY (grp, kind, ns, name));
        CREATE TABLE events (rev INTEGER PRIMARY KEY, type TEXT NOT NULL, grp TEXT NOT NULL,
            kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, body BLOB NOT NULL, prev BLOB);
    """)
    web, other = _labelled("c", "web", 1), _labelled("c", "db", 2)
    db.execute("INSERT INTO objects VALUES ('', 'ConfigMap', 'default', 'c', 2, ?)", (other,))
    insert = "INSERT INTO events VALUES (?, ?, '', 'ConfigMap', 'default', 'c', ?, ?)"
    db.execute(insert, (1, "ADDED", web, None))
    db.execute(insert, (2, "MODIFIED", other, web))
    db.commit()
    db.close()
    store = await _store(path, history=1000)
    try:
        watch = store.watch(CONFIGMAPS, since=1, label_selector="tier=web")
        event = await asyncio.wait_for(anext(aiter(watch)), 1)
        await watch.close()
        seen = (event.type, event.object["metadata"]["labels"], event.revision)
        assert seen == ("DELETED", {"tier": "web"}, 2)
        await store.update({**orjson.loads(other), "data": {"k": "v"}})
    finally:
        await store.close()
    db = sqlite3.connect(path)
    schema = db.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()[0]
    newest = db.execute("SELECT prev IS NULL, prev_rev FROM events WHERE rev = 3").fetchone()
    db.close()
    assert (schema, newest) == (2, (1, 2))
