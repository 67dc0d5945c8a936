"""The ``sqlite://`` backend: the embedded, durable default (``sqlite:///<state-dir>/state.db``).

Layout: ``objects`` (one row per live object: key, revision, JSON body), ``events``
(one row per revision: the change and, for MODIFIED and DELETED, where the previous body
is, so a resumed watch with a selector can tell "stopped matching" and a continued list
can show what its first page saw), and ``meta`` (the revision counter and the compaction
boundary). A commit is one ``BEGIN IMMEDIATE … COMMIT`` that writes all three, so after
a crash the file holds exactly the acknowledged writes and the counter never goes
backwards.

The previous body of a MODIFIED or DELETED change is the body of an earlier event, so
the row names that event (``prev_rev``) instead of repeating it: bodies are most of what
a commit writes, and a second copy of each made every commit markedly slower. Compaction
keeps the rows that later events name; a previous state already compacted away when
the change is made (an object unchanged for longer than the history) is stored inline
(``prev``), as every row was before schema 2. Files of schema 1 are upgraded in place
when opened: their rows keep their inline bodies.

Why these settings: WAL with ``synchronous=NORMAL`` commits several times faster than
fsyncing every commit and survives a killed process (the WAL is in the OS before ``COMMIT``
returns) but not a power cut; pass ``?synchronous=full`` in the URL to fsync every commit
(README, Benchmarks). One connection does
every read and write, synchronously on the event loop: statements take microseconds,
and under a virtual clock what the store answers must not depend on threads. Only the
WAL checkpoints — copying committed pages into the database file, which changes where
the bytes are and not what they say — run on a thread of their own
(:mod:`~fleetkeeper.store.sqlite_checkpoint`). The connection checks the stored counter
inside every transaction, so a second process writing the same file is detected
instead of corrupting revisions.

History is bounded: at least ``history`` changes are kept; older rows are deleted in
steps of a tenth of that, and a watch from before them gets ``errors.Gone``.

Point reads are served from memory: every write reads the object it replaces (and every
create checks its name is free), which cost a ``SELECT`` each. The backend therefore
keeps the revision and JSON body of every live object — loaded when the file is opened,
updated after each commit — and answers ``get`` from it; lists still scan the table.
The bodies are the bytes already serialized for the table, so the cache costs about the
size of the live objects, and tuples of bytes are invisible to the garbage collector.
The ownership check rides on the counter update (``UPDATE … WHERE v = <ours>``), so a
commit is one statement shorter.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.sqlite_checkpoint import LIMIT, Checkpointer, pages_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (k, v) VALUES ('revision', 0), ('schema', 2);
CREATE TABLE IF NOT EXISTS objects (
    grp TEXT NOT NULL, kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
    rev INTEGER NOT NULL, body BLOB NOT NULL,
    PRIMARY KEY (grp, kind, ns, name)
);
CREATE TABLE IF NOT EXISTS events (
    rev INTEGER PRIMARY KEY, type TEXT NOT NULL,
    grp TEXT NOT NULL, kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
    body BLOB NOT NULL, prev BLOB, prev_rev INTEGER
);
"""
#: schema 1 → 2: MODIFIED rows name the previous event instead of repeating its body
_UPGRADE_1 = "ALTER TABLE events ADD COLUMN prev_rev INTEGER"

_UPSERT = (
    "INSERT INTO objects (grp, kind, ns, name, rev, body) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (grp, kind, ns, name) DO UPDATE SET rev = excluded.rev, body = excluded.body"
)
_DELETE = "DELETE FROM objects WHERE grp = ? AND kind = ? AND ns = ? AND name = ?"
_EVENT = ("INSERT INTO events (rev, type, grp, kind, ns, name, body, prev, prev_rev) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
#: the rows at or below a cutoff that no later event names as its previous state
_COMPACT = ("DELETE FROM events WHERE rev <= ?1 AND rev NOT IN "
            "(SELECT prev_rev FROM events WHERE rev > ?1 AND prev_rev IS NOT NULL)")
#: bodies looked up per statement when a replay needs previous states
_LOOKUP_CHUNK = 500
_ALL = "SELECT grp, kind, ns, name, rev, body FROM objects"
_BUMP = "UPDATE meta SET v = ? WHERE k = 'revision' AND v = ?"
_SYNCHRONOUS = {"off": "OFF", "normal": "NORMAL", "full": "FULL", "extra": "EXTRA"}


class SqliteBackend:
    """One SQLite file (or ``:memory:``); see the module docstring."""

    name = "sqlite"

    def __init__(self, path: str, *, history: int = 10_000, synchronous: str = "normal") -> None:
        if history < 1:
            raise ValueError("history must keep at least one change")
        level = _SYNCHRONOUS.get(synchronous.lower())
        if level is None:
            raise ValueError(f"synchronous must be one of {sorted(_SYNCHRONOUS)}, got {synchronous!r}")
        self.path = path
        self.synchronous = level
        self._keep = history
        self._slack = history // 10
        _create_private(path)
        db = self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                        cached_statements=64)
        wal = db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        db.execute(f"PRAGMA synchronous={level}")
        db.execute("PRAGMA busy_timeout=2000")
        db.execute("PRAGMA cache_size=-65536")
        db.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
        self._upgrade()
        self._revision = int(db.execute("SELECT v FROM meta WHERE k = 'revision'").fetchone()[0])
        boundary = db.execute("SELECT v FROM meta WHERE k = 'compacted'").fetchone()
        if boundary is not None:
            self._compacted = int(boundary[0])
        else:  # schema 1 kept no boundary: every row above it was still there
            oldest = db.execute("SELECT MIN(rev) FROM events").fetchone()[0]
            self._compacted = self._revision if oldest is None else int(oldest) - 1
        #: every live object: key → (revision, body), as in the ``objects`` table
        self._rows: dict[Key, tuple[int, bytes]] = {
            Key(grp, kind, ns, name): (rev, body) for grp, kind, ns, name, rev, body in db.execute(_ALL)}
        self._checkpointer: Checkpointer | None = None
        if wal:  # a file: its WAL is checkpointed off the loop (see sqlite_checkpoint)
            db.execute(f"PRAGMA wal_autocheckpoint={LIMIT}")
            self._checkpointer = Checkpointer(path)

    def _upgrade(self) -> None:
        db = self._db
        columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
        if "prev_rev" in columns:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(_UPGRADE_1)
            db.execute("UPDATE meta SET v = 2 WHERE k = 'schema'")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @property
    def revision(self) -> int:
        return self._revision

    @property
    def compacted(self) -> int:
        return self._compacted

    async def get(self, key: Key) -> Record | None:
        row = self._rows.get(key)
        return None if row is None else Record(row[1], row[0])

    async def scan(
        self,
        gk: GroupKind,
        namespace: str | None,
        *,
        after: tuple[str, str] | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        sql = "SELECT rev, body FROM objects WHERE grp = ? AND kind = ?"
        args: list[object] = [gk.group, gk.kind]
        if namespace is not None:  # one namespace: order by name alone, so the key index serves it
            if after is not None and after[0] > namespace:
                return []
            sql += " AND ns = ?"
            args.append(namespace)
            if after is not None and after[0] == namespace:
                sql += " AND name > ?"
                args.append(after[1])
            sql += " ORDER BY name"
        else:
            if after is not None:
                sql += " AND (ns, name) > (?, ?)"
                args.extend(after)
            sql += " ORDER BY ns, name"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [Record(body, rev) for rev, body in self._db.execute(sql, args)]

    async def commit(self, changes: Sequence[Change]) -> None:
        if not changes:
            return
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            last = changes[-1].revision
            if db.execute(_BUMP, (last, self._revision)).rowcount != 1:
                stored = db.execute("SELECT v FROM meta WHERE k = 'revision'").fetchone()[0]
                raise errors.InternalError(
                    f"{self.path}: revision is {stored} on disk but {self._revision} here; "
                    "another process is writing this store"
                )
            final = self._write(changes)
            compacted = self._compact(last)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self._revision = last
        self._compacted = compacted
        if self._checkpointer is not None:
            self._checkpointer.wrote(pages_of(len(changes), sum(len(c.record.raw) for c in changes)))
        for key, change in final.items():
            if change.type == "DELETED":
                self._rows.pop(key, None)
            else:
                self._rows[key] = (change.revision, change.record.raw)

    def _write(self, changes: Sequence[Change]) -> dict[Key, Change]:
        """Stage ``changes`` in the open transaction; the last change of each key."""
        expected = self._revision + 1
        final: dict[Key, Change] = {}
        events = []
        for change in changes:
            if change.revision != expected:
                raise errors.InternalError(f"revision {change.revision} committed out of order "
                                           f"(expected {expected})")
            expected += 1
            final[change.key] = change
            prev, prev_rev = None, None
            if change.type != "ADDED" and change.prev is not None:
                if change.prev.revision > self._compacted:
                    prev_rev = change.prev.revision  # its row is there, and compaction keeps it
                else:
                    prev = change.prev.raw
            events.append((change.revision, change.type, *change.key, change.record.raw, prev, prev_rev))
        db = self._db
        if len(changes) == 1:
            change = changes[0]
            if change.type == "DELETED":
                db.execute(_DELETE, change.key)
            else:
                db.execute(_UPSERT, (*change.key, change.revision, change.record.raw))
            db.execute(_EVENT, events[0])
            return final
        upserts = [(*k, c.revision, c.record.raw) for k, c in final.items() if c.type != "DELETED"]
        db.executemany(_UPSERT, upserts)
        db.executemany(_DELETE, [k for k, c in final.items() if c.type == "DELETED"])
        db.executemany(_EVENT, events)
        return final

    def _compact(self, last: int) -> int:
        if last - self._compacted <= self._keep + self._slack:
            return self._compacted
        cutoff = last - self._keep
        self._db.execute(_COMPACT, (cutoff,))
        self._db.execute("INSERT INTO meta (k, v) VALUES ('compacted', ?1) "
                         "ON CONFLICT (k) DO UPDATE SET v = ?1", (cutoff,))
        return cutoff

    async def history(self, since: int, gk: GroupKind | None, namespace: str | None) -> list[Change]:
        if since < self._compacted:
            raise errors.Gone(f"too old resource version: {since} ({self._compacted + 1})")
        sql = "SELECT rev, type, grp, kind, ns, name, body, prev, prev_rev FROM events WHERE rev > ?"
        args: list[object] = [since]
        if gk is not None:
            sql += " AND grp = ? AND kind = ?"
            args.extend(gk)
        if namespace is not None:
            sql += " AND ns = ?"
            args.append(namespace)
        sql += " ORDER BY rev"
        rows = self._db.execute(sql, args).fetchall()
        bodies = self._bodies({row[8] for row in rows if row[8] is not None} - {row[0] for row in rows}, rows)
        changes = []
        for rev, kind, grp, k, ns, name, body, prev, prev_rev in rows:
            before = None
            if prev is not None:
                before = Record(prev, 0)
            elif prev_rev is not None:
                before = Record(bodies[prev_rev], prev_rev)
            changes.append(Change(kind, Key(grp, k, ns, name), Record(body, rev), before))
        return changes

    def _bodies(self, wanted: set[int], rows: list[tuple[Any, ...]]) -> dict[int, bytes]:
        """Bodies of the events ``wanted`` (read from the table) and of those in ``rows``."""
        found: dict[int, bytes] = {row[0]: row[6] for row in rows}
        ordered = sorted(wanted)
        for start in range(0, len(ordered), _LOOKUP_CHUNK):
            chunk = ordered[start:start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT rev, body FROM events WHERE rev IN ({marks})", chunk))
        missing = wanted - found.keys()
        if missing:
            raise errors.InternalError(f"{self.path}: previous states {sorted(missing)[:5]} are missing "
                                       "from the history")
        return found

    async def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        self._db.close()


def _create_private(path: str) -> None:
    """Create a new database file readable by its owner only (it holds members' credentials);
    SQLite gives the ``-wal`` and ``-shm`` files the mode of the database."""
    if path == ":memory:" or path.startswith("file:") or not os.path.isdir(os.path.dirname(path) or "."):
        return
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))


def open_backend(location: str, options: dict[str, str], *, history: int) -> SqliteBackend:
    """Build the backend for ``sqlite://<location>?<options>``."""
    unknown = set(options) - {"synchronous"}
    if unknown:
        raise ValueError(f"unknown sqlite store option(s) {sorted(unknown)}; known: synchronous")
    if not location:
        raise ValueError("sqlite store URL needs a path: sqlite:///abs/path.db or sqlite://relative.db")
    if location.startswith("//"):  # ``sqlite:////abs/path.db``, SQLAlchemy's spelling, is accepted too
        location = "/" + location.lstrip("/")
    return SqliteBackend(location, history=history, synchronous=options.get("synchronous", "normal"))


__all__ = ["SqliteBackend", "open_backend"]
