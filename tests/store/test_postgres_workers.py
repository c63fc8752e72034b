"""Workers on one PostgreSQL database share a corpus: a worker takes the documents
other workers registered, holds no more claims than it can start, and two `scholargraph index`
processes finish a corpus together, every document processed once, no chunk missing or duplicated."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.ingest.registry import load_file
from scholargraph.models import DocStatus, Document, Section
from scholargraph.store import open_store
from scholargraph.testing.llm_script import Rule

WAIT = 400  # seconds: a process start can take minutes on a machine loaded by parallel test suites
TOPICS = ["graph retrieval", "contrastive learning", "protein folding", "entity resolution", "citation networks",
          "question answering"]


def write_corpus(folder, n: int) -> list[str]:
    folder.mkdir()
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        (folder / f"paper{i:02d}.md").write_text(
            f"# Study {i} of {topic}\n\n## Introduction\nWe study {topic} with Method{i} and Dataset{i % 5}. "
            f"Method{i} improves on BERT for {topic} (experiment {i}).\n")
    return [f"paper{i:02d}.md" for i in range(n)]


def index_process(corpus, workdir, dsn: str, server_url: str, *extra: str, env: dict | None = None) -> subprocess.Popen:
    """`scholargraph index CORPUS` (no CORPUS: None) as a worker process of its own."""
    env = {**os.environ, "SCHOLARGRAPH_EMBEDDINGS__PROVIDER": "openai", "SCHOLARGRAPH_EMBEDDINGS__BASE_URL": server_url,
           "SCHOLARGRAPH_EMBEDDINGS__MODEL": "scripted-embed", "SCHOLARGRAPH_EMBEDDINGS__DIMENSION": "384",
           "SCHOLARGRAPH_MAX_PARALLEL_DOCUMENTS": "3",  # small claims: the work is shared, not grabbed at once
           "SCHOLARGRAPH_LLM__TIMEOUT": str(2 * WAIT), **(env or {})}  # a call held at the gate waits, it does not time out
    paths = [] if corpus is None else [str(corpus)]
    return subprocess.Popen(
        [sys.executable, "-m", "scholargraph.cli", "index", *paths, "-w", str(workdir), "--db", dsn, "--json",
         "--profile", "academic", "--llm-url", server_url, "--llm-model", "scripted-model", "--llm-concurrency", "2",
         *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def gated(rules: list[Rule], gate: threading.Event, held: list | None = None, marker: str | None = None) -> list[Rule]:
    """The same replies, held until ``gate`` opens (both workers hold claims: neither can finish alone);
    each request held is noted in ``held``. ``marker``: only requests that contain it are held."""
    def hold(respond):
        def reply(request):
            if marker is None or marker in json.dumps(request):
                if held is not None:
                    held.append(request)
                gate.wait(WAIT)
            return respond(request) if callable(respond) else respond
        return reply

    return [Rule(r.kind, r.pattern, hold(r.respond)) for r in rules]


def open_when_both_claimed(dsn: str, gate: threading.Event) -> None:
    """Open the gate once each worker holds a claim (whatever the machine's speed, both get work)."""
    deadline = time.monotonic() + WAIT
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline and not gate.is_set():
            try:
                n = conn.execute("SELECT count(DISTINCT claimed_by) FROM documents").fetchone()[0]
            except psycopg.errors.UndefinedTable:  # the first worker has not made the schema yet
                n = 0
            if n == 2:
                break
            time.sleep(0.05)
    gate.set()


def no_whole_document_reads(monkeypatch, store) -> None:
    """A worker asks what other workers index from the status index (the documents PENDING or
    PROCESSING), never by grouping or listing every document (papers without a reference list:
    the citation update reads the batch's documents only)."""
    def whole(*args, **kw):
        raise AssertionError("read every document")

    monkeypatch.setattr(store, "status_counts", whole)
    monkeypatch.setattr(store, "list_documents", whole)


def worker_kb(dsn: str, workdir, server_url: str, **overrides) -> KnowledgeBase:
    return KnowledgeBase(workdir, store={"backend": "postgres", "dsn": dsn},
                         llm={"base_url": server_url, "model": "scripted-model", "timeout": 2 * WAIT},
                         embeddings={"provider": "openai", "base_url": server_url, "model": "scripted-embed",
                                     "dimension": 384},
                         extraction={"profile": "academic"}, **overrides)


def test_a_worker_takes_the_documents_another_worker_registered_during_its_run(tmp_path, pg_dsn, llm_server,
                                                                               monkeypatch):
    """Two workers started together on the same folder: this one's first claim finds nothing, then the
    other reads faster and registers every file first. This worker must still take those documents
    (it used to claim only the ones it registered itself: it stopped with none, the other did all)."""
    import scholargraph.app.pipeline as pipeline_module

    server = llm_server(rules=default_rules())
    write_corpus(tmp_path / "papers", 6)
    dsn = pg_dsn()
    kb = worker_kb(dsn, tmp_path / "this", server.base_url)
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    claims: list[list[str]] = []
    first_claims: list[list[str]] = []  # those made before any file was read
    registered = threading.Event()
    real_claim, real_iter = kb.store.claim_pending, pipeline_module.iter_file

    def claim_pending(limit, only=None):
        ids = real_claim(limit, only)
        claims.append(ids)
        return ids

    def iter_file(path, options, warnings):  # this worker's parsing thread
        if not registered.is_set():  # the other worker registers the whole folder once this one has claimed
            deadline = time.monotonic() + 60
            while not claims and time.monotonic() < deadline:
                time.sleep(0.01)
            first_claims.extend(claims)
            for paper in sorted((tmp_path / "papers").iterdir()):
                for doc in load_file(paper, options):
                    other.add_pending(doc, "full", "academic")
            registered.set()
        return real_iter(path, options, warnings)

    monkeypatch.setattr(kb.store, "claim_pending", claim_pending)
    monkeypatch.setattr(pipeline_module, "iter_file", iter_file)
    try:
        report = kb.insert([tmp_path / "papers"])
        assert first_claims and not any(first_claims)  # it looked for work before the other worker registered any
        assert len(report.added) == 6, report.added
        assert other.status_counts() == {"PROCESSED": 6}
    finally:
        kb.close()
        other.close()


def test_a_worker_claims_no_more_documents_than_it_can_start(tmp_path, pg_dsn, llm_server):
    """While a worker's documents wait for the LLM, it holds those it works on and at most one more:
    the rest stay PENDING for other workers (it used to hold twice its parallel documents)."""
    gate, held = threading.Event(), []
    server = llm_server(rules=gated(default_rules(), gate, held))
    texts = [(tmp_path / "papers" / name).read_text() for name in write_corpus(tmp_path / "papers", 12)]
    dsn = pg_dsn()
    kb = worker_kb(dsn, tmp_path / "this", server.base_url, max_parallel_documents=3)
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    run = threading.Thread(target=lambda: kb.insert(texts=texts), daemon=True)  # all pending when the run starts
    run.start()
    try:
        deadline = time.monotonic() + 120
        while len(held) < 3 and time.monotonic() < deadline:  # three documents are with the LLM
            time.sleep(0.05)
        assert len(held) >= 3
        time.sleep(1.0)  # time enough to claim more, if it were going to
        taken = other.claim_pending(100)
        assert len(taken) >= 12 - 3 - 1, other.status_counts()
        other.release(taken)
    finally:
        gate.set()
        run.join(timeout=2 * WAIT)
        kb.close()
        other.close()
    assert not run.is_alive()


@pytest.mark.slow
@pytest.mark.timeout(2 * WAIT)
def test_two_index_processes_share_one_database(tmp_path, pg_dsn, llm_server):
    gate = threading.Event()
    server = llm_server(rules=gated(default_rules(), gate), latency=0.2)
    write_corpus(tmp_path / "papers", 24)
    dsn = pg_dsn()
    opener = threading.Thread(target=open_when_both_claimed, args=(dsn, gate), daemon=True)
    opener.start()
    procs = [index_process(tmp_path / "papers", tmp_path / f"worker{n}", dsn, server.base_url) for n in range(2)]
    deadline = time.monotonic() + WAIT + 240
    try:
        outputs = [p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in procs]
    finally:
        gate.set()
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
    reports = [json.loads(out) for out, _ in outputs]
    done = [set(r["processed"]) for r in reports]
    assert all(done), f"each worker should process some documents: {[len(d) for d in done]}"
    assert not done[0] & done[1] and len(done[0] | done[1]) == 24

    with psycopg.connect(dsn) as conn:
        q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
        assert q("SELECT status, count(*) FROM documents GROUP BY status") == [("PROCESSED", 24)]
        per_doc = q("SELECT d.id, count(c.id) FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id")
        assert all(n == 1 for _, n in per_doc)  # one short section each: one chunk, none missing
        chunks = q("SELECT count(*), count(DISTINCT id), count(DISTINCT (document_id, ordinal)) FROM chunks")[0]
        assert chunks == (24, 24, 24)
        # a document processed twice would have stated its entities twice
        records = q("SELECT count(*), count(DISTINCT (entity_id, chunk_id, name, role)) FROM entity_sources")[0]
        assert records[0] > 0 and records[0] == records[1]
        assert q("SELECT count(*) FROM vectors_chunk")[0][0] == 24
        assert q("SELECT count(*) FROM entities WHERE dirty")[0][0] == 0


def test_a_worker_that_finishes_while_another_still_indexes_leaves_the_communities_to_it(tmp_path, pg_dsn, llm_server,
                                                                                             monkeypatch):
    """Community reports written over a half-indexed graph are written again by the worker that finishes
    last: with two workers every report was paid twice. The early worker leaves them to the last one."""
    server = llm_server(rules=default_rules())
    texts = [(tmp_path / "papers" / name).read_text() for name in write_corpus(tmp_path / "papers", 12)]
    dsn = pg_dsn()
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    kb = worker_kb(dsn, tmp_path / "this", server.base_url)
    no_whole_document_reads(monkeypatch, kb.store)
    try:
        other.add_pending(Document(id="elsewhere", title="Elsewhere", sections=[Section("body", "word " * 5)]),
                          "full", "academic")
        assert other.claim_pending(1) == ["elsewhere"]  # another live worker is on it
        report = kb.insert(texts=texts[:6], wait=False)
        assert len(report.added) == 6
        assert any("left to the worker that finishes last (1 document" in n for n in report.notes), report.notes
        assert server.stats.by_kind.get("report", {}).get("calls", 0) == 0
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT count(*) FROM communities").fetchone()[0] == 0
        other.close()  # that worker is gone: its document is no one's now
        report = kb.insert(texts=texts[6:])
        assert not any("left to the worker" in n for n in report.notes), report.notes
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT count(*) FROM communities").fetchone()[0] > 0
    finally:
        kb.close()
        other.close()


def test_a_community_update_waits_for_another_workers_then_finds_it_done(tmp_path, pg_dsn, llm_server):
    """Two workers finishing at the same moment both see no one else indexing: the second one's
    update waits for the first's, then keeps its communities and reports (no report paid twice)."""
    server = llm_server(rules=default_rules())
    texts = [(tmp_path / "papers" / name).read_text() for name in write_corpus(tmp_path / "papers", 8)]
    dsn = pg_dsn()
    first = worker_kb(dsn, tmp_path / "first", server.base_url, communities={"reports_on_index": True})
    second = worker_kb(dsn, tmp_path / "second", server.base_url)
    try:
        first.insert(texts=texts)  # indexes and writes the communities' reports (`index --reports`)
        reports = server.stats.by_kind.get("report", {}).get("calls", 0)
        assert reports > 0
        held = first.store.communities_lock()
        assert held.acquire()  # the first worker is (still) updating them
        result: dict = {}
        update = threading.Thread(target=lambda: result.update(second.update_communities(force=True).to_json()), daemon=True)
        update.start()
        time.sleep(1.5)
        assert update.is_alive() and not result  # it waits rather than computing beside the first
        held.release()
        update.join(timeout=120)
        assert not update.is_alive() and result
        assert server.stats.by_kind["report"]["calls"] == reports  # the same communities: every report kept
    finally:
        first.close()
        second.close()


def test_workers_that_finish_together_write_the_community_reports_between_them(tmp_path, pg_dsn, llm_server,
                                                                                  monkeypatch):
    """The reports used to be written by whichever worker got the communities lock, the others
    waiting: with reports on, two workers were no faster than one at the end of a run. Each level's
    missing reports are claimed a few at a time by every worker that gets there; none is written
    twice."""
    from scholargraph.graph import community_reports

    monkeypatch.setattr(community_reports, "REPORT_CLAIM", 1)  # one at a time: each worker must take some
    gate = threading.Event()
    server = llm_server(rules=gated(default_rules(), gate, marker="report of one community"))
    texts = [(tmp_path / "papers" / name).read_text() for name in write_corpus(tmp_path / "papers", 8)]
    dsn = pg_dsn()
    first = worker_kb(dsn, tmp_path / "first", server.base_url)
    second = worker_kb(dsn, tmp_path / "second", server.base_url)
    try:
        first.insert(texts=texts)  # the communities, their reports deferred (an LLM is configured)
        missing = first.indexing.reports_pending()
        assert missing > 2 and server.stats.by_kind.get("report", {}).get("calls", 0) == 0
        runs: list[dict] = [{}, {}]
        threads = [threading.Thread(target=lambda i=i, kb=kb: runs[i].update(kb.update_communities().to_json()), daemon=True)
                   for i, kb in enumerate((first, second))]
        for t in threads:
            t.start()
        deadline = time.monotonic() + WAIT
        with psycopg.connect(dsn, autocommit=True) as conn:
            while time.monotonic() < deadline and conn.execute(
                    "SELECT count(DISTINCT claimed_by) FROM maintenance WHERE task = 'reports'").fetchone()[0] < 2:
                time.sleep(0.05)
        gate.set()  # each worker holds a report it is writing
        for t in threads:
            t.join(WAIT)
        assert all(run.get("reports_written", 0) > 0 for run in runs), runs
        assert sum(run["reports_written"] for run in runs) == missing
        assert server.stats.by_kind["report"]["calls"] == sum(run["llm_reports"] for run in runs)  # none paid twice
        assert first.store.community_reports(list({c.signature for c in first.store.list_communities()})).keys() \
            == {c.signature for c in first.store.list_communities()}
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT count(*) FROM maintenance WHERE task = 'reports'").fetchone()[0] == 0
    finally:
        gate.set()
        first.close()
        second.close()


def test_a_worker_joining_others_claims_before_rebuilding_their_graph(tmp_path, pg_dsn, llm_server, monkeypatch):
    """A worker started while another indexes used to rebuild the other's dirty entities first, and
    kept at it for as long as the other stated new ones: it claimed few documents. Now it claims first;
    alone, it still rebuilds what an interrupted run left before claiming."""
    server = llm_server(rules=default_rules())
    texts = [(tmp_path / "papers" / name).read_text() for name in write_corpus(tmp_path / "papers", 4)]
    dsn = pg_dsn()
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    kb = worker_kb(dsn, tmp_path / "this", server.base_url)
    events: list[str] = []
    real_refresh, real_claim = kb.indexing.refresh_graph, kb.store.claim_pending

    async def refresh_graph(refresher=None):
        events.append("refresh")
        await real_refresh(refresher)

    def claim_pending(limit, only=None):
        events.append("claim")
        return real_claim(limit, only)

    monkeypatch.setattr(kb.indexing, "refresh_graph", refresh_graph)
    monkeypatch.setattr(kb.store, "claim_pending", claim_pending)
    try:
        other.add_pending(Document(id="elsewhere", title="Elsewhere", sections=[Section("body", "word " * 5)]),
                          "full", "academic")
        assert other.claim_pending(1) == ["elsewhere"]  # another live worker is indexing
        kb.insert(texts=texts[:2], wait=False)  # not waiting for the other worker's document
        assert events and events[0] == "claim", events
        other.close()
        events.clear()
        kb.insert(texts=texts[2:])
        assert events[0] == "refresh", events  # alone: an interrupted run's leftovers are rebuilt first
    finally:
        kb.close()
        other.close()


def _claimed_by_another_worker(kb: KnowledgeBase, papers, other) -> list[str]:
    """Every paper of ``papers`` registered and claimed by the ``other`` worker (live, mid-run)."""
    for paper in sorted(papers.iterdir()):
        for doc in load_file(paper, kb.indexing.load_options()):
            other.add_pending(doc, "full", "academic")
    return sorted(other.write(lambda: other.claim_pending(100)))


def test_a_worker_with_nothing_to_claim_waits_for_the_others_then_reports_who_indexed_what(tmp_path, pg_dsn,
                                                                                          llm_server, caplog):
    """A second worker that finds every file claimed by the first must not exit 0 saying
    "files: 10 indexed" while the first still had all 10 PROCESSING. By default it now waits until
    the knowledge base is complete (taking over what the others give back), and says who indexed what."""
    server = llm_server(rules=default_rules())
    names = write_corpus(tmp_path / "papers", 4)
    dsn = pg_dsn()
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    kb = worker_kb(dsn, tmp_path / "this", server.base_url)
    try:
        ids = _claimed_by_another_worker(kb, tmp_path / "papers", other)
        result: dict = {}
        run = threading.Thread(target=lambda: result.update(report=kb.insert([tmp_path / "papers"])), daemon=True)
        with caplog.at_level(logging.WARNING, logger="scholargraph.app.indexing"):
            run.start()
            # registered every file and found them all claimed (on a loaded machine, 3 s were not
            # always enough to get there: the files then counted as "already indexed")
            wait_for(lambda: any("waiting until the knowledge base is complete" in r.getMessage()
                                 for r in caplog.records), "the worker to wait for the other")
        assert run.is_alive() and not result  # waiting: the knowledge base is not complete yet
        assert other.status_counts() == {"PROCESSING": 4}
        finished, given_back = ids[:2], ids[2:]
        other.write(lambda: [other.set_status(d, DocStatus.PROCESSED) for d in finished])  # the other finished two
        other.release(given_back)  # and stopped before the other two
        run.join(timeout=WAIT)
        assert not run.is_alive()
        report = result["report"]
        assert sorted(report.added) == given_back
        by_doc = {f.documents[0]: f.outcome for f in report.files}
        assert by_doc == {**dict.fromkeys(finished, "indexed by another worker"), **dict.fromkeys(given_back, "indexed")}
        assert len(report.files) == len(names) and other.status_counts() == {"PROCESSED": 4}
    finally:
        kb.close()
        other.close()


def test_without_waiting_a_worker_reports_the_documents_others_are_still_indexing(tmp_path, pg_dsn, llm_server,
                                                                                   monkeypatch):
    server = llm_server(rules=default_rules())
    write_corpus(tmp_path / "papers", 3)
    dsn = pg_dsn()
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    kb = worker_kb(dsn, tmp_path / "this", server.base_url)
    try:
        _claimed_by_another_worker(kb, tmp_path / "papers", other)
        no_whole_document_reads(monkeypatch, kb.store)
        report = kb.insert([tmp_path / "papers"], wait=False)
        assert report.added == []
        assert [f.outcome for f in report.files] == ["being indexed by another worker"] * 3
        assert any("3 document(s) still being indexed by other workers" in n for n in report.notes), report.notes
    finally:
        kb.close()
        other.close()


# -- workers that come and go -------------------------------------------------------


def victim_process(corpus, workdir, dsn: str, server_url: str, lease_s: float, *extra: str) -> subprocess.Popen:
    """An `index` worker process whose leases last ``lease_s`` (its LLM server may hold its calls)."""
    return index_process(corpus, workdir, dsn, server_url, *extra, env={"SCHOLARGRAPH_STORE__LEASE_SECONDS": str(lease_s)})


def wait_for(condition, what: str, timeout: float = WAIT, state=None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}" + (f": {state()}" if state else "")
        time.sleep(0.1)


def processing_by(dsn: str) -> dict:
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            return dict(conn.execute("SELECT claimed_by, count(*) FROM documents WHERE status = 'PROCESSING' "
                                     "GROUP BY claimed_by").fetchall())
        except psycopg.errors.UndefinedTable:
            return {}


def assert_each_document_indexed_once(dsn: str, n: int) -> None:
    with psycopg.connect(dsn) as conn:
        q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
        assert q("SELECT status, count(*) FROM documents GROUP BY status") == [("PROCESSED", n)]
        assert q("SELECT count(*), count(DISTINCT id), count(DISTINCT document_id) FROM chunks")[0] == (n, n, n)
        records = q("SELECT count(*), count(DISTINCT (entity_id, chunk_id, name, role)) FROM entity_sources")[0]
        assert records[0] > 0 and records[0] == records[1]  # a document committed twice states its entities twice
        assert q("SELECT count(*) FROM vectors_chunk")[0][0] == n


class LongLivedWorker:
    """``Indexing.awork`` in a thread of the test process, stopped with ``stop()``."""

    def __init__(self, kb: KnowledgeBase):
        import asyncio

        self.kb, self.report, self.error = kb, None, None
        self.batches: list = []  # the report of each batch it finished (its end-of-run work included)
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.report = self._loop.run_until_complete(self.kb.workspace._closing(
                self.kb.indexing.awork(self._stop, on_batch=self.batches.append)))
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    def stop(self):
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=WAIT)
        assert not self._thread.is_alive() and self.error is None, self.error
        self.kb.close()  # as `index --worker` does on exit: its leases' heartbeat stops with the store
        return self.report


@pytest.mark.slow
@pytest.mark.timeout(2 * WAIT)
def test_a_worker_killed_mid_document_leaves_its_documents_to_a_running_worker(tmp_path, pg_dsn, llm_server):
    """kill -9 of a worker process while its documents wait for the LLM: a long-lived worker that is
    running takes them over (no next run needed); every document is indexed once, none is lost."""
    gate = threading.Event()
    held: list = []
    victim_llm = llm_server(rules=gated(default_rules(), gate, held))
    llm = llm_server(rules=default_rules())
    write_corpus(tmp_path / "papers", 6)
    dsn = pg_dsn()
    victim = victim_process(tmp_path / "papers", tmp_path / "victim", dsn, victim_llm.base_url, 2.0)
    worker = None
    try:
        wait_for(lambda: held and processing_by(dsn) and sum(_counts(dsn).values()) == 6,
                 "the victim to register every paper and hold some at the LLM")
        worker = LongLivedWorker(worker_kb(dsn, tmp_path / "worker", llm.base_url))
        victim_docs = sum(processing_by(dsn).values())
        victim.kill()  # SIGKILL mid-document
        victim.wait(timeout=60)
        wait_for(lambda: worker.error is not None or _counts(dsn) == {"PROCESSED": 6},
                 "the running worker to finish every document", state=lambda: (_counts(dsn), processing_by(dsn)))
        report = worker.stop()
    finally:
        gate.set()
        if victim.poll() is None:
            victim.kill()
    assert victim_docs >= 1 and len(report.added) == 6  # the victim's documents and those it never claimed
    assert_each_document_indexed_once(dsn, 6)


@pytest.mark.slow
@pytest.mark.timeout(2 * WAIT)
def test_a_frozen_worker_loses_its_documents_after_its_lease_and_commits_nothing_twice(tmp_path, pg_dsn, llm_server):
    """A worker that stops renewing its leases but keeps its connection (a frozen process, a lost
    machine: SIGSTOP here) loses its documents to a running worker once the leases run out; woken up
    and answered by its LLM, it finds them taken over at commit and drops its work."""
    gate = threading.Event()
    held: list = []
    victim_llm = llm_server(rules=gated(default_rules(), gate, held))
    llm = llm_server(rules=default_rules())
    write_corpus(tmp_path / "papers", 4)
    dsn = pg_dsn()
    victim = victim_process(tmp_path / "papers", tmp_path / "victim", dsn, victim_llm.base_url, 2.0)
    worker = None
    try:
        wait_for(lambda: held and sum(processing_by(dsn).values()) == 4, "the victim to hold every document")
        victim.send_signal(signal.SIGSTOP)
        worker = LongLivedWorker(worker_kb(dsn, tmp_path / "worker", llm.base_url))
        wait_for(lambda: worker.error is not None or _counts(dsn) == {"PROCESSED": 4},
                 "the running worker to take the documents over")
        report = worker.stop()
        victim.send_signal(signal.SIGCONT)
        gate.set()  # the victim's LLM calls come back: it tries to commit what it no longer holds
        out, err = victim.communicate(timeout=WAIT)
    finally:
        gate.set()
        if victim.poll() is None:
            victim.send_signal(signal.SIGCONT)
            victim.kill()
    assert sorted(report.added) == sorted(_ids(dsn))
    assert victim.returncode == 0, err[-3000:]
    late = json.loads(out)
    assert late["processed"] == []
    assert any("taken over by another worker" in w for w in late["warnings"]), late["warnings"]
    assert_each_document_indexed_once(dsn, 4)


@pytest.mark.slow
@pytest.mark.timeout(2 * WAIT)
def test_a_long_lived_worker_indexes_documents_added_later_and_stops_cleanly_on_sigterm(tmp_path, pg_dsn, llm_server):
    """`index --worker` waits for documents; one registered later (by anyone) is indexed; SIGTERM while it
    holds another document ends it with exit code 0 and gives that document back (PENDING, no owner)."""
    gate = threading.Event()
    held: list = []
    server = llm_server(rules=gated(default_rules(), gate, held, marker="Held paper"))
    dsn = pg_dsn()
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)  # another user registering papers
    worker = index_process(None, tmp_path / "worker", dsn, server.base_url, "--worker")
    try:
        time.sleep(2)
        assert worker.poll() is None  # nothing to do: it waits
        other.add_pending(Document(id="later", title="Later paper", sections=[Section("body", "BERT helps GraphRAG.")]),
                          "full", "academic")
        wait_for(lambda: other.status_counts() == {"PROCESSED": 1}, "the worker to index the later document")
        other.add_pending(Document(id="held", title="Held paper", sections=[Section("body", "Held paper on BERT.")]),
                          "full", "academic")
        wait_for(lambda: held, "the worker to work on the held document")
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=WAIT)
    finally:
        gate.set()
        if worker.poll() is None:
            worker.kill()
        other.close()
    assert worker.returncode == 0, err[-3000:]
    assert json.loads(out)["processed"] == ["later"]
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT status, claimed_by FROM documents WHERE id = 'held'").fetchone() == ("PENDING", None)


def _counts(dsn: str) -> dict:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return dict(conn.execute("SELECT status, count(*) FROM documents GROUP BY status").fetchall())


def _ids(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM documents").fetchall()]


@pytest.mark.timeout(2 * WAIT)
def test_a_long_lived_worker_retries_failed_chunks_with_its_first_batch_not_after_every_one(tmp_path, pg_dsn,
                                                                                            llm_server):
    """A chunk the model cannot answer marks its paper incomplete; a plain `index` retries it on each
    run. A long-lived worker retries such chunks with its first batch only: after every batch, each
    one would cost its LLM calls again whatever the batch holds (restart the worker to retry)."""
    def broken(request):
        return "Sorry, I cannot produce JSON today."

    server = llm_server(rules=[Rule("bad", r"Zebrafish lanterns", broken)] + default_rules())
    dsn = pg_dsn()
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    worker = None

    def asked() -> int:
        return sum("Zebrafish lanterns" in json.dumps(r) for r in server.stats.requests)

    try:
        other.add_pending(Document(id="bad", title="Bad", sections=[Section("body", "Zebrafish lanterns glow at night.")]),
                          "full", "academic")
        worker = LongLivedWorker(worker_kb(dsn, tmp_path / "worker", server.base_url))
        # each paper arrives once the worker has finished the batch before (its end-of-run work too),
        # so the two later papers are two later batches whatever the machine's speed (added as soon as
        # the last paper committed, one could join that batch and leave "later batches" unchecked)
        wait_for(lambda: worker.batches and other.status_counts() == {"PROCESSED": 1}, "the first batch",
                 state=other.status_counts)
        assert other.chunk_failures()
        first = asked()
        for n, text in enumerate(["BERT helps GraphRAG.", "SciERC annotates scientific entities."]):
            other.add_pending(Document(id=f"good{n}", title=f"Good {n}", sections=[Section("body", text)]),
                              "full", "academic")
            wait_for(lambda n=n: len(worker.batches) >= n + 2 and other.status_counts() == {"PROCESSED": n + 2},
                     "the next batch", state=other.status_counts)
        report = worker.stop()
        worker = None
    finally:
        if worker is not None:
            worker.stop()
        other.close()
    assert first >= 1 and asked() == first  # the two later batches did not ask about the failed chunk again
    assert sorted(report.added) == ["bad", "good0", "good1"] and report.incomplete == ["bad"]
