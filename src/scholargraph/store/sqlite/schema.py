"""SQLite schema, versioned. ``MIGRATIONS[i]`` upgrades a workspace from version i to i+1;
a workspace newer than this code is refused (never silently downgraded)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ...errors import WorkspaceError
from ...text.lexical import FTS5_TOKENIZE

SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    authors TEXT NOT NULL DEFAULT '[]',
    year INTEGER, venue TEXT, doi TEXT, pmid TEXT,
    abstract TEXT NOT NULL DEFAULT '',
    source_path TEXT NOT NULL DEFAULT '',
    content_md5 TEXT NOT NULL DEFAULT '',
    metadata TEXT NOT NULL DEFAULT '{}',
    payload TEXT,                      -- the parsed Document (JSON) so work can resume without the file
    scope TEXT NOT NULL DEFAULT 'full',
    profile TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    processed_at REAL
);
CREATE INDEX documents_status ON documents(status);
CREATE INDEX documents_md5 ON documents(content_md5);

CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    section TEXT, char_start INTEGER, char_end INTEGER, page_start INTEGER, page_end INTEGER,
    tokens INTEGER NOT NULL,
    text TEXT NOT NULL,
    header TEXT NOT NULL DEFAULT '',
    scope TEXT NOT NULL DEFAULT 'full'
);
CREATE INDEX chunks_document ON chunks(document_id, ordinal);

-- one table for every vector namespace (chunk, entity, relation, keyword)
CREATE TABLE vectors (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (namespace, id)
) WITHOUT ROWID;

CREATE TABLE entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    aliases TEXT NOT NULL DEFAULT '[]',
    weight REAL NOT NULL DEFAULT 1.0,
    dirty INTEGER NOT NULL DEFAULT 1,  -- description/vector need rebuilding
    updated_at REAL NOT NULL
);
CREATE INDEX entities_type ON entities(type);

CREATE TABLE entity_sources (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL DEFAULT '',  -- normalised name, for resolving later mentions
    role TEXT NOT NULL DEFAULT 'name',  -- canonical (named with aliases) | name | alias
    type TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
);
CREATE INDEX entity_sources_entity ON entity_sources(entity_id);
CREATE INDEX entity_sources_key ON entity_sources(name_key);
CREATE INDEX entity_sources_document ON entity_sources(document_id);

CREATE TABLE relations (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    directed INTEGER NOT NULL DEFAULT 0,
    types TEXT NOT NULL DEFAULT '[]',
    keywords TEXT NOT NULL DEFAULT '[]',
    description TEXT NOT NULL DEFAULT '',
    weight REAL NOT NULL DEFAULT 1.0,
    confidence REAL,
    dirty INTEGER NOT NULL DEFAULT 1,
    updated_at REAL NOT NULL
);
CREATE INDEX relations_source ON relations(source_id);
CREATE INDEX relations_target ON relations(target_id);

CREATE TABLE relation_sources (
    relation_id TEXT NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '[]',
    types TEXT NOT NULL DEFAULT '[]',
    strength REAL NOT NULL DEFAULT 1.0,
    confidence REAL
);
CREATE INDEX relation_sources_relation ON relation_sources(relation_id);
CREATE INDEX relation_sources_document ON relation_sources(document_id);

CREATE TABLE keywords (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL
);
CREATE TABLE keyword_sources (
    keyword_id TEXT NOT NULL REFERENCES keywords(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    PRIMARY KEY (keyword_id, chunk_id)
);
CREATE INDEX keyword_sources_document ON keyword_sources(document_id);

CREATE TABLE mentions (
    id INTEGER PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    surface TEXT NOT NULL,
    sentence TEXT NOT NULL DEFAULT '',
    char_start INTEGER, char_end INTEGER
);
CREATE INDEX mentions_document ON mentions(document_id);

CREATE TABLE extraction_failures (
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    profile TEXT NOT NULL,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
CREATE INDEX extraction_failures_document ON extraction_failures(document_id);

CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);

CREATE TABLE llm_calls (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    document_id TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL DEFAULT 0,
    cached INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'ok'
);
CREATE INDEX llm_calls_document ON llm_calls(document_id);

CREATE TABLE embedding_cache (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;

CREATE TABLE sessions (
    name TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (name, turn)
);
"""

# v2: the LLM cache, call log and embedding cache moved to their own file (store.sqlite.records),
# so their writes never contend with graph commits. Their rows are copied there first (see
# ``migrate``), then the tables go. Documents get their size, so claiming the largest pending
# ones is an index walk instead of measuring every payload.
V1_TO_V2 = """
DROP TABLE llm_cache;
DROP TABLE llm_calls;
DROP TABLE embedding_cache;
ALTER TABLE documents ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
UPDATE documents SET size = length(payload) WHERE payload IS NOT NULL;
CREATE INDEX documents_claim ON documents(status, size DESC, id);
"""

# v3: communities of the entity graph per level, their reports (by signature), and the citation
# network (each document's reference list resolved to a document or a stub paper).
V2_TO_V3 = """
CREATE TABLE communities (
    id TEXT PRIMARY KEY,
    level INTEGER NOT NULL,
    parent_id TEXT,
    signature TEXT NOT NULL,
    size INTEGER NOT NULL,
    relations INTEGER NOT NULL DEFAULT 0,
    weight REAL NOT NULL DEFAULT 0
);
CREATE INDEX communities_level ON communities(level, size DESC, id);
CREATE INDEX communities_signature ON communities(signature);
CREATE TABLE community_members (
    community_id TEXT NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    level INTEGER NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (level, entity_id)
) WITHOUT ROWID;
CREATE INDEX community_members_community ON community_members(community_id);
CREATE TABLE community_reports (
    signature TEXT PRIMARY KEY,
    report TEXT NOT NULL,              -- CommunityReport as JSON
    updated_at REAL NOT NULL
);
CREATE TABLE paper_references (
    citing_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    raw TEXT NOT NULL,
    target_id TEXT NOT NULL,
    doi TEXT, pmid TEXT, title TEXT, year INTEGER,
    PRIMARY KEY (citing_id, ordinal)
);
CREATE INDEX paper_references_target ON paper_references(target_id);
CREATE TABLE stub_papers (
    id TEXT PRIMARY KEY,
    title TEXT, doi TEXT, pmid TEXT, year INTEGER,
    raw TEXT NOT NULL DEFAULT ''
);
"""

# v4: full-text search over chunks. ``chunk_terms`` holds each chunk's lexical terms
# (scholargraph.text.lexical) under the chunk's rowid; the store fills it on insert (and rebuilds it
# when the tokenisation changes: meta ``lexical_version``), the trigger empties it on every delete,
# including the cascade from a deleted document.
V3_TO_V4 = f"""
CREATE VIRTUAL TABLE chunk_terms USING fts5(terms, tokenize = "{FTS5_TOKENIZE}");
CREATE TRIGGER chunks_drop_terms AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_terms WHERE rowid = old.rowid;
END;
"""

# v5: sentence-level provenance (localkg profile, seed 004 §4): each document's sentences (its Deep
# Document Model: section -> paragraph -> sentence), mentions with their sentence, section, page,
# category (named | general | other), potential types, description and extraction level, and the
# sentence and level each relation record was read from.
V4_TO_V5 = """
CREATE TABLE sentences (
    document_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    section TEXT,
    section_no INTEGER NOT NULL DEFAULT 0,
    paragraph_no INTEGER NOT NULL DEFAULT 0,
    page INTEGER,
    char_start INTEGER, char_end INTEGER,
    text TEXT NOT NULL,
    PRIMARY KEY (document_id, ordinal)
) WITHOUT ROWID;
ALTER TABLE mentions ADD COLUMN sentence_no INTEGER;
ALTER TABLE mentions ADD COLUMN section TEXT;
ALTER TABLE mentions ADD COLUMN page INTEGER;
ALTER TABLE mentions ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE mentions ADD COLUMN types TEXT NOT NULL DEFAULT '[]';
ALTER TABLE mentions ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE mentions ADD COLUMN level TEXT NOT NULL DEFAULT '';
CREATE INDEX mentions_entity ON mentions(entity_id);
ALTER TABLE relation_sources ADD COLUMN sentence_no INTEGER;
ALTER TABLE relation_sources ADD COLUMN level TEXT NOT NULL DEFAULT '';
"""

# v6: chunk failures are one record per (document, chunk) — a chunk that fails again
# replaces its record and counts the attempt; a repaired chunk's record goes — so what is listed is
# what is still missing ("unrepaired"). Existing rows keep the latest record of each chunk. And the
# graph maintenance an indexing run still owes (entities the resolution pass has not compared yet)
# is recorded, so a run killed in its final phase is finished by the next one.
V5_TO_V6 = """
CREATE TABLE chunk_failures (
    document_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    profile TEXT NOT NULL,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (document_id, chunk_id)
) WITHOUT ROWID;
INSERT INTO chunk_failures(document_id, chunk_id, profile, reason, raw, attempts, created_at, updated_at)
    SELECT f.document_id, f.chunk_id, f.profile, f.reason, f.raw,
           (SELECT COUNT(*) FROM extraction_failures g WHERE g.document_id = f.document_id AND g.chunk_id = f.chunk_id),
           (SELECT MIN(created_at) FROM extraction_failures g WHERE g.document_id = f.document_id AND g.chunk_id = f.chunk_id),
           f.created_at
    FROM extraction_failures f
    WHERE f.rowid = (SELECT MAX(rowid) FROM extraction_failures g WHERE g.document_id = f.document_id AND g.chunk_id = f.chunk_id);
DROP TABLE extraction_failures;

CREATE TABLE maintenance (
    task TEXT NOT NULL,
    id TEXT NOT NULL,
    queued_at REAL NOT NULL,
    PRIMARY KEY (task, id)
) WITHOUT ROWID;
"""

# v7: community_members with its key columns first. SQLite 3.40's integrity_check reported
# "NULL value in community_members.community_id" on a WITHOUT ROWID table whose first column is not
# part of its primary key (a false report, no NULL was ever stored); same rows, key first.
V6_TO_V7 = """
CREATE TABLE community_members_v7 (
    level INTEGER NOT NULL,
    entity_id TEXT NOT NULL,
    community_id TEXT NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    PRIMARY KEY (level, entity_id)
) WITHOUT ROWID;
INSERT INTO community_members_v7(level, entity_id, community_id)
    SELECT level, entity_id, community_id FROM community_members;
DROP TABLE community_members;
ALTER TABLE community_members_v7 RENAME TO community_members;
CREATE INDEX community_members_community ON community_members(community_id);
"""

# v8: each paper's own local knowledge graph (localkg, seed 004), kept apart from the
# workspace graph so later papers never change it: its entities (label, category, potential types,
# description, aliases, relevance, mentions) with the link to the workspace entity each one joined
# (``entity_id``, updated when entities merge), its triples between them; and the sentence IRIs an
# input carried (ASKG / DDM JSON).
V7_TO_V8 = """
ALTER TABLE sentences ADD COLUMN iri TEXT NOT NULL DEFAULT '';
CREATE TABLE local_entities (
    document_id TEXT NOT NULL,
    local_id INTEGER NOT NULL,
    label TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    types TEXT NOT NULL DEFAULT '[]',
    description TEXT NOT NULL DEFAULT '',
    aliases TEXT NOT NULL DEFAULT '[]',
    relevance REAL,
    mentions TEXT NOT NULL DEFAULT '[]',
    entity_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (document_id, local_id)
) WITHOUT ROWID;
CREATE INDEX local_entities_entity ON local_entities(entity_id);
CREATE TABLE local_relations (
    document_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    subject INTEGER NOT NULL,
    object INTEGER NOT NULL,
    predicate TEXT NOT NULL,
    canonical TEXT NOT NULL DEFAULT '',
    sentence_no INTEGER,
    level TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (document_id, ordinal)
) WITHOUT ROWID;
"""

# v9: the keys a stub paper of the citation network can be matched by (its DOI, PMID, normalised
# title, and every three consecutive words of its normalised reference text), so the papers a run
# adds are matched against the stubs sharing a key with them rather than against every stub.
# Stubs an older version wrote (meta ``stub_keys_missing``) are keyed by the first citation update.
V8_TO_V9 = """
CREATE TABLE stub_keys (
    key TEXT NOT NULL,
    stub_id TEXT NOT NULL REFERENCES stub_papers(id) ON DELETE CASCADE,
    PRIMARY KEY (key, stub_id)
) WITHOUT ROWID;
CREATE INDEX stub_keys_stub ON stub_keys(stub_id);
INSERT INTO meta(key, value) SELECT 'stub_keys_missing', '1' WHERE EXISTS (SELECT 1 FROM stub_papers);
"""

# v10: version counters and row counts of the relations and the chunks, kept by triggers in the
# writing transaction, so a question learns whether the in-memory graph (or the passage graph built
# over the chunks) is stale, and how large the graph is, by reading one row instead of counting a
# table that grows with the knowledge base. Only changes of what the in-memory graph holds raise the
# version (the ends, ids and weights of the relations, the ids of the chunks).
_VERSIONED = {"relations": "id, source_id, target_id, weight", "chunks": "id"}
V9_TO_V10 = """
CREATE TABLE content_versions (what TEXT PRIMARY KEY, n INTEGER NOT NULL, row_count INTEGER NOT NULL) WITHOUT ROWID;
""" + "".join(
    f"INSERT INTO content_versions SELECT '{table}', 0, COUNT(*) FROM {table};\n"
    + "".join(f"CREATE TRIGGER {table}_version_{name} AFTER {event} ON {table} BEGIN UPDATE content_versions "
              f"SET n = n + 1, row_count = row_count + {delta} WHERE what = '{table}'; END;\n"
              for name, event, delta in (("insert", "INSERT", 1), ("delete", "DELETE", -1),
                                         ("update", f"UPDATE OF {columns}", 0)))
    for table, columns in _VERSIONED.items())

# v11: the name-key index holds the entity too, so the entities under a key are found by index
# probes (``entities_by_keys``) instead of counting every source record of the key, which grows with
# the knowledge base for a name many papers use.
V10_TO_V11 = """
DROP INDEX entity_sources_key;
CREATE INDEX entity_sources_key ON entity_sources(name_key, entity_id);
"""

# v12: each relation record keeps the normalised names of its ends, and records whose two names
# are one entity (merged, or resolved to it) are kept apart as that entity's folded relations, so
# a split gives every record the ends it was written with and restores the relation between the
# names it takes apart. Records written before keep empty keys (a split follows their chunk's name).
V11_TO_V12 = """
ALTER TABLE relation_sources ADD COLUMN source_key TEXT NOT NULL DEFAULT '';
ALTER TABLE relation_sources ADD COLUMN target_key TEXT NOT NULL DEFAULT '';
CREATE TABLE folded_relations (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    directed INTEGER NOT NULL DEFAULT 0,
    source_key TEXT NOT NULL,
    target_key TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '[]',
    types TEXT NOT NULL DEFAULT '[]',
    strength REAL NOT NULL DEFAULT 1.0,
    confidence REAL,
    sentence_no INTEGER,
    level TEXT NOT NULL DEFAULT ''
);
CREATE INDEX folded_relations_entity ON folded_relations(entity_id);
CREATE INDEX folded_relations_document ON folded_relations(document_id);
"""

MIGRATIONS: list[str] = [SCHEMA_V1, V1_TO_V2, V2_TO_V3, V3_TO_V4, V4_TO_V5, V5_TO_V6, V6_TO_V7, V7_TO_V8, V8_TO_V9,
                         V9_TO_V10, V10_TO_V11, V11_TO_V12]
SCHEMA_VERSION = len(MIGRATIONS)

# the records file (llm.sqlite), versioned on its own
RECORDS_V1 = SCHEMA_V1[SCHEMA_V1.index("CREATE TABLE llm_cache") : SCHEMA_V1.index("CREATE TABLE sessions")]
# v2: the endpoint (base URL) that answered each call (llm.endpoints), for `stats --cost`
RECORDS_V1_TO_V2 = "ALTER TABLE llm_calls ADD COLUMN endpoint TEXT;"
RECORDS_MIGRATIONS: list[str] = [RECORDS_V1, RECORDS_V1_TO_V2]


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: str, before_step: Callable[[int], None] | None = None) -> None:
    """Upgrade the workspace database to ``SCHEMA_VERSION``; ``before_step(v)`` runs before the step
    from version v (v1 -> v2 copies the cache tables into the records file first)."""
    _apply(conn, path, MIGRATIONS, before_step)


def migrate_records(conn: sqlite3.Connection, path: str) -> None:
    _apply(conn, path, RECORDS_MIGRATIONS, None)


def _apply(conn: sqlite3.Connection, path: str, steps: list[str], before_step: Callable[[int], None] | None) -> None:
    version = current_version(conn)
    if version > len(steps):
        raise WorkspaceError(
            f"{path} uses schema version {version}, newer than this scholargraph ({len(steps)}); upgrade scholargraph"
        )
    for target in range(version, len(steps)):
        if before_step is not None:
            before_step(target)
        # one transaction per step: a crash mid-migration leaves the previous version intact
        conn.executescript(f"BEGIN;\n{steps[target]}\nPRAGMA user_version = {target + 1};\nCOMMIT;")
