"""Small workspace facts (``MetaStore``) and conversation sessions (``SessionStore``), one role
object each for both backends, over the backend's :class:`~.units.SqlSeam`; :class:`KeepsFacts`
answers the store's part of the contract from them, once for both."""

from __future__ import annotations

import time

from .units import SqlSeam


class Meta:
    """``MetaStore``: key -> value."""

    def __init__(self, sql: SqlSeam):
        self.sql = sql

    def get_meta(self, key: str) -> str | None:
        rows = self.sql.rows(f"SELECT value FROM meta WHERE key = {self.sql.mark}", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.sql.write(lambda: self.sql.execute(
            f"INSERT INTO meta(key, value) VALUES ({self.sql.marks(2)}) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value)))


class Sessions:
    """``SessionStore``: the turns of each named conversation, numbered from 1."""

    def __init__(self, sql: SqlSeam):
        self.sql = sql

    def session_history(self, name: str, limit: int = 6) -> list[tuple[str, str]]:
        mark = self.sql.mark
        rows = self.sql.rows(f"SELECT question, answer FROM sessions WHERE name = {mark} ORDER BY turn DESC LIMIT {mark}",
                             (name, limit))
        return [(r[0], r[1]) for r in reversed(rows)]

    def add_session_turn(self, name: str, question: str, answer: str) -> None:
        sql, mark = self.sql, self.sql.mark

        def work() -> None:
            sql.take_turns(f"session:{name}")  # two processes adding a turn to one session number them apart
            sql.execute(f"INSERT INTO sessions(name, turn, question, answer, created_at) SELECT {mark}, "
                        f"COALESCE(MAX(turn), 0) + 1, {mark}, {mark}, {mark} FROM sessions WHERE name = {mark}",
                        (name, question, answer, time.time(), name))

        sql.write(work)


class KeepsFacts:
    """A store whose workspace facts and sessions are its ``meta`` and ``sessions`` role objects."""

    meta: Meta
    sessions: Sessions

    def get_meta(self, key: str) -> str | None:
        return self.meta.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self.meta.set_meta(key, value)

    def session_history(self, name: str, limit: int = 6) -> list[tuple[str, str]]:
        return self.sessions.session_history(name, limit)

    def add_session_turn(self, name: str, question: str, answer: str) -> None:
        self.sessions.add_session_turn(name, question, answer)
