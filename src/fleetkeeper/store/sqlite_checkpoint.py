"""Checkpoints of the sqlite backend's write-ahead log, off the event loop.

In WAL mode every commit appends the pages it changed to the ``-wal`` file, and a
*checkpoint* copies them back into the database file, syncing both (with
``synchronous=NORMAL``). SQLite's automatic checkpoint runs inside the ``COMMIT`` that
crosses its threshold (1,000 pages), so on the event loop: in a burst of writes the
few commits that checkpoint stall the loop, and those stalls were a large share of all
the time spent committing.

A :class:`Checkpointer` thread with a connection of its own does that work instead:
the backend tells it how many pages it has probably written (:meth:`Checkpointer.wrote`),
and every :data:`STEP` pages the thread runs a ``PASSIVE`` checkpoint, which copies what
no reader needs while the loop goes on committing (sqlite releases the GIL while it copies
and syncs). Nothing the store returns depends on it: it changes where the bytes are, not
what they say, so a virtual clock's timeline is the same with or without it.

The main connection keeps SQLite's automatic checkpoint, but at :data:`LIMIT` pages
instead of 1,000: the WAL file only starts over after a checkpoint that copied every
frame, which a thread racing a steady stream of commits seldom manages, so that one
bounds the file — and finds little left to copy.
"""

from __future__ import annotations

import sqlite3
import threading

#: pages written between two background checkpoints (SQLite's own default threshold)
STEP = 1000
#: pages at which the committing connection checkpoints itself (and the WAL starts over)
LIMIT = 16_384


class Checkpointer:
    """A thread that checkpoints ``path``'s WAL every :data:`STEP` pages written."""

    def __init__(self, path: str, *, step: int = STEP) -> None:
        self.path = path
        self.step = step
        #: checkpoints run so far, and the frames they found in the WAL (for tests and stats)
        self.runs = 0
        self.frames = 0
        self.error: BaseException | None = None
        self._pending = 0
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=f"sqlite-checkpoint:{path}", daemon=True)
        self._thread.start()

    def wrote(self, pages: int) -> None:
        """Count ``pages`` appended to the WAL; wake the thread every :attr:`step` of them."""
        self._pending += pages
        if self._pending >= self.step:
            self._pending = 0
            self._wake.set()

    def stop(self) -> None:
        """Stop and join the thread (a checkpoint under way finishes first)."""
        self._stopping = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:  # the loop's connection works on: its own checkpoints remain
            self.error = exc
            return
        try:
            db.execute("PRAGMA busy_timeout=2000")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    _, frames, _ = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as exc:  # busy or I/O: the next wake tries again
                    self.error = exc
                    continue
                self.runs += 1
                self.frames = frames
        finally:
            db.close()


def pages_of(changes: int, body_bytes: int) -> int:
    """About how many pages a commit appends: each changed row's leaf (and its overflow), the counter."""
    return 1 + 2 * changes + body_bytes // 2048


__all__ = ["LIMIT", "STEP", "Checkpointer", "pages_of"]
