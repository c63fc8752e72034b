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
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

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


class _Stop:
    pass


_STOP = _Stop()
Hook = Callable[[bool], None]  # called after each transaction: committed?


class Writer:
    """The one thread that writes one SQLite file (see the module docstring).

    ``after`` runs on the writer thread after each transaction ends (True: committed). ``tick``
    runs as a unit of work whenever the queue stays empty ``tick_seconds`` (when it returns
    something to do)."""

    def __init__(self, conn: sqlite3.Connection, name: str, *, after: Hook | None = None,
                 tick: Callable[[], Callable[[], Any] | None] | None = None, tick_seconds: float | None = None):
        self.conn = conn
        self.name = f"scholargraph-{name}-writer-{next(_names)}"
        self._after = after
        self._tick = tick
        self._tick_seconds = tick_seconds
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future] | _Stop] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self._depth = 0

    # -- submitting work ---------------------------------------------------------------------

    def on_writer_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def in_work(self) -> bool:
        """True on the writer thread while a unit of work runs (its reads must use ``conn``)."""
        return self._depth > 0 and self.on_writer_thread()

    def write(self, work: Callable[[], T]) -> T:
        if self.on_writer_thread():
            return self._nested(work)
        return self.submit(work).result()

    def submit(self, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        if self.on_writer_thread():  # joins the unit of work in progress
            try:
                future.set_result(self._nested(work))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                future.set_exception(exc)
            return future
        self._ensure_started()
        self._queue.put((work, future))
        return future

    def _nested(self, work: Callable[[], T]) -> T:
        if self._depth == 0:
            return self._run(work)
        self._depth += 1
        try:
            return work()
        finally:
            self._depth -= 1

    def start(self) -> None:
        """Start the thread now (it starts with the first unit of work otherwise)."""
        self._ensure_started()

    def _ensure_started(self) -> None:
        if self._closed:
            raise sqlite3.ProgrammingError("the store is closed")
        if self._thread is not None:
            return
        with self._start_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the store is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()

    # -- the writer thread -------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=self._tick_seconds) if self._tick_seconds else self._queue.get()
            except queue.Empty:
                work = self._tick() if self._tick else None
                if work is not None:
                    try:
                        self._run(work)
                    except Exception:  # noqa: BLE001 - the held rows stay held; the next tick retries
                        pass
                continue
            if isinstance(item, _Stop):
                return
            work, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._run(work))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                future.set_exception(exc)

    def _run(self, work: Callable[[], T]) -> T:
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            result = work()
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._depth = 0
            if self._after:
                self._after(False)
            raise
        self._depth = 0
        if self._after:
            self._after(True)
        return result

    def close(self) -> None:
        """Finish the queued work, stop the thread and close the write connection."""
        with self._start_lock:
            self._closed = True
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            self._queue.put(_STOP)
            thread.join()
        self.conn.close()
