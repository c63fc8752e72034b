"""Full-text search over chunks for the SQLite store: an FTS5 table of lexical terms (schema v3).

``chunk_terms`` holds, under each chunk's rowid, the terms of the chunk's paper title, section
heading and text from
:func:`scholargraph.text.lexical.lexical_terms` joined by spaces (FTS5 splits them on whitespace
only, so ``il-6`` or ``p<0.05`` stay one term). Rows are written with the chunk in the same
transaction; a trigger removes them whenever a chunk row goes (document delete cascades included).
Ranking is FTS5's BM25 (k1 1.2, b 0.75).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence

from ...models import Chunk
from ...text.lexical import LEXICAL_VERSION, lexical_terms, query_terms_lexical
from ..base import batches

META_KEY = "lexical_version"
REBUILD_BATCH = 2000


def _terms(title: str | None, section: str | None, text: str) -> str:
    # the paper's title and the section heading are searchable with the text (a question naming
    # the paper or "the results" finds its chunks); they count like any other words
    return " ".join(lexical_terms("\n".join(x for x in (title, section, text) if x)))


def write_terms(conn: sqlite3.Connection, chunks: Sequence[Chunk]) -> None:
    """(Re)index the terms of ``chunks``; call after their rows are written, in the same transaction."""
    titles: dict[str, str] = {}
    for part in batches({c.document_id for c in chunks}):
        titles.update(conn.execute(f"SELECT id, title FROM documents WHERE id IN ({','.join('?' * len(part))})",
                                   part).fetchall())
    rows = [(_terms(titles.get(c.document_id), c.section, c.text), c.id) for c in chunks]
    conn.executemany("INSERT INTO chunk_terms(rowid, terms) SELECT rowid, ? FROM chunks WHERE id = ?", rows)


def drop_terms(conn: sqlite3.Connection, chunk_ids: Sequence[str]) -> None:
    """Remove the terms of chunks about to be replaced (``INSERT OR REPLACE`` fires no delete trigger)."""
    for part in batches(chunk_ids):
        conn.execute(f"DELETE FROM chunk_terms WHERE rowid IN (SELECT rowid FROM chunks WHERE id IN ({','.join('?' * len(part))}))",
                     part)


def needs_rebuild(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return row is None or row[0] != LEXICAL_VERSION


def rebuild(conn: sqlite3.Connection) -> int:
    """Index every chunk again (a new workspace, an upgraded one, or a change of tokenisation).
    Runs in one transaction on ``conn``; returns the number of chunks indexed."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM chunk_terms")
        n, last = 0, -1
        while True:
            rows = conn.execute("SELECT c.rowid, d.title, c.section, c.text FROM chunks c LEFT JOIN documents d "
                                "ON d.id = c.document_id WHERE c.rowid > ? ORDER BY c.rowid LIMIT ?",
                                (last, REBUILD_BATCH)).fetchall()
            if not rows:
                break
            conn.executemany("INSERT INTO chunk_terms(rowid, terms) VALUES (?, ?)",
                             [(r[0], _terms(r[1], r[2], r[3])) for r in rows])
            n += len(rows)
            last = rows[-1][0]
        conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (META_KEY, LEXICAL_VERSION))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return n


def match_expression(query: str) -> str | None:
    """An FTS5 query matching any term of ``query`` (each term quoted: no FTS5 syntax gets through)."""
    terms = query_terms_lexical(query)
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


def search(conn: sqlite3.Connection, query: str, k: int, documents: Collection[str] | None = None,
           chunk_ids: Collection[str] | None = None) -> list[tuple[str, float]]:
    """Chunk ids by BM25 (higher = better), best first, at most ``k``; optionally only chunks of
    ``documents`` and/or among ``chunk_ids``."""
    expr = match_expression(query)
    if expr is None or k <= 0 or (documents is not None and not documents) or (chunk_ids is not None and not chunk_ids):
        return []
    where, params = ["chunk_terms MATCH ?"], [expr]
    if chunk_ids is not None:
        ids = list(dict.fromkeys(chunk_ids))
        where.append("c.id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(ids))
    if documents is not None:
        where.append("c.document_id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(dict.fromkeys(documents))))
    if chunk_ids is None and documents is None:
        # rank inside FTS5 first (its ORDER BY rank LIMIT keeps only the best k), then resolve ids
        sql = ("SELECT c.id, -t.score FROM (SELECT rowid, rank AS score FROM chunk_terms WHERE chunk_terms MATCH ? "
               "ORDER BY rank LIMIT ?) t JOIN chunks c ON c.rowid = t.rowid ORDER BY t.score, c.id")
        rows = conn.execute(sql, (expr, k)).fetchall()
    else:
        sql = (f"SELECT c.id, -bm25(chunk_terms) AS s FROM chunk_terms JOIN chunks c ON c.rowid = chunk_terms.rowid "
               f"WHERE {' AND '.join(where)} ORDER BY s DESC, c.id LIMIT ?")
        rows = conn.execute(sql, (*params, k)).fetchall()
    return [(r[0], float(r[1])) for r in rows]
