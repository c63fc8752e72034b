"""PostgreSQL schema, versioned. ``MIGRATIONS[i]`` upgrades a database from version i to i+1, each in
one transaction, under an advisory lock (several workers may open a new database at once); a
database newer than this code is refused.

Tables live in the first schema of the connection's ``search_path`` (``public`` unless the DSN says
``options=-csearch_path=kb1``), so one database can hold several knowledge bases. The pgvector
extension must exist (``CREATE EXTENSION vector``); its type is found through the search path.

Vector tables (``vectors_chunk``, ``vectors_entity``...) get their dimension when the first vectors
of a workspace arrive (:func:`vector_tables_ddl`), and their HNSW index (cosine) once they hold
``HNSW_MIN_ROWS`` vectors: below that an exact scan answers in milliseconds, while every insert
into an HNSW index costs ~100x an insert without one (13 ms against 0.14 ms per 384-d vector,
measured on the loaded 2-core machine).
"""

from __future__ import annotations

import psycopg

from ...errors import WorkspaceError

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
    payload TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    scope TEXT NOT NULL DEFAULT 'full',
    profile TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    error TEXT,
    claimed_by BIGINT,                 -- the worker processing it (its advisory lock says it is alive)
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    processed_at DOUBLE PRECISION
);
CREATE INDEX documents_claim ON documents(status, size DESC, id);
CREATE INDEX documents_md5 ON documents(content_md5);

CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    section TEXT, char_start INTEGER, char_end INTEGER, page_start INTEGER, page_end INTEGER,
    tokens INTEGER NOT NULL,
    text TEXT NOT NULL,
    header TEXT NOT NULL DEFAULT '',
    scope TEXT NOT NULL DEFAULT 'full',
    tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', coalesce(header, '') || ' ' || text)) STORED
);
CREATE INDEX chunks_document ON chunks(document_id, ordinal);
CREATE INDEX chunks_tsv ON chunks USING GIN (tsv);

CREATE TABLE entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    aliases TEXT NOT NULL DEFAULT '[]',
    weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    dirty BOOLEAN NOT NULL DEFAULT TRUE,
    version BIGINT NOT NULL DEFAULT 1,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX entities_type ON entities(lower(type));
CREATE INDEX entities_name ON entities(lower(name));
CREATE INDEX entities_dirty ON entities(id) WHERE dirty;

CREATE TABLE entity_sources (
    seq BIGSERIAL PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL DEFAULT 'name',
    type TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
);
CREATE INDEX entity_sources_entity ON entity_sources(entity_id);
CREATE INDEX entity_sources_key ON entity_sources(name_key);
CREATE INDEX entity_sources_name ON entity_sources(lower(name));
CREATE INDEX entity_sources_document ON entity_sources(document_id);

CREATE TABLE relations (
    seq BIGSERIAL UNIQUE,
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    directed BOOLEAN NOT NULL DEFAULT FALSE,
    types TEXT NOT NULL DEFAULT '[]',
    keywords TEXT NOT NULL DEFAULT '[]',
    description TEXT NOT NULL DEFAULT '',
    weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    confidence DOUBLE PRECISION,
    dirty BOOLEAN NOT NULL DEFAULT TRUE,
    version BIGINT NOT NULL DEFAULT 1,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX relations_source ON relations(source_id, target_id);
CREATE INDEX relations_target ON relations(target_id, source_id);
CREATE INDEX relations_dirty ON relations(id) WHERE dirty;

CREATE TABLE relation_sources (
    seq BIGSERIAL PRIMARY KEY,
    relation_id TEXT NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '[]',
    types TEXT NOT NULL DEFAULT '[]',
    strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    confidence DOUBLE PRECISION
);
CREATE INDEX relation_sources_relation ON relation_sources(relation_id);
CREATE INDEX relation_sources_document ON relation_sources(document_id);

CREATE TABLE keywords (id TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE keyword_sources (
    keyword_id TEXT NOT NULL REFERENCES keywords(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    PRIMARY KEY (keyword_id, chunk_id)
);
CREATE INDEX keyword_sources_document ON keyword_sources(document_id);

CREATE TABLE mentions (
    id BIGSERIAL PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    surface TEXT NOT NULL,
    sentence TEXT NOT NULL DEFAULT '',
    char_start INTEGER, char_end INTEGER
);
CREATE INDEX mentions_entity ON mentions(entity_id);
CREATE INDEX mentions_document ON mentions(document_id);

CREATE TABLE extraction_failures (
    seq BIGSERIAL PRIMARY KEY,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    profile TEXT NOT NULL,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX extraction_failures_document ON extraction_failures(document_id);

CREATE TABLE sessions (
    name TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (name, turn)
);

CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DOUBLE PRECISION NOT NULL
);

CREATE TABLE llm_calls (
    id BIGSERIAL PRIMARY KEY,
    ts DOUBLE PRECISION NOT NULL,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    document_id TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated BOOLEAN NOT NULL DEFAULT FALSE,
    cached BOOLEAN NOT NULL DEFAULT FALSE,
    latency_s DOUBLE PRECISION NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'ok'
);
CREATE INDEX llm_calls_document ON llm_calls(document_id);

CREATE TABLE embedding_cache (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (model, hash)
);
"""

# v2: communities per level, their reports (by signature) and the citation network (as the SQLite v3);
# a database whose vector tables exist gets the community vector table of the same dimension.
V1_TO_V2 = f"""
CREATE TABLE communities (
    id TEXT PRIMARY KEY,
    level INTEGER NOT NULL,
    parent_id TEXT,
    signature TEXT NOT NULL,
    size INTEGER NOT NULL,
    relations INTEGER NOT NULL DEFAULT 0,
    weight DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE INDEX communities_level ON communities(level, size DESC, id);
CREATE INDEX communities_signature ON communities(signature);
CREATE TABLE community_members (
    community_id TEXT NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    level INTEGER NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (level, entity_id)
);
CREATE INDEX community_members_community ON community_members(community_id);
CREATE TABLE community_reports (
    signature TEXT PRIMARY KEY,
    report TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
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
DO $$ DECLARE d TEXT; BEGIN
    SELECT value INTO d FROM meta WHERE key = 'vector_tables_dim';
    IF d IS NOT NULL THEN
        EXECUTE format('CREATE TABLE IF NOT EXISTS vectors_community (id TEXT PRIMARY KEY, embedding vector(%s) NOT NULL)', d);
        EXECUTE 'CREATE INDEX IF NOT EXISTS vectors_community_hnsw ON vectors_community USING hnsw '
                '(embedding vector_cosine_ops) WITH (m = {16}, ef_construction = {64})';
    END IF;
END $$;
"""

# v3: full-text search with the engine's own terms (store/postgres/lexical.py): the store
# writes ``terms`` with each chunk and fills it for chunks stored before (meta ``lexical_version``)
V2_TO_V3 = """
ALTER TABLE chunks ADD COLUMN terms TSVECTOR;
CREATE INDEX chunks_terms ON chunks USING GIN (terms);
"""

# v4: sentence-level provenance for the localkg profile (as the SQLite v5): sentences, mention
# details, and the sentence and level of each relation record.
V3_TO_V4 = """
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
);
ALTER TABLE mentions ADD COLUMN sentence_no INTEGER;
ALTER TABLE mentions ADD COLUMN section TEXT;
ALTER TABLE mentions ADD COLUMN page INTEGER;
ALTER TABLE mentions ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE mentions ADD COLUMN types TEXT NOT NULL DEFAULT '[]';
ALTER TABLE mentions ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE mentions ADD COLUMN level TEXT NOT NULL DEFAULT '';
ALTER TABLE relation_sources ADD COLUMN sentence_no INTEGER;
ALTER TABLE relation_sources ADD COLUMN level TEXT NOT NULL DEFAULT '';
"""

# v5 (the same change as SQLite schema v6): one chunk-failure record per (document, chunk),
# attempts counted (the latest record of each chunk kept), and the graph maintenance a run owes.
V4_TO_V5 = """
CREATE TABLE chunk_failures (
    document_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    profile TEXT NOT NULL,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 1,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (document_id, chunk_id)
);
INSERT INTO chunk_failures(document_id, chunk_id, profile, reason, raw, attempts, created_at, updated_at)
    SELECT DISTINCT ON (document_id, chunk_id) document_id, chunk_id, profile, reason, raw,
           count(*) OVER w, min(created_at) OVER w, created_at
    FROM extraction_failures WINDOW w AS (PARTITION BY document_id, chunk_id)
    ORDER BY document_id, chunk_id, seq DESC;
DROP TABLE extraction_failures;

CREATE TABLE maintenance (
    task TEXT NOT NULL,
    id TEXT NOT NULL,
    queued_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (task, id)
);
"""

# v6: the endpoint (base URL) that answered each call (llm.endpoints), for `stats --cost`
V5_TO_V6 = "ALTER TABLE llm_calls ADD COLUMN endpoint TEXT;"

# v7 (as the SQLite v8): each paper's own local KG (entities with their link to the workspace
# entity, triples) and the sentence IRIs an input carried.
V6_TO_V7 = """
ALTER TABLE sentences ADD COLUMN iri TEXT NOT NULL DEFAULT '';
CREATE TABLE local_entities (
    document_id TEXT NOT NULL,
    local_id INTEGER NOT NULL,
    label TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    types TEXT NOT NULL DEFAULT '[]',
    description TEXT NOT NULL DEFAULT '',
    aliases TEXT NOT NULL DEFAULT '[]',
    relevance DOUBLE PRECISION,
    mentions TEXT NOT NULL DEFAULT '[]',
    entity_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (document_id, local_id)
);
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
);
"""

# v8: leases. A claimed document holds a lease (``lease_until``, the database's clock) that
# its worker renews while it works on it; a document whose lease ran out is taken over by another
# worker, and ``lease_token`` (one more at each claim) fences the commit of a worker that was only
# slow. Maintenance rows (entities to resolve) are claimed the same way, in blocks, by every worker.
V7_TO_V8 = """
ALTER TABLE documents ADD COLUMN lease_until DOUBLE PRECISION;
ALTER TABLE documents ADD COLUMN lease_token BIGINT NOT NULL DEFAULT 0;
CREATE INDEX documents_leases ON documents(lease_until) WHERE status = 'PROCESSING';
CREATE INDEX documents_claimed ON documents(claimed_by) WHERE status = 'PROCESSING';
ALTER TABLE maintenance ADD COLUMN claimed_by BIGINT;
ALTER TABLE maintenance ADD COLUMN lease_until DOUBLE PRECISION;
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
);
CREATE INDEX stub_keys_stub ON stub_keys(stub_id);
INSERT INTO meta(key, value) SELECT 'stub_keys_missing', '1' WHERE EXISTS (SELECT 1 FROM stub_papers);
"""

# v10: version counters and row counts of the relations and the chunks, kept by statement triggers
# in the writing transaction, so a question learns whether the in-memory graph (or the passage graph
# built over the chunks) is stale, and how large the graph is, by summing a few rows instead of
# aggregating a table that grows with the knowledge base. Each server process (backend) keeps a row
# of its own (changes and rows added less rows removed; backend 0 holds the rows found at the
# upgrade): a live backend runs one transaction at a time, so concurrent workers never wait on each
# other's counter, and the sums, read in one snapshot, change with every commit that changed the
# table (never with an uncommitted one). The rows number the backends that ever wrote, not the
# relations. Only changes of what the in-memory graph holds raise the version (the ends, ids and
# weights of the relations, the ids of the chunks).
_VERSIONED = {"relations": "id, source_id, target_id, weight", "chunks": "id"}
V9_TO_V10 = """
CREATE TABLE content_versions (
    what TEXT NOT NULL,
    backend INTEGER NOT NULL,
    n BIGINT NOT NULL,
    row_count BIGINT NOT NULL,
    PRIMARY KEY (what, backend)
);
CREATE FUNCTION raise_content_version() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    delta BIGINT := 0;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO delta FROM changed_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT -count(*) INTO delta FROM changed_rows;
    ELSIF TG_OP = 'TRUNCATE' THEN
        UPDATE content_versions SET row_count = 0 WHERE what = TG_ARGV[0];
    END IF;
    INSERT INTO content_versions AS v (what, backend, n, row_count) VALUES (TG_ARGV[0], pg_backend_pid(), 1, delta)
    ON CONFLICT (what, backend) DO UPDATE SET n = v.n + 1, row_count = v.row_count + delta;
    RETURN NULL;
END $$;
""" + "".join(
    f"INSERT INTO content_versions SELECT '{table}', 0, 0, count(*) FROM {table};\n"
    + "".join(f"CREATE TRIGGER {table}_{name} AFTER {event} ON {table} {transition} FOR EACH STATEMENT "
              f"EXECUTE FUNCTION raise_content_version('{table}');\n"
              for name, event, transition in (("added", "INSERT", "REFERENCING NEW TABLE AS changed_rows"),
                                              ("removed", "DELETE", "REFERENCING OLD TABLE AS changed_rows"),
                                              ("changed", f"UPDATE OF {columns}", ""),
                                              ("emptied", "TRUNCATE", "")))
    for table, columns in _VERSIONED.items())

# v11: the name-key index holds the entity too, so the entities under a key are found by index
# probes (``entities_by_keys``) instead of counting every source record of the key, which grows with
# the knowledge base for a name many papers use.
V10_TO_V11 = """
DROP INDEX entity_sources_key;
CREATE INDEX entity_sources_key ON entity_sources(name_key, entity_id);
"""

# v12: the source records of an entity or relation indexed in document order, so the few a question
# cites are read by index probes (``SourceLimit``) instead of every record of a hub entity.
V11_TO_V12 = """
DROP INDEX entity_sources_entity;
CREATE INDEX entity_sources_entity ON entity_sources(entity_id, document_id, seq);
DROP INDEX relation_sources_relation;
CREATE INDEX relation_sources_relation ON relation_sources(relation_id, document_id, seq);
"""

# v13: each relation record keeps the normalised names of its ends, and records whose two names
# are one entity are kept apart as that entity's folded relations, for a split to restore them.
V12_TO_V13 = """
ALTER TABLE relation_sources ADD COLUMN source_key TEXT NOT NULL DEFAULT '';
ALTER TABLE relation_sources ADD COLUMN target_key TEXT NOT NULL DEFAULT '';
CREATE TABLE folded_relations (
    seq BIGSERIAL PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    directed BOOLEAN NOT NULL DEFAULT FALSE,
    source_key TEXT NOT NULL,
    target_key TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '[]',
    types TEXT NOT NULL DEFAULT '[]',
    strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    confidence DOUBLE PRECISION,
    sentence_no INTEGER,
    level TEXT NOT NULL DEFAULT ''
);
CREATE INDEX folded_relations_entity ON folded_relations(entity_id);
CREATE INDEX folded_relations_document ON folded_relations(document_id);
"""

MIGRATIONS: list[str] = [SCHEMA_V1, V1_TO_V2, V2_TO_V3, V3_TO_V4, V4_TO_V5, V5_TO_V6, V6_TO_V7, V7_TO_V8, V8_TO_V9,
                         V9_TO_V10, V10_TO_V11, V11_TO_V12, V12_TO_V13]
SCHEMA_VERSION = len(MIGRATIONS)
NAMESPACES = ("chunk", "entity", "relation", "keyword", "community")
# HNSW build parameters (pgvector defaults); ef_search is set per query from k
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_MIN_ROWS = 20_000  # a namespace gets its HNSW index at this many vectors


def vector_table(namespace: str) -> str:
    if namespace not in NAMESPACES:
        raise ValueError(f"unknown vector namespace {namespace!r}")
    return f"vectors_{namespace}"


def vector_tables_ddl(dim: int) -> list[str]:
    """(Re)create the vector tables for ``dim``-d vectors, without HNSW indexes (:func:`vector_index_ddl`)."""
    out = []
    for ns in NAMESPACES:
        table = vector_table(ns)
        out += [f"DROP TABLE IF EXISTS {table}",
                f"CREATE TABLE {table} (id TEXT PRIMARY KEY, embedding vector({int(dim)}) NOT NULL)"]
    return out


def vector_index_ddl(namespace: str) -> str:
    table = vector_table(namespace)
    return (f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})")


def _lock_key(conn: psycopg.Connection) -> int:
    """An advisory lock key for schema changes of this database schema."""
    row = conn.execute("SELECT hashtextextended('scholargraph-ddl:' || current_schema(), 0)").fetchone()
    return int(row[0])


# the extension belongs to the database (not a schema): one key for every process enabling it
EXTENSION_LOCK = "scholargraph-create-extension-vector"


def ensure_extension(conn: psycopg.Connection, where: str) -> None:
    """Enable pgvector unless it is. Processes starting together on a new database take turns
    (an advisory lock): ``CREATE EXTENSION IF NOT EXISTS`` run at once by two of them lets one fail
    on the catalogue's unique index."""
    if conn.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'").fetchone():
        return
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (EXTENSION_LOCK,))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise WorkspaceError(
            f"{where}: the pgvector extension is not enabled and this user may not enable it; ask the database "
            "owner to run `CREATE EXTENSION vector;` in this database") from exc
    except psycopg.Error as exc:
        raise WorkspaceError(
            f"{where}: cannot enable the pgvector extension ({exc}); install pgvector on the server "
            "(https://github.com/pgvector/pgvector) and run `CREATE EXTENSION vector;`") from exc


def current_version(conn: psycopg.Connection) -> int:
    schema = conn.execute("SELECT current_schema()").fetchone()[0]
    if schema is None:
        raise WorkspaceError("no schema of the connection's search_path exists (create it, or fix the DSN's options)")
    exists = conn.execute(
        "SELECT to_regclass(format('%I.scholargraph_schema', current_schema())) IS NOT NULL").fetchone()[0]
    if not exists:
        return 0
    row = conn.execute("SELECT version FROM scholargraph_schema").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection, where: str, create: bool = True) -> None:
    """Bring the database to ``SCHEMA_VERSION`` (``conn`` in autocommit mode)."""
    version = current_version(conn)
    if version == SCHEMA_VERSION:
        return
    if version == 0 and not create:
        raise WorkspaceError(f"no scholargraph knowledge base in {where} (index documents into it first)")
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(conn),))
        version = current_version(conn)  # another worker may have migrated meanwhile
        if version > SCHEMA_VERSION:
            raise WorkspaceError(f"{where} uses schema version {version}, newer than this scholargraph "
                                 f"({SCHEMA_VERSION}); upgrade scholargraph")
        if version == 0:
            conn.execute("CREATE TABLE scholargraph_schema (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO scholargraph_schema VALUES (0)")
        for target in range(version, SCHEMA_VERSION):
            conn.execute(MIGRATIONS[target])
            conn.execute("UPDATE scholargraph_schema SET version = %s", (target + 1,))


def ddl_lock(conn: psycopg.Connection) -> None:
    """Serialise schema changes (vector tables) with other workers, inside a transaction."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(conn),))
