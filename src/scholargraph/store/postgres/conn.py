"""Connections of the PostgreSQL store: the pool, the units of work, the pgvector wire format.

:class:`UnitsOfWork` runs each unit of work in one transaction on a connection of its own (one
writer thread per process, like the SQLite store: units of work of one process never interleave,
those of several processes are isolated by PostgreSQL). A unit of work that loses a deadlock or a
serialisation conflict with another worker is rolled back and run again (``RETRIES`` times), so
its ``work()`` must only change the store (and idempotent in-memory state).

Reads outside a unit of work take a pooled connection in autocommit mode: each read sees the last
commit of every worker.
"""

from __future__ import annotations

import itertools
import random
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from ..units import WorkThread

T = TypeVar("T")
RETRIES = 8
RETRYABLE = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
_names = itertools.count(1)


# -- pgvector binary format: int16 dim, int16 unused, dim x float32 (big-endian) ---------------


class _VectorDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        v = np.asarray(obj, dtype=">f4").ravel()
        return struct.pack(">HH", v.shape[0], 0) + v.tobytes()


class _VectorTextDumper(Dumper):
    format = Format.TEXT

    def dump(self, obj: Any) -> bytes:
        return ("[" + ",".join(map(repr, np.asarray(obj, dtype=np.float32).ravel().tolist())) + "]").encode()


class _VectorLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray:
        dim = struct.unpack_from(">H", data)[0]
        return np.frombuffer(bytes(data[4 : 4 + 4 * dim]), dtype=">f4").astype(np.float32)


class _VectorTextLoader(Loader):
    format = Format.TEXT

    def load(self, data: Any) -> np.ndarray:
        text = bytes(data).decode()
        return np.array([float(x) for x in text.strip("[]").split(",")] if len(text) > 2 else [], dtype=np.float32)


def register_vector(conn: psycopg.Connection) -> None:
    """numpy arrays travel as pgvector ``vector`` values (binary) and come back as float32 arrays."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise psycopg.ProgrammingError("the vector type (pgvector) is not installed in this database")
    info.register(conn)
    conn.adapters.register_dumper(np.ndarray, type("VectorTextDumper", (_VectorTextDumper,), {"oid": info.oid}))
    conn.adapters.register_dumper(np.ndarray, type("VectorDumper", (_VectorDumper,), {"oid": info.oid}))
    conn.adapters.register_loader(info.oid, _VectorLoader)
    conn.adapters.register_loader(info.oid, _VectorTextLoader)


def connect(dsn: str, **kwargs: Any) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True, **kwargs)


def redacted(dsn: str) -> str:
    """The DSN without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "(unparsable DSN)"
    host, port, db = info.get("host", "localhost"), info.get("port", "5432"), info.get("dbname", "")
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}:{port}/{db}"


# -- units of work -----------------------------------------------------------------------------


class UnitsOfWork(WorkThread):
    """One writer thread with its own connection (see :class:`~..units.WorkThread`); ``after(committed)``
    runs after each transaction."""

    closed_error = psycopg.InterfaceError

    def __init__(self, open_conn: Callable[[], psycopg.Connection], after: Callable[[bool], None] | None = None):
        super().__init__(f"scholargraph-postgres-writer-{next(_names)}", after=after)
        self._open = open_conn
        self.conn: psycopg.Connection | None = None

    def _connection(self) -> psycopg.Connection:
        if self.conn is None or self.conn.closed or self.conn.broken:
            self.conn = self._open()
        return self.conn

    def _run(self, work: Callable[[], T]) -> T:
        for attempt in range(RETRIES + 1):
            conn = self._connection()
            self._depth = 1
            try:
                with conn.transaction():
                    result = work()
            except RETRYABLE:
                self._finish(False)
                if attempt == RETRIES:
                    raise
                time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))  # another worker holds what we need
                continue
            except BaseException:
                self._finish(False)
                raise
            self._finish(True)
            return result
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._stop()
        if self.conn is not None:
            self.conn.close()


@contextmanager
def cursor_over(pool: Any, sql: str, params: Any = None, size: int = 2000) -> Iterator[psycopg.ServerCursor]:
    """A server-side cursor for reading a large table in pieces (in its own transaction)."""
    with pool.connection() as conn, conn.transaction(), conn.cursor(name=f"scholargraph_{next(_names)}") as cur:
        cur.itersize = size
        cur.execute(sql, params)
        yield cur
