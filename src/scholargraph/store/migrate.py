"""``scholargraph migrate --to DSN``: copy a SQLite workspace into a PostgreSQL knowledge base.

Every table is copied row for row with ``COPY`` (records keep their order of arrival, so merged
values rebuild the same), vectors go to the per-namespace pgvector tables (L2-normalised, as the
PostgreSQL store keeps them) and their HNSW indexes (namespaces of ``HNSW_MIN_ROWS`` vectors or
more) are built once at the end. Then the copy is
checked: the row count of every table on both sides, and a random sample of vectors per namespace
compared (cosine to the source vector). The target must be empty; the source is only read.

The copy commits with a marker (meta ``migrated_from``: the source workspace, not yet checked); the
check marks it checked. A ``migrate`` killed between the two is finished by running it again (same
workspace, same target): the indexes are built and the copy checked, nothing is copied twice.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psycopg

from ..errors import WorkspaceError
from .postgres.conn import redacted, register_vector
from .postgres.schema import (
    HNSW_MIN_ROWS,
    NAMESPACES,
    ensure_extension,
    migrate,
    vector_index_ddl,
    vector_table,
    vector_tables_ddl,
)
from .sqlite.records import RECORDS_DB_NAME
from .sqlite.store import DB_NAME

BATCH = 5000
# (table, columns, ORDER BY of the source); booleans are converted, sequences follow the order
TABLES: list[tuple[str, str, str, str]] = [
    # (file, table, columns, order)
    ("main", "meta", "key, value", "key"),
    ("main", "documents", "id, title, authors, year, venue, doi, pmid, abstract, source_path, content_md5, metadata, "
                          "payload, size, scope, profile, status, error, created_at, updated_at, processed_at", "rowid"),
    ("main", "chunks", "id, document_id, ordinal, section, char_start, char_end, page_start, page_end, tokens, text, "
                       "header, scope", "rowid"),
    ("main", "entities", "id, name, type, description, aliases, weight, dirty, updated_at", "rowid"),
    ("main", "entity_sources", "entity_id, chunk_id, document_id, name, name_key, role, type, description", "rowid"),
    ("main", "relations", "id, source_id, target_id, directed, types, keywords, description, weight, confidence, dirty, "
                          "updated_at", "rowid"),
    ("main", "relation_sources", "relation_id, chunk_id, document_id, description, keywords, types, strength, "
                                 "confidence, sentence_no, level, source_key, target_key", "rowid"),
    ("main", "folded_relations", "entity_id, directed, chunk_id, document_id, description, keywords, types, strength, "
                                 "confidence, sentence_no, level, source_key, target_key", "rowid"),
    ("main", "keywords", "id, text", "rowid"),
    ("main", "keyword_sources", "keyword_id, chunk_id, document_id", "rowid"),
    ("main", "sentences", "document_id, ordinal, chunk_id, section, section_no, paragraph_no, page, char_start, "
                          "char_end, text, iri", "document_id, ordinal"),
    ("main", "local_entities", "document_id, local_id, label, category, types, description, aliases, relevance, "
                               "mentions, entity_id", "document_id, local_id"),
    ("main", "local_relations", "document_id, ordinal, subject, object, predicate, canonical, sentence_no, level",
     "document_id, ordinal"),
    ("main", "mentions", "entity_id, chunk_id, document_id, surface, sentence, char_start, char_end, sentence_no, "
                         "section, page, category, types, description, level", "id"),
    ("main", "chunk_failures", "document_id, chunk_id, profile, reason, raw, attempts, created_at, updated_at",
     "document_id, chunk_id"),
    ("main", "maintenance", "task, id, queued_at", "task, id"),
    ("main", "sessions", "name, turn, question, answer, created_at", "name, turn"),
    ("main", "communities", "id, level, parent_id, signature, size, relations, weight", "rowid"),
    ("main", "community_members", "community_id, level, entity_id", "level, entity_id"),
    ("main", "community_reports", "signature, report, updated_at", "signature"),
    ("main", "paper_references", "citing_id, ordinal, raw, target_id, doi, pmid, title, year", "citing_id, ordinal"),
    ("main", "stub_papers", "id, title, doi, pmid, year, raw", "id"),
    ("main", "stub_keys", "key, stub_id", "key, stub_id"),
    ("records", "llm_cache", "key, model, purpose, response, prompt_tokens, completion_tokens, estimated, created_at",
     "rowid"),
    ("records", "llm_calls", "ts, purpose, model, document_id, prompt_tokens, completion_tokens, estimated, cached, "
                             "latency_s, status, endpoint", "id"),
    ("records", "embedding_cache", "model, hash, vector", "model, hash"),
]
BOOLEAN = {"dirty", "directed", "estimated", "cached"}
MARKER = "migrated_from"  # meta of the target: {"source": workspace path, "checked": bool}
SKIPPED_META = {"vector_tables_dim", MARKER}


@dataclass
class MigrationReport:
    source: str
    target: str
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> (source rows, target rows)
    vectors: dict[str, tuple[int, int]] = field(default_factory=dict)  # namespace -> (source, target)
    sampled: dict[str, tuple[int, float]] = field(default_factory=dict)  # namespace -> (vectors compared, min cosine)
    seconds: dict[str, float] = field(default_factory=dict)
    resumed: bool = False  # an earlier run's committed copy, finished (indexes, check) by this one

    @property
    def ok(self) -> bool:
        return (all(a == b for a, b in self.counts.values()) and all(a == b for a, b in self.vectors.values())
                and all(n == 0 or c >= 0.9999 for n, c in self.sampled.values()))

    def to_json(self) -> dict:
        return {"source": self.source, "target": self.target, "ok": self.ok, "resumed": self.resumed,
                "tables": {t: {"source": a, "target": b} for t, (a, b) in self.counts.items()},
                "vectors": {ns: {"source": a, "target": b} for ns, (a, b) in self.vectors.items()},
                "sample": {ns: {"compared": n, "min_cosine": round(c, 6)} for ns, (n, c) in self.sampled.items()},
                "seconds": {k: round(v, 2) for k, v in self.seconds.items()}}


def _open_sqlite(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = ON")
    return conn


def _rows(conn: sqlite3.Connection, sql: str) -> Iterator[tuple]:
    cur = conn.execute(sql)
    while batch := cur.fetchmany(BATCH):
        yield from batch


def _convert(columns: list[str]) -> Callable[[tuple], tuple]:
    flags = [c in BOOLEAN for c in columns]
    if not any(flags):
        return lambda row: row
    return lambda row: tuple(bool(v) if f and v is not None else v for v, f in zip(row, flags, strict=True))


def copy_workspace(workdir: Path, dsn: str, sample: int = 200, log: Callable[[str], None] = lambda _m: None
                   ) -> MigrationReport:
    """Copy the SQLite workspace in ``workdir`` into the (empty) PostgreSQL knowledge base at ``dsn``."""
    main_path, records_path = Path(workdir) / DB_NAME, Path(workdir) / RECORDS_DB_NAME
    if not main_path.exists():
        raise WorkspaceError(f"no SQLite workspace at {workdir} (nothing to migrate)")
    from .sqlite.store import SQLiteStore

    SQLiteStore(Path(workdir), create=False).close()  # brings an older workspace to the current schema first
    report = MigrationReport(str(workdir), redacted(dsn))
    sources = {"main": _open_sqlite(main_path), "records": _open_sqlite(records_path)}
    try:
        target = psycopg.connect(dsn, autocommit=True)
    except psycopg.Error as exc:
        raise WorkspaceError(f"cannot connect to PostgreSQL at {report.target}: {str(exc).strip()}") from exc
    try:
        ensure_extension(target, report.target)
        migrate(target, report.target)
        register_vector(target)
        source = str(Path(workdir).resolve())
        report.resumed = _unfinished_copy_of(target, source, report.target)
        if report.resumed:
            log("the copy of an earlier run is in: building its indexes and checking it")
            row = target.execute("SELECT value FROM meta WHERE key = 'vector_tables_dim'").fetchone()
            dim = int(row[0]) if row else None
        else:
            started = time.perf_counter()
            with target.transaction():
                for file, table, columns, order in TABLES:
                    n = _copy_table(sources[file], target, table, columns, order)
                    log(f"{table}: {n} rows")
                dim = _copy_vectors(sources["main"], target, report, log)
                _set_marker(target, source, checked=False)
            report.seconds["copy"] = time.perf_counter() - started
        if dim:
            started = time.perf_counter()
            log("building the HNSW vector indexes…")
            target.execute("SET maintenance_work_mem = '512MB'")
            for ns in NAMESPACES:
                if target.execute(f"SELECT count(*) FROM {vector_table(ns)}").fetchone()[0] >= HNSW_MIN_ROWS:
                    target.execute(vector_index_ddl(ns))
            report.seconds["vector_indexes"] = time.perf_counter() - started
        started = time.perf_counter()
        for _file, table, _columns, _order in TABLES:  # planner statistics and visibility maps for the new rows
            target.execute(f"VACUUM (ANALYZE) {table}")
        for ns in NAMESPACES if dim else ():
            target.execute(f"VACUUM (ANALYZE) {vector_table(ns)}")
        report.seconds["analyze"] = time.perf_counter() - started
        started = time.perf_counter()
        _verify(sources, target, report, sample)
        report.seconds["verify"] = time.perf_counter() - started
        if report.ok:
            _set_marker(target, source, checked=True)
    finally:
        target.close()
        for conn in sources.values():
            conn.close()
    return report


def _unfinished_copy_of(target: psycopg.Connection, source: str, where: str) -> bool:
    """True when the target holds this workspace's copy, committed but not checked (a killed
    ``migrate``); False when it is empty; else the target holds a knowledge base: refused."""
    if not target.execute("SELECT EXISTS (SELECT 1 FROM documents) OR EXISTS (SELECT 1 FROM meta)").fetchone()[0]:
        return False
    row = target.execute("SELECT value FROM meta WHERE key = %s", (MARKER,)).fetchone()
    marker = json.loads(row[0]) if row else {}
    if marker.get("source") == source and not marker.get("checked"):
        return True
    copied = f" (a checked copy of {marker['source']})" if marker.get("checked") else ""
    raise WorkspaceError(f"{where} already holds a knowledge base{copied}; migrate into an empty database "
                         "(or another schema: ?options=-csearch_path%3Dname)")


def _set_marker(target: psycopg.Connection, source: str, checked: bool) -> None:
    target.execute("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                   (MARKER, json.dumps({"source": source, "checked": checked})))


def _copy_table(source: sqlite3.Connection, target: psycopg.Connection, table: str, columns: str, order: str) -> int:
    cols = [c.strip() for c in columns.split(",")]
    where = f" WHERE key NOT IN ({','.join(repr(k) for k in SKIPPED_META)})" if table == "meta" else ""
    convert = _convert(cols)
    n = 0
    with target.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in _rows(source, f"SELECT {columns} FROM {table}{where} ORDER BY {order}"):
            copy.write_row(convert(row))
            n += 1
    if table == "entities" or table == "relations":  # a rebuild in flight never crosses a migration
        target.execute(f"UPDATE {table} SET version = 1")
    return n


def _copy_vectors(source: sqlite3.Connection, target: psycopg.Connection, report: MigrationReport,
                  log: Callable[[str], None]) -> int | None:
    row = source.execute("SELECT value FROM meta WHERE key = 'embedding_dim'").fetchone()
    has_vectors = source.execute("SELECT EXISTS (SELECT 1 FROM vectors)").fetchone()[0]
    if not has_vectors:
        return None
    first = source.execute("SELECT length(vector) FROM vectors LIMIT 1").fetchone()[0]
    dim = int(row[0]) if row else first // 4
    for statement in vector_tables_ddl(dim):
        target.execute(statement)
    target.execute("INSERT INTO meta(key, value) VALUES ('vector_tables_dim', %s)", (str(dim),))
    for ns in NAMESPACES:
        n = 0
        with target.cursor().copy(f"COPY {vector_table(ns)} (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "vector"])
            for id_, blob in _rows(source, f"SELECT id, vector FROM vectors WHERE namespace = '{ns}' ORDER BY id"):
                v = np.frombuffer(blob, dtype=np.float32)
                if v.shape[0] != dim:
                    raise WorkspaceError(f"vector {ns}/{id_} has {v.shape[0]} dimensions, the workspace {dim}")
                norm = float(np.linalg.norm(v))
                copy.write_row((id_, v / norm if norm else v))
                n += 1
        log(f"vectors {ns}: {n}")
    return dim


def _verify(sources: dict[str, sqlite3.Connection], target: psycopg.Connection, report: MigrationReport,
            sample: int) -> None:
    for file, table, _columns, _order in TABLES:
        where = f" WHERE key NOT IN ({','.join(repr(k) for k in SKIPPED_META)})" if table == "meta" else ""
        a = sources[file].execute(f"SELECT count(*) FROM {table}{where}").fetchone()[0]
        b = target.execute(f"SELECT count(*) FROM {table}{where}").fetchone()[0]
        report.counts[table] = (int(a), int(b))
    has_tables = target.execute("SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'vector_tables_dim')").fetchone()[0]
    rng = random.Random(0)
    for ns in NAMESPACES:
        ids = [r[0] for r in sources["main"].execute("SELECT id FROM vectors WHERE namespace = ?", (ns,))]
        b = target.execute(f"SELECT count(*) FROM {vector_table(ns)}").fetchone()[0] if has_tables else 0
        report.vectors[ns] = (len(ids), int(b))
        chosen = rng.sample(ids, min(sample, len(ids)))
        worst = 1.0
        if chosen:
            got = dict(target.execute(f"SELECT id, embedding FROM {vector_table(ns)} WHERE id = ANY(%s)", (chosen,)))
            for id_ in chosen:
                blob = sources["main"].execute("SELECT vector FROM vectors WHERE namespace = ? AND id = ?",
                                               (ns, id_)).fetchone()[0]
                v, w = np.frombuffer(blob, dtype=np.float32), got.get(id_)
                cos = 0.0 if w is None else float(v @ w / ((np.linalg.norm(v) * np.linalg.norm(w)) or 1.0))
                if not np.any(v) and w is not None and not np.any(w):
                    cos = 1.0  # a zero vector stays a zero vector
                worst = min(worst, cos)
        report.sampled[ns] = (len(chosen), worst)
