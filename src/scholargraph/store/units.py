"""What both backends share about units of work (the ``Writes`` role, see :mod:`.base`).

Each backend runs its units of work with one object (``sqlite.writer.Writer``: the file's one
writer thread; ``postgres.conn.UnitsOfWork``: a writer thread with a connection of its own).
:class:`RunsUnitsOfWork` answers the store's ``Writes`` role from that object, once for both.

:class:`SqlSeam` is what a role object shared by both backends (:mod:`.mentions_role`,
:mod:`.analysis_role`) needs of its backend: reads that see the unit of work in progress, writes
inside one, and where the backends differ (the parameter mark, binding a list, concurrent writers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .base import batches

T = TypeVar("T")


class WorkRunner(Protocol):
    def write(self, work: Callable[[], T]) -> T: ...

    def submit(self, work: Callable[[], T]) -> Future[T]: ...


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
