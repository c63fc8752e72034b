"""What the PostgreSQL store adds to the contract: workers sharing one database (claims, dead
workers), pgvector search, full-text search, schema versions, clear errors."""

from __future__ import annotations

import threading
import time

import numpy as np
import psycopg
import pytest

from scholargraph.errors import ConfigError, WorkspaceError
from scholargraph.models import Chunk, Community, DocStatus, Document, Section
from scholargraph.store import open_store
from scholargraph.store.base import SourceLimit


@pytest.fixture
def open_pg(pg_dsn, tmp_path):
    opened = []

    def make(name: str = "kb", **options):
        store = open_store(tmp_path / name, "postgres", dsn=pg_dsn(name), **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def doc(doc_id: str, words: int = 5) -> Document:
    return Document(id=doc_id, title=f"Title {doc_id}", sections=[Section("body", "word " * words)])


def test_two_workers_never_claim_the_same_document(open_pg):
    a, b = open_pg(), open_pg()
    for i in range(20):
        a.add_pending(doc(f"d{i:02d}", words=i + 1), "full", "offline")
    got_a = a.write(lambda: a.claim_pending(7))
    got_b = b.write(lambda: b.claim_pending(100))
    assert len(got_a) == 7 and len(got_b) == 13 and not set(got_a) & set(got_b)
    assert got_a == [f"d{i:02d}" for i in range(19, 12, -1)]  # largest first
    assert a.status_counts() == {"PROCESSING": 20}


def test_a_claim_held_in_an_open_transaction_is_skipped_not_waited_for(open_pg):
    a, b = open_pg(), open_pg()
    for i in range(4):
        a.add_pending(doc(f"d{i}"), "full", "offline")
    holder = psycopg.connect(a.dsn)
    try:
        holder.execute("BEGIN")
        holder.execute("SELECT id FROM documents WHERE id IN ('d0', 'd1') FOR UPDATE")
        assert sorted(b.write(lambda: b.claim_pending(10))) == ["d2", "d3"]
    finally:
        holder.close()


def test_documents_of_a_dead_worker_go_back_to_pending_but_a_live_workers_stay(open_pg):
    live, dying, next_run = open_pg(), open_pg(), open_pg()
    for i in range(4):
        live.add_pending(doc(f"d{i}"), "full", "offline")
    mine = live.write(lambda: live.claim_pending(2))
    lost = dying.write(lambda: dying.claim_pending(2))
    dying.close()  # like a crash: its connections (and advisory lock) are gone
    reset: list[str] = []
    for _ in range(100):  # the server ends the closed session's backend a moment later
        reset += next_run.reset_stale_processing()
        if reset:
            break
        time.sleep(0.05)
    assert reset == sorted(lost)
    assert {d.id for d in next_run.list_documents(DocStatus.PROCESSING)} == set(mine)


def test_registering_again_never_resets_a_document_another_worker_has(open_pg):
    a, b = open_pg(), open_pg()
    a.add_pending(doc("d1"), "full", "offline")
    a.write(lambda: a.claim_pending(1))
    b.add_pending(doc("d1"), "full", "offline")  # another worker registers the same file meanwhile
    assert a.get_document("d1").status == DocStatus.PROCESSING
    a.insert_chunks([Chunk("d1-c0", "d1", 0, "text", 1)])
    a.set_status("d1", DocStatus.PROCESSED)
    b.add_pending(doc("d1"), "full", "offline")
    assert a.get_document("d1").status == DocStatus.PROCESSED
    b.delete_chunks_of("d1")  # what a forced re-index does first
    b.add_pending(doc("d1"), "full", "offline")
    assert a.get_document("d1").status == DocStatus.PENDING


def test_vector_search_uses_pgvector_and_agrees_with_exact_search(open_pg):
    store = open_pg(hnsw_min_rows=300)  # the HNSW index is built when the namespace reaches 300 vectors
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(500, 16)).astype(np.float32)
    ids = [f"c{i}" for i in range(500)]
    store.put_vectors("chunk", ids[:200], vectors[:200])
    with psycopg.connect(store.dsn) as conn:
        assert not conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'vectors_chunk_hnsw'").fetchall()
    store.put_vectors("chunk", ids[200:], vectors[200:])
    index = store.vector_index("chunk", 16)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    hits = 0
    for q in rng.normal(size=(10, 16)).astype(np.float32):
        exact = [ids[i] for i in np.argsort(-(unit @ (q / np.linalg.norm(q))))[:10]]
        found = index.search(q, 10)
        hits += len({i for i, _ in found} & set(exact))
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    assert hits >= 95  # HNSW recall@10 on 500 points
    assert index.search(vectors[3], 1, allowed={"c3", "c4"})[0][0] == "c3"
    assert [h[0][0] for h in index.search_many(vectors[:3], 1)] == ["c0", "c1", "c2"]
    assert index.above(vectors[7], 0.999) == [("c7", pytest.approx(1.0, abs=1e-5))]
    assert len(index) == 500 and "c9" in index and "nope" not in index
    assert np.allclose(index.get("c1"), unit[1], atol=1e-6)
    with psycopg.connect(store.dsn) as conn:
        indexes = [r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'vectors_%%'")]
    assert [i for i in indexes if "USING hnsw (embedding vector_cosine_ops)" in i] == [
        i for i in indexes if "vectors_chunk_hnsw" in i]  # only the namespace that reached the threshold


def _rows_read(conn, table: str) -> int:
    conn.execute("SELECT pg_stat_force_next_flush()")
    row = conn.execute("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables "
                       "WHERE relname = %s AND schemaname = current_schema()", (table,)).fetchone()
    return int(row[0])


def test_many_searches_of_a_namespace_without_hnsw_read_each_vector_once(open_pg, monkeypatch):
    """The resolution pass searches 256 entities at a time; below hnsw_min_rows the database would
    scan the whole namespace once per entity (quadratic over a run). It is read once per call."""
    from scholargraph.store.postgres import vectors as pg_vectors
    from scholargraph.store.postgres.conn import register_vector
    from scholargraph.store.postgres.vectors import PgVectorIndex

    monkeypatch.setattr(pg_vectors, "EXACT_PAGE", 64)  # several pages: the top-k carried from page to page
    store = open_pg()
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    ids = [f"e{i:03d}" for i in range(300)]
    store.put_vectors("entity", ids, vectors)
    queries = vectors[:64] + 0.01 * rng.normal(size=(64, 16)).astype(np.float32)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = [[ids[i] for i in np.argsort(-(unit @ (q / np.linalg.norm(q))))[:5]] for q in queries]
    found = store.vector_index("entity", 16).search_many(queries, 5)  # no HNSW index: exact
    assert [[i for i, _ in hits] for hits in found] == exact
    assert all([s for _, s in hits] == sorted((s for _, s in hits), reverse=True) for hits in found)
    with psycopg.connect(store.dsn, autocommit=True) as conn:
        register_vector(conn)
        index = PgVectorIndex(lambda sql, params=None, ef_search=None, binary=False:
                              conn.execute(sql, params, binary=binary).fetchall(), 16,
                              "entity", indexed=lambda: False)
        before = _rows_read(conn, "vectors_entity")
        assert [[i for i, _ in hits] for hits in index.search_many(queries, 5)] == exact
        assert _rows_read(conn, "vectors_entity") - before <= 300  # not 64 x 300


def test_a_question_citing_a_hub_entity_reads_few_of_its_source_records(open_pg):
    """At 200,000 abstracts one entity had 101,084 source records; a local question that cited it
    read all of them to keep three (1.4 s a question)."""
    from scholargraph.graph.merge import plan_writes
    from scholargraph.models import EntityRecord, Extraction

    store = open_pg()
    for i in range(300):
        doc_id = f"d{i:03d}"
        store.add_pending(doc(doc_id), "full", "test")
        chunk = Chunk(f"{doc_id}-c0", doc_id, 0, "Retrieval-augmented generation.", 3)
        extraction = Extraction(entities=[EntityRecord("RAG", "Method", "retrieval then generation", chunk.id)])

        def work(doc_id=doc_id, chunk=chunk, extraction=extraction) -> None:
            writes = plan_writes(doc_id, extraction, str.lower, store.entities_by_keys(["rag"]))
            store.insert_chunks([chunk])
            store.write_entities(writes.entities)

        store.write(work)
    [rag] = store.find_entity("RAG")

    def rows_read() -> int:  # the store's own session reports what it read (it flushes when idle)
        store._rows("SELECT pg_stat_force_next_flush()")
        with psycopg.connect(store.dsn, autocommit=True) as conn:
            return _rows_read(conn, "entity_sources")

    before = rows_read()
    cited = store.get_entities([rag], SourceLimit(3, prefer=("d150-c0",)))[rag]
    assert cited.chunk_ids == ["d150-c0", "d000-c0", "d001-c0"]
    assert rows_read() - before <= 20  # not 300


def test_vectors_are_read_in_binary_not_parsed_from_text(open_pg, monkeypatch):
    """The resolution pass reads thousands of vectors per block: as text, each one is 384 floats
    parsed in Python (most of the pass's time at 1,000 abstracts)."""
    from scholargraph.store.postgres import conn as pg_conn

    store = open_pg()
    vectors = np.random.default_rng(3).normal(size=(64, 16)).astype(np.float32)
    ids = [f"e{i:02d}" for i in range(64)]
    store.put_vectors("entity", ids, vectors)
    parsed: list[int] = []
    text_loader = vars(pg_conn)["_VectorTextLoader"]
    real = text_loader.load
    monkeypatch.setattr(text_loader, "load", lambda self, data: parsed.append(1) or real(self, data))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    got = store.get_vectors("entity", ids[:10])
    assert all(np.allclose(got[i], unit[n], atol=1e-6) for n, i in enumerate(ids[:10]))
    assert [h[0][0] for h in store.vector_index("entity", 16).search_many(vectors, 1)] == ids  # 64 queries: exact
    assert parsed == []


def test_vectors_put_again_do_not_make_every_put_count_the_namespace(open_pg, monkeypatch):
    """The rebuild puts again the vectors of the elements it rebuilt: those add no row. Counted as
    added, every put after the first ``hnsw_min_rows`` of them counted the whole namespace."""
    store = open_pg(hnsw_min_rows=300)
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(400, 16)).astype(np.float32)
    ids = [f"r{i:03d}" for i in range(400)]
    store.put_vectors("relation", ids[:250], vectors[:250])
    statements: list[str] = []
    real = store._rows
    monkeypatch.setattr(store, "_rows", lambda sql, *a, **kw: statements.append(sql) or real(sql, *a, **kw))
    for _ in range(5):  # rebuilds: the same 250 again
        store.put_vectors("relation", ids[:250], vectors[:250])
    whole = [s for s in statements if "count(*)" in s and "WHERE" not in s]
    assert whole == []
    with psycopg.connect(store.dsn) as conn:
        assert not conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'vectors_relation_hnsw'").fetchall()
    store.put_vectors("relation", ids[250:], vectors[250:])  # 400 now: the index is built
    with psycopg.connect(store.dsn) as conn:
        assert conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'vectors_relation_hnsw'").fetchall()


def test_a_vector_put_again_unchanged_is_not_rewritten(open_pg):
    """A rebuild re-embeds texts that mostly did not change; rewriting those rows made every rebuild
    a new HNSW entry per element (266 s of a 20k run's end). Unchanged rows keep their tuple; a
    changed one is written."""
    store = open_pg()
    vectors = np.random.default_rng(3).normal(size=(3, 8)).astype(np.float32)
    store.put_vectors("relation", ["a", "b", "c"], vectors)

    def row_versions() -> dict[str, str]:
        with psycopg.connect(store.dsn) as conn:
            return dict(conn.execute("SELECT id, xmin::text FROM vectors_relation").fetchall())

    before = row_versions()
    changed = vectors.copy()
    changed[1] = -changed[1]
    store.put_vectors("relation", ["a", "b", "c"], changed)
    after = row_versions()
    assert after["a"] == before["a"] and after["c"] == before["c"]
    assert after["b"] != before["b"]
    assert np.allclose(store.get_vectors("relation", ["b"])["b"], -vectors[1] / np.linalg.norm(vectors[1]), atol=1e-6)


def test_hnsw_ef_search_comes_from_the_store_settings(open_pg):
    from scholargraph.config import StoreSettings

    options = StoreSettings(backend="postgres", dsn="postgresql://u@h/db", hnsw_ef_search=400).options()
    assert options["ef_search"] == 400
    store = open_pg(ef_search=options["ef_search"])
    with store.pool.connection() as conn:  # every pooled search connection walks 400 candidates
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "400"
    default = open_pg("other")
    with default.pool.connection() as conn:
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "100"


def test_vectors_of_another_dimension_are_refused(open_pg):
    store = open_pg()
    store.put_vectors("chunk", ["a"], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(WorkspaceError, match="4-d vectors"):
        store.put_vectors("entity", ["e"], np.ones((1, 8), dtype=np.float32))
    store.clear_vectors()
    store.put_vectors("entity", ["e"], np.ones((1, 8), dtype=np.float32))  # after reembed's clear: allowed


def test_full_text_search_ranks_chunks_with_stemming(open_pg):
    store = open_pg()
    store.add_pending(doc("d1"), "full", "offline")
    store.insert_chunks([Chunk("c1", "d1", 0, "Contrastive learning trains sentence encoders.", 6),
                         Chunk("c2", "d1", 1, "Knowledge graphs help retrieval.", 5)])
    assert [c for c, _ in store.search_chunk_text("encoder training", 5)] == ["c1"]
    assert store.search_chunk_text("", 5) == []


def _analysed_corpus(store, texts: dict[str, str]) -> None:
    """``texts`` (chunk id -> text) stored, then ANALYZE: the statistics autovacuum keeps on a large table."""
    store.add_pending(doc("d1"), "full", "offline")
    store.insert_chunks([Chunk(cid, "d1", i, text, len(text.split())) for i, (cid, text) in enumerate(texts.items())])
    with psycopg.connect(store.dsn, autocommit=True) as conn:
        conn.execute("ANALYZE chunks")


def test_a_term_in_most_chunks_does_not_pick_passages_the_rarer_terms_do(open_pg):
    """At 200,000 abstracts "related" is in a quarter of the chunks: ranking every chunk holding any
    term of "How is GPR163 related to …?" read 50,000 of them per question. Such a term now only
    orders the chunks the question's rarer terms find."""
    store = open_pg(lexical_common_rows=10)  # a term in more than 10 chunks is common here
    texts = {f"common{i}": "These results are related to patients and related outcomes." for i in range(30)}
    texts |= {"gpr_related": "GPR163 is related to obesity.", "gpr_only": "GPR163 expression in adipose tissue.",
              "other": "Insulin signalling in the liver."}
    _analysed_corpus(store, texts)
    hits = store.lexical_search("How is GPR163 related to patients?", 10)
    assert [c for c, _ in hits] == ["gpr_related", "gpr_only"]  # the common terms still order them


def test_a_question_of_common_terms_only_finds_the_chunks_holding_all_of_them(open_pg):
    store = open_pg(lexical_common_rows=10)
    texts = {f"related{i}": "These results are related to outcomes." for i in range(20)}
    texts |= {f"patients{i}": "Most patients recovered." for i in range(20)}
    texts |= {"both": "Outcomes of patients related to age."}
    _analysed_corpus(store, texts)
    assert [c for c, _ in store.lexical_search("related patients", 10)] == ["both"]
    hits = store.lexical_search("related patients recovered", 50)  # no chunk holds all three: any of them
    assert len(hits) == 41


def test_a_newer_schema_is_refused(open_pg, pg_dsn, tmp_path):
    open_pg().close()
    with psycopg.connect(pg_dsn("kb"), autocommit=True) as conn:
        conn.execute("UPDATE scholargraph_schema SET version = 99")
    with pytest.raises(WorkspaceError, match="schema version 99"):
        open_store(tmp_path / "x", "postgres", dsn=pg_dsn("kb"))


def test_unreachable_server_and_missing_dsn_are_clear_errors(tmp_path):
    with pytest.raises(WorkspaceError, match="cannot connect to PostgreSQL at postgresql://u@127.0.0.1:9/x"):
        open_store(tmp_path, "postgres", dsn="postgresql://u:secret@127.0.0.1:9/x")
    with pytest.raises(ConfigError, match="store.dsn"):
        open_store(tmp_path, "postgres")


def test_llm_records_are_shared_between_workers(open_pg):
    from scholargraph.store.base import CachedResponse, CallRecord

    a, b = open_pg(), open_pg()
    a.cache_put("k", "m", "extract", CachedResponse("answer", 10, 2, False))
    a.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.5, document_id="d1"))
    a.embedding_put("model", {"h1": np.arange(3, dtype=np.float32)})
    assert a.cache_get("k").text == "answer"  # held, not yet written
    a.flush_records()
    assert b.cache_get("k").text == "answer"
    assert b.usage_by_purpose()["extract"].prompt_tokens == 10
    assert np.array_equal(b.embedding_get("model", ["h1", "h2"])["h1"], np.arange(3))
    assert b.count("llm_calls") == 1


def test_two_workers_replacing_the_communities_at_once_leave_one_set(open_pg):
    """Each worker recomputes the communities when it finishes; a second worker's replacement
    waits for the first's commit and replaces it (it used to hit the first's rows: duplicate key)."""
    a, b = open_pg(), open_pg()
    first = [Community("0-aaa", 0, "aaa", ["e1", "e2"]), Community("0-bbb", 0, "bbb", ["e3"])]
    second = [Community("0-aaa", 0, "aaa", ["e1", "e2"]), Community("0-ccc", 0, "ccc", ["e3", "e4"])]
    in_work, release = threading.Event(), threading.Event()

    def a_replaces_then_waits() -> None:
        a.replace_communities(first)  # nested in the unit of work below: committed when it ends
        in_work.set()
        release.wait(30)

    holder = threading.Thread(target=a.write, args=(a_replaces_then_waits,))
    holder.start()
    assert in_work.wait(30)
    errors: list[BaseException] = []

    def b_replaces() -> None:
        try:
            b.replace_communities(second)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    replacer = threading.Thread(target=b_replaces)
    replacer.start()
    time.sleep(0.5)  # b's replacement is under way, blocked behind a's open transaction
    release.set()
    holder.join(30)
    replacer.join(30)
    assert not errors, errors
    got = {c.id: sorted(c.members) for c in a.list_communities(members=True)}
    assert got == {"0-aaa": ["e1", "e2"], "0-ccc": ["e3", "e4"]}


def test_three_processes_opening_a_new_database_at_once_all_succeed(pg_server, tmp_path):
    """Workers started together on a database that has neither the pgvector
    extension nor the schema yet. One used to fail with "cannot enable the pgvector extension
    (duplicate key ... pg_extension_name_index) ... install pgvector": a race, not a missing pgvector."""
    import subprocess
    import sys

    for attempt in range(3):  # the race is narrow: several fresh databases
        dsn = pg_server.create_database(f"fresh_{attempt}_{time.monotonic_ns()}", extension=False)
        script = ("import sys, threading; from scholargraph.store import open_store; "
                  "from pathlib import Path; open_store(Path(sys.argv[1]), 'postgres', dsn=sys.argv[2]).close()")
        procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / f"w{attempt}{i}"), dsn],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
        results = [(p.wait(120), p.stderr.read()) for p in procs]
        assert all(code == 0 for code, _ in results), [err[-800:] for _, err in results]
        store = open_store(tmp_path / f"w{attempt}0", "postgres", dsn=dsn, create=False)
        try:
            assert store.status_counts() == {}
        finally:
            store.close()


def test_whether_a_vector_index_is_empty_needs_no_count(open_pg):
    """A question asks each index it searches whether it holds anything: answered from one row."""
    store = open_pg()
    store.put_vectors("chunk", ["c1"], np.ones((1, 8), dtype=np.float32))
    assert store.vector_index("chunk", 8) and not store.vector_index("relation", 8)
    store.delete_vectors("chunk", ["c1"])
    assert not store.vector_index("chunk", 8)


def test_relations_are_scored_against_a_question_in_the_database(open_pg):
    """The highest cosine of each stored vector with any probe, as the exact index computes it."""
    store = open_pg()
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(6, 8)).astype(np.float32)
    store.put_vectors("relation", [f"r{i}" for i in range(6)], vectors)
    probes = rng.normal(size=(3, 8)).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    got = store.vector_index("relation", 8).similarities(["r0", "r3", "r5", "missing"], probes)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    want = {f"r{i}": float((unit[i] @ probes.T).max()) for i in (0, 3, 5)}
    assert got.keys() == want.keys() and all(abs(got[k] - want[k]) < 1e-5 for k in want)


def _graph_rows(store, n: int, prefix: str) -> None:
    """``n`` relations (and their entities) written by ``store`` in one unit of work."""
    from scholargraph.models import EntityRecord, RelationRecord

    def work():
        store.write_entities([EntityRecord(f"{prefix}{i}", "", "", "c1", id=f"{prefix}{i}", key=f"{prefix}{i}",
                                           document_id="d") for i in range(n + 1)])
        store.write_relations([RelationRecord(f"{prefix}{i}", f"{prefix}{i + 1}", "", "c1", id=f"{prefix}r{i}",
                                              source_id=f"{prefix}{i}", target_id=f"{prefix}{i + 1}", document_id="d")
                               for i in range(n)])
    store.write(work)


def test_a_questions_staleness_and_emptiness_checks_read_no_relation_or_chunk_rows(open_pg, monkeypatch):
    """Every graph-mode question asks whether the in-memory graph is stale and whether there are
    passages; at 10M abstracts a count or sum over the relations or the chunks would cost more than
    the question itself. Neither check may aggregate those tables."""
    store = open_pg()
    _graph_rows(store, 5, "e")
    store.add_pending(doc("d1"), "full", "offline")
    store.write(lambda: store.insert_chunks([Chunk("c1", "d1", 0, "text", 1), Chunk("c2", "d1", 1, "more text", 2)]))
    sent: list[str] = []
    real = psycopg.Connection.execute
    monkeypatch.setattr(psycopg.Connection, "execute",
                        lambda self, query, *a, **kw: sent.append(str(query)) or real(self, query, *a, **kw))
    version, chunks = store.graph_version(), store.content_version("chunks")
    assert store.has_rows("chunks") and not store.has_rows("keywords")
    reads = [s for s in sent if " relations" in s or " chunks" in s]
    assert reads and all("EXISTS (SELECT 1 FROM" in s for s in reads), reads
    assert (version, chunks) == (store.graph_version(), store.content_version("chunks"))


def test_the_graph_version_sees_every_workers_commit_whatever_their_order(open_pg):
    """Two workers write relations at once; the one that started first commits last. A question that
    read the version between the two commits must see a new one after the second (else it keeps a
    graph without the first worker's relations), and neither worker waits on the other's counter."""
    store = open_pg()
    _graph_rows(store, 2, "base")
    first, second = psycopg.connect(store.dsn), psycopg.connect(store.dsn)
    try:
        for conn in (first, second):
            conn.execute("SET lock_timeout = '5s'")  # a wait on a shared counter fails instead of hanging
        start = store.graph_version()
        first.execute("INSERT INTO relations(id, source_id, target_id, updated_at) VALUES ('x1', 'base0', 'base2', 0)")
        second.execute("INSERT INTO relations(id, source_id, target_id, updated_at) VALUES ('x2', 'base1', 'base0', 0)")
        assert store.graph_version() == start  # nothing committed yet
        second.commit()
        between = store.graph_version()
        assert between != start
        first.commit()
        after = store.graph_version()
        assert after != between
        second.execute("DELETE FROM entities WHERE id = 'base2'")  # its relations go by cascade
        second.commit()
        assert store.graph_version() not in (between, after)
        with psycopg.connect(store.dsn) as conn:
            assert store.versioned_rows("relations") == conn.execute("SELECT count(*) FROM relations").fetchone()[0] == 2
    finally:
        first.close()
        second.close()


def _dirty_graph(store, relations: int) -> list[str]:
    """``relations`` dirty relations between 20 entities (as indexing leaves them); their ids."""
    from scholargraph.models import EntityRecord, RelationRecord

    store.add_pending(doc("d1"), "full", "t")
    ends = [f"e{i:02d}" for i in range(20)]
    pairs = [(a, b) for a in ends for b in ends if a < b][:relations]
    store.write(lambda: store.write_entities([EntityRecord(e, "Thing", "x", "c1", id=e, key=e, document_id="d1")
                                              for e in ends]))
    store.write(lambda: store.write_relations([RelationRecord(a, b, "y", "c1", ["k"], 1.0, id=f"r-{a}-{b}",
                                                              source_id=a, target_id=b, document_id="d1")
                                               for a, b in pairs]))
    return [f"r-{a}-{b}" for a, b in pairs]


def _has_hnsw(store, namespace: str) -> bool:
    with psycopg.connect(store.dsn) as conn:
        return bool(conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s",
                                 (f"vectors_{namespace}_hnsw",)).fetchall())


def test_a_large_rebuild_writes_its_vectors_first_and_builds_the_index_once(open_pg):
    """Inserting each vector into an HNSW index cost 12× loading them and building it once: a rebuild
    that fills or mostly rewrites a namespace sets the index aside (every worker holds off) and the
    end of the rebuild builds it."""
    store, other = open_pg(hnsw_min_rows=100), open_pg(hnsw_min_rows=100)
    ids = _dirty_graph(store, 150)
    vectors = np.random.default_rng(4).normal(size=(150, 8)).astype(np.float32)
    store.put_vectors("chunk", ["c1"], vectors[:1])  # the vector tables exist
    store.begin_vector_rebuild()
    store.put_vectors("relation", ids[:120], vectors[:120])  # past hnsw_min_rows: not built now
    other.put_vectors("relation", ids[120:], vectors[120:])  # nor by another worker
    assert not _has_hnsw(store, "relation")
    other.end_vector_rebuild()  # whichever worker ends first builds it, once
    assert _has_hnsw(store, "relation")
    store.end_vector_rebuild()
    assert store.get_meta("vector_index_aside:relation") is None
    assert [h[0][0] for h in store.vector_index("relation", 8).search_many(vectors[:3], 1)] == ids[:3]


def test_a_small_rebuild_keeps_the_index(open_pg):
    store = open_pg(hnsw_min_rows=100)
    ids = _dirty_graph(store, 150)
    vectors = np.random.default_rng(5).normal(size=(150, 8)).astype(np.float32)
    store.put_vectors("relation", ids, vectors)
    assert _has_hnsw(store, "relation")
    with psycopg.connect(store.dsn, autocommit=True) as conn:  # a rebuild of 20 of the 150
        conn.execute("UPDATE relations SET dirty = (id = ANY(%s))", (ids[:20],))
    store.begin_vector_rebuild()
    assert _has_hnsw(store, "relation") and store.get_meta("vector_index_aside:relation") is None
