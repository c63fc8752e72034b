"""What both backends share about units of work (the ``Writes`` role, see :mod:`.base`).

Each backend runs its units of work on one :class:`WorkThread` (``sqlite.writer.Writer``: the
file's one write connection; ``postgres.conn.UnitsOfWork``: a connection of its own, conflicts run
again), which says only how one transaction runs. :class:`RunsUnitsOfWork` answers the store's
``Writes`` role from that object, once for both.

:class:`SqlSeam` is what a role object shared by both backends (:mod:`.mentions_role`,
:mod:`.analysis_role`, :mod:`.facts_role`, :mod:`.documents_role`) needs of its backend: reads
that see the unit of work in progress, writes inside one, and where the backends differ (the
parameter mark, binding a list, concurrent writers).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .base import batches

T = TypeVar("T")


class WorkRunner(Protocol):
    def write(self, work: Callable[[], T]) -> T: ...

    def submit(self, work: Callable[[], T]) -> Future[T]: ...


class _Stop:
    pass


_STOP = _Stop()
Hook = Callable[[bool], None]  # called after each transaction: committed?


class WorkThread:
    """One thread that runs units of work one at a time, each in a transaction of the backend's
    (:meth:`_run`). Units of work are queued; one started from inside another (on the thread) joins
    it. The thread starts with the first unit of work, so read-only uses of a workspace start none.

    ``after(committed)`` runs on the thread after each transaction ends. ``tick`` runs as a unit of
    work whenever the queue stays empty ``tick_seconds`` (when it returns something to do).
    ``closed_error`` is what a unit of work submitted after :meth:`close` raises."""

    closed_error: type[Exception] = RuntimeError

    def __init__(self, name: str, *, after: Hook | None = None,
                 tick: Callable[[], Callable[[], Any] | None] | None = None, tick_seconds: float | None = None):
        self.name = name
        self._after = after
        self._tick = tick
        self._tick_seconds = tick_seconds
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future] | _Stop] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self._depth = 0

    def on_writer_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def in_work(self) -> bool:
        """True on the thread while a unit of work runs (its reads must use the unit of work's connection)."""
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
            raise self.closed_error("the store is closed")
        if self._thread is not None:
            return
        with self._start_lock:
            if self._closed:
                raise self.closed_error("the store is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=self._tick_seconds) if self._tick_seconds else self._queue.get()
            except queue.Empty:
                work = self._tick() if self._tick else None
                if work is not None:
                    try:
                        self._run(work)
                    except Exception:  # noqa: BLE001 - what the tick had to do stays to do; the next tick retries
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
        """Run ``work`` in one transaction on the thread: ``self._depth = 1`` while it runs, then
        :meth:`_finish` (committed or not)."""
        raise NotImplementedError

    def _finish(self, committed: bool) -> None:
        self._depth = 0
        if self._after:
            self._after(committed)

    def _stop(self) -> None:
        """Finish the queued work and stop the thread (from any thread but its own)."""
        with self._start_lock:
            self._closed = True
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            self._queue.put(_STOP)
            thread.join()


class RunsUnitsOfWork:
    """A store whose units of work its ``units`` object runs."""

    units: WorkRunner

    def write(self, work: Callable[[], T]) -> T:
        return self.units.write(work)

    def submit(self, work: Callable[[], T]) -> Future[T]:
        return self.units.submit(work)

    async def awrite(self, work: Callable[[], T]) -> T:
        return await asyncio.wrap_future(self.submit(work))


def _one_writer(name: str) -> None:
    """SQLite: one process writes at a time; units of work never need to take turns."""


@dataclass(frozen=True)
class SqlSeam:
    """A backend's SQL as a shared role object uses it. ``rows(sql, params)`` reads (on the unit
    of work's connection inside one); ``execute`` / ``execute_many`` write and must run inside a
    unit of work (``write``); ``mark`` is the parameter placeholder; ``arrays``: the backend binds
    a list to one parameter (PostgreSQL ``= ANY(%s)``) rather than one mark per value (SQLite
    ``IN (?, ?)``) and then never splits a list into ``batches``; ``ordered``: concurrent
    processes write the backend, so a write of several rows goes in a stable order (their row
    locks are taken in one order); ``take_turns(name)``, inside a unit of work: units of work of
    concurrent processes that call it with the same name run one after the other until it
    commits."""

    mark: str
    rows: Callable[[str, Sequence], list[Any]]
    execute: Callable[[str, Sequence], Any]  # returns a cursor (``rowcount``)
    execute_many: Callable[[str, Sequence[Sequence]], object]
    write: Callable[[Callable[[], Any]], Any]
    arrays: bool = False
    ordered: bool = False
    take_turns: Callable[[str], object] = field(default=_one_writer)

    def marks(self, n: int) -> str:
        """``n`` parameter marks, comma-separated (the VALUES of an INSERT)."""
        return ", ".join([self.mark] * n)

    def one_of(self, column: str, values: Sequence) -> tuple[str, tuple]:
        """A condition ``column`` is one of ``values`` and its parameters."""
        if self.arrays:
            return f"{column} = ANY({self.mark})", (list(values),)
        return f"{column} IN ({self.marks(len(values))})", tuple(values)

    def parts(self, values: Iterable[T]) -> list[list[T]]:
        """``values`` in as many lists as one statement takes (one unless ``batches`` are needed)."""
        found = list(values)
        return [found] if self.arrays else batches(found)

    def in_order(self, rows: Iterable[tuple]) -> list[tuple]:
        """Rows to write, sorted when the backend is ``ordered``."""
        return sorted(rows) if self.ordered else list(rows)
