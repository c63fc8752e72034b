"""Full-text search for the PostgreSQL store (schema v2): ``chunks.terms``, a tsvector of the
chunk's lexical terms (:func:`scholargraph.text.lexical.lexical_terms` of its paper title, section
heading and text, with positions so repeated terms count), written by the store with the chunk
and indexed with GIN. PostgreSQL's own parser never sees the text, so ``il-6`` or ``p<0.05`` stay
one term, exactly as in the SQLite backend. Ranking: ``ts_rank`` normalised by length (PostgreSQL
has no IDF: a rarer term does not weigh more, the one difference from the SQLite backend's BM25).

Common terms do not pick passages. A question's words such as "related" or "conclusion" are in a
quarter of a PubMed collection's chunks; ranking every chunk that holds any question term read
50,000 chunks' terms per question at 200,000 abstracts (1.3 s). The planner's own statistics
(``pg_stats.most_common_elems`` of ``chunks.terms``, kept by ANALYZE and autovacuum) say how many
chunks hold each of the most common terms: a term in more than ``common_rows`` chunks only ranks
the chunks the question's rarer terms find (the part of BM25's IDF that matters: such a term alone
says little). A question of common terms only takes the chunks holding all of them (or, if none
does, any of them). Either way at most ``CANDIDATES`` chunks are ranked, so a search reads a
bounded number of rows whatever the size of the collection. A small collection has no common
term (fewer than ``common_rows`` chunks) and is searched as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import psycopg

from ...models import Chunk
from ...text.lexical import LEXICAL_VERSION, lexical_terms

META_KEY = "lexical_version"
MAX_POSITION = 16383  # PostgreSQL's largest tsvector position
REBUILD_BATCH = 1000
COMMON_ROWS = 5000  # a term in more chunks than this does not pick passages (see the module docstring)
CANDIDATES = 10_000  # chunks ranked per search at most
STATISTICS_MAX_AGE_S = 300.0  # the term statistics are read again after this long


def term_literal(term: str) -> str:
    """``term`` quoted for a tsquery or tsvector literal."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(title: str | None, section: str | None, text: str) -> str:
    """The tsvector input text of a chunk's terms: ``'term':1,7 'other':2`` (cast with ``::tsvector``)."""
    positions: dict[str, list[int]] = {}
    for i, term in enumerate(lexical_terms("\n".join(x for x in (title, section, text) if x)), start=1):
        positions.setdefault(term, []).append(min(i, MAX_POSITION))
    return " ".join(f"{term_literal(t)}:{','.join(map(str, p[:256]))}" for t, p in positions.items())


def any_term(terms: Sequence[str]) -> str:
    """The tsquery literal of chunks holding any of ``terms``."""
    return " | ".join(term_literal(t) for t in terms)


@dataclass(frozen=True)
class SearchPlan:
    """The tsqueries of one search: ``match`` picks the candidate chunks (at most ``CANDIDATES``),
    ``rank`` orders them (every term of the question); ``fallback`` is tried when ``match`` finds none."""

    match: str
    rank: str
    fallback: str | None = None


def plan_search(terms: Sequence[str], chunks_holding: Callable[[str], float], common_rows: int) -> SearchPlan:
    """Which of a question's ``terms`` pick the candidates: those in at most ``common_rows`` chunks
    (``chunks_holding`` estimates it); if every term is more common, chunks holding all of them."""
    every = any_term(terms)
    rare = [t for t in terms if chunks_holding(t) <= common_rows]
    if rare:
        return SearchPlan(any_term(rare), every)
    if len(terms) == 1:
        return SearchPlan(every, every)
    return SearchPlan(" & ".join(term_literal(t) for t in terms), every, fallback=every)


@dataclass
class TermStatistics:
    """How many chunks hold each of the most common terms, from the planner's statistics of
    ``chunks.terms`` (read at most every ``max_age_s``; none before the table's first ANALYZE)."""

    max_age_s: float = STATISTICS_MAX_AGE_S
    _shares: dict[str, float] = field(default_factory=dict)
    _rows: float = 0.0
    _read_at: float | None = None

    def chunks_holding(self, rows: Callable[..., list]) -> Callable[[str], float]:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at > self.max_age_s:
            self._read(rows)
            self._read_at = now
        return lambda term: self._shares.get(term, 0.0) * self._rows

    def _read(self, rows: Callable[..., list]) -> None:
        found = rows("SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples "
                     "FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename "
                     "AND c.relnamespace = to_regnamespace(s.schemaname) "
                     "WHERE s.schemaname = current_schema() AND s.tablename = 'chunks' AND s.attname = 'terms'")
        if not found or found[0][0] is None:
            self._shares, self._rows = {}, 0.0
            return
        elems, freqs, reltuples = found[0]
        self._shares = dict(zip(elems, freqs[:len(elems)], strict=True))  # freqs end with min, max, null share
        self._rows = max(0.0, float(reltuples))


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


def bounded_search_sql() -> str:
    """The SELECT of a search over the whole collection; parameters: the ranking tsquery, the
    matching tsquery, the candidates' bound, k."""
    return ("SELECT id, ts_rank(terms, CAST(%s AS tsquery), 1) AS r FROM "
            "(SELECT id, terms FROM chunks WHERE terms @@ CAST(%s AS tsquery) LIMIT %s) candidates "
            "ORDER BY r DESC, id LIMIT %s")


def search_sql(documents: Collection[str] | None, chunk_ids: Collection[str] | None) -> tuple[str, list]:
    """The SELECT of a lexical search within ``documents`` or ``chunk_ids`` (every chunk of them
    that holds any term is ranked) and its extra parameters (after the tsquery)."""
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
