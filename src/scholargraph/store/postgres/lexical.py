"""Full-text search for the PostgreSQL store (schema v2): ``chunks.terms``, a tsvector of the
chunk's lexical terms (:func:`scholargraph.text.lexical.lexical_terms` of its paper title, section
heading and text, with positions so repeated terms count), written by the store with the chunk
and indexed with GIN. PostgreSQL's own parser never sees the text, so ``il-6`` or ``p<0.05`` stay
one term, exactly as in the SQLite backend. Ranking: ``ts_rank`` normalised by length (PostgreSQL
has no IDF: a rarer term does not weigh more, the one difference from the SQLite backend's BM25).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import psycopg

from ...models import Chunk
from ...text.lexical import LEXICAL_VERSION, lexical_terms, query_terms_lexical

META_KEY = "lexical_version"
MAX_POSITION = 16383  # PostgreSQL's largest tsvector position
REBUILD_BATCH = 1000


def _literal(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(title: str | None, section: str | None, text: str) -> str:
    """The tsvector input text of a chunk's terms: ``'term':1,7 'other':2`` (cast with ``::tsvector``)."""
    positions: dict[str, list[int]] = {}
    for i, term in enumerate(lexical_terms("\n".join(x for x in (title, section, text) if x)), start=1):
        positions.setdefault(term, []).append(min(i, MAX_POSITION))
    return " ".join(f"{_literal(t)}:{','.join(map(str, p[:256]))}" for t, p in positions.items())


def tsquery_literal(query: str) -> str | None:
    terms = query_terms_lexical(query)
    return " | ".join(_literal(t) for t in terms) if terms else None


def terms_rows(conn: psycopg.Connection, chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    """(tsvector literal, chunk id) for ``chunks``, with their documents' titles."""
    rows = conn.execute("SELECT id, title FROM documents WHERE id = ANY(%s)",
                        (list({c.document_id for c in chunks}),)).fetchall()
    titles = {r[0]: r[1] for r in rows}
    return [(tsvector_literal(titles.get(c.document_id), c.section, c.text), c.id) for c in chunks]


def needs_rebuild(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (META_KEY,)).fetchone()
    return row is None or row[0] != LEXICAL_VERSION


def rebuild(conn: psycopg.Connection) -> None:
    """Recompute every chunk's terms (an upgraded database, or a new tokenisation); one transaction."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('scholargraph lexical rebuild'))")
        if not needs_rebuild(conn):
            return
        last = ""
        while True:
            rows = conn.execute(
                "SELECT c.id, d.title, c.section, c.text FROM chunks c LEFT JOIN documents d ON d.id = c.document_id "
                "WHERE c.id > %s ORDER BY c.id LIMIT %s", (last, REBUILD_BATCH)).fetchall()
            if not rows:
                break
            with conn.cursor() as cur:
                cur.executemany("UPDATE chunks SET terms = %s::tsvector WHERE id = %s",
                                [(tsvector_literal(r[1], r[2], r[3]), r[0]) for r in rows])
            last = rows[-1][0]
        conn.execute("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     (META_KEY, LEXICAL_VERSION))


def search_sql(documents: Collection[str] | None, chunk_ids: Collection[str] | None) -> tuple[str, list]:
    """The SELECT of a lexical search and its extra parameters (after the tsquery)."""
    where, params = ["terms @@ q"], []
    if documents is not None:
        where.append("document_id = ANY(%s)")
        params.append(list(dict.fromkeys(documents)))
    if chunk_ids is not None:
        where.append("id = ANY(%s)")
        params.append(list(dict.fromkeys(chunk_ids)))
    sql = (f"SELECT id, ts_rank(terms, q, 1) AS r FROM chunks, CAST(%s AS tsquery) q WHERE {' AND '.join(where)} "
           "ORDER BY r DESC, id LIMIT %s")
    return sql, params
