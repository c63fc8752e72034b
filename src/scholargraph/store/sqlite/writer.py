"""One writer thread per SQLite file, and one read connection per reading thread.

:class:`Writer` owns the file's only write connection. Units of work are queued; the writer thread
takes them one at a time and runs each in its own transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``,
``ROLLBACK`` when the work raises). A unit of work started from inside another (on the writer
thread) joins it. The thread starts with the first unit of work, so read-only uses of a workspace
(``ask``, ``status``) start none.

:class:`Readers` hands every thread its own connection. In WAL mode readers never wait for the
writer and the writer never waits for readers; each read statement sees the last commit.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..units import Hook, WorkThread

T = TypeVar("T")
BUSY_TIMEOUT_S = 30
_names = itertools.count(1)


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) usable from the thread it is
    handed to."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class Readers:
    """One read connection per thread, opened on first use, all closed by :meth:`close`."""

    def __init__(self, path: Path):
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with self._lock:
                if self._closed:
                    raise sqlite3.ProgrammingError("the store is closed")
                conn = connect(self.path)
                self._all.append(conn)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._all:
                conn.close()
            self._all.clear()


class Writer(WorkThread):
    """The one thread that writes one SQLite file (see the module docstring and :class:`~..units.WorkThread`)."""

    closed_error = sqlite3.ProgrammingError

    def __init__(self, conn: sqlite3.Connection, name: str, *, after: Hook | None = None,
                 tick: Callable[[], Callable[[], Any] | None] | None = None, tick_seconds: float | None = None):
        super().__init__(f"scholargraph-{name}-writer-{next(_names)}", after=after, tick=tick,
                         tick_seconds=tick_seconds)
        self.conn = conn

    def _run(self, work: Callable[[], T]) -> T:
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            result = work()
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._finish(False)
            raise
        self._finish(True)
        return result

    def close(self) -> None:
        """Finish the queued work, stop the thread and close the write connection."""
        self._stop()
        self.conn.close()
