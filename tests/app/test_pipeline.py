"""The real pipeline against a scripted OpenAI-compatible server on loopback."""

import json

import pytest
from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.cli import main
from scholargraph.errors import LLMUnavailableError
from scholargraph.testing.llm_server import Reply, Rule

TEXT_A = ("Retrieval-Augmented Generation (RAG) grounds Large Language Models in retrieved evidence. "
          "GraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves one-hop neighbours.")
TEXT_B = "BERT encoders embed entity descriptions. SciERC annotates scientific entities and relations."


def kb_for(server, workdir, **extra):
    llm = {"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01, "backoff_max": 0.05,
           "timeout": 5, **extra.pop("llm", {})}
    return KnowledgeBase(workdir, llm=llm, extraction={"profile": "academic", **extra.pop("extraction", {})}, **extra)


def test_academic_indexing_calls_and_cache(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with kb_for(server, workdir) as kb:
        report = kb.insert(texts=[TEXT_A, TEXT_B])
        assert report.ok and len(report.added) == 2
        assert report.usage["extract"].calls == 2 and report.usage["glean"].calls == 2
        stats = kb.stats()
        assert stats.entities >= 5 and stats.relations >= 3 and stats.keywords >= 3
        calls = server.stats.calls
        again = kb.insert(texts=[TEXT_A, TEXT_B], force=True)  # re-extract: every call answered from the cache
        assert server.stats.calls == calls and again.usage["extract"].cached_calls == 2
    extract_requests = [r for r in server.stats.requests if "Build a knowledge graph" in json.dumps(r)]
    # the server takes a JSON schema: compact tuples, bounded lists, and a completion budget per chunk
    schema = extract_requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["entities"]["items"]["prefixItems"][1]["enum"]
    assert schema["properties"]["entities"]["maxItems"] and extract_requests[0]["max_tokens"] >= 512


def test_records_format_sends_no_schema(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with kb_for(server, workdir, extraction={"format": "records"}) as kb:
        assert kb.insert(texts=[TEXT_A]).ok and kb.stats().entities >= 3
    extract_requests = [r for r in server.stats.requests if "Build a knowledge graph" in json.dumps(r)]
    assert "response_format" not in extract_requests[0]  # records, one per line: no JSON schema to impose
    assert "entity|name|type|description" in json.dumps(extract_requests[0])


def test_malformed_output_is_recorded_and_document_continues(llm_server, workdir):
    def broken(request):
        return "Sorry, I cannot produce JSON today."

    rules = [Rule("bad", r"SciERC annotates", broken)] + default_rules()
    server = llm_server(rules=rules)
    with kb_for(server, workdir) as kb:
        report = kb.insert(texts=[TEXT_A, TEXT_B])
        # the paper is indexed without that chunk, and marked incomplete: the run is not ok
        assert not report.ok and len(report.added) == 2 and report.chunk_failures == 1 and len(report.incomplete) == 1
        rows = [(f.reason, f.raw) for fs in kb.store.chunk_failures().values() for f in fs]
    assert len(rows) == 1 and "cannot produce JSON" in rows[0][1] and rows[0][0]


def test_transient_errors_are_retried(llm_server, workdir):
    server = llm_server(rules=default_rules())
    server.fail_next(2, status=500)
    server.fail_next(1, status=429, retry_after=0.01)
    with kb_for(server, workdir) as kb:
        report = kb.insert(texts=[TEXT_A])
    assert report.ok and server.stats.errors_injected == 3


def test_persistent_failure_fails_only_that_document(llm_server, workdir):
    rules = [Rule("down", r"SciERC annotates", Reply("overloaded", status=500))] + default_rules()
    server = llm_server(rules=rules)
    with kb_for(server, workdir, llm={"retries": 1}) as kb:
        report = kb.insert(texts=[TEXT_A, TEXT_B])
        statuses = {r.title[:10]: r for r in kb.status()}
    assert len(report.added) == 1 and len(report.failed) == 1
    failed = next(r for r in statuses.values() if r.status == "FAILED")
    assert "500" in failed.error or "overloaded" in failed.error


def test_unknown_model_is_refused_before_any_work(llm_server, workdir):
    server = llm_server(rules=default_rules(), models=["llama3"])
    with kb_for(server, workdir) as kb, pytest.raises(LLMUnavailableError, match="available: llama3"):
        kb.insert(texts=[TEXT_A])
    assert server.stats.calls == 0


def test_server_going_away_leaves_documents_pending(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with kb_for(server, workdir, llm={"retries": 0}, max_parallel_documents=1) as kb:
        kb.workspace._llm_checked = True  # pretend the health check passed, then the server disappears
        server.stop()
        report = kb.insert(texts=[TEXT_A, TEXT_B])
        assert report.stopped and "PENDING" in report.stopped
        assert {r.status for r in kb.status()} == {"PENDING"}


def test_answer_citations_are_verified(llm_server, workdir):
    def answer(request):
        return "RAG grounds models in evidence [1]. It was invented on the moon [99]."

    server = llm_server(rules=[Rule("answer", r"numbered sources", answer)] + default_rules())
    with kb_for(server, workdir) as kb:
        kb.insert(texts=[TEXT_A, TEXT_B])
        result = kb.query("What does RAG do?", mode="naive")
    assert "[99]" not in result.text and "[1]" in result.text
    assert result.removed_citations == [99] and result.cited == [1]
    assert result.usage["answer"].calls == 1 and not result.extractive


def test_cli_index_and_ask_with_llm(llm_server, workdir, tmp_path, capsys, db_args):
    """End to end through the CLI with an LLM-built graph, on SQLite and on PostgreSQL (db_args)."""
    server = llm_server(rules=default_rules())
    paper = tmp_path / "paper.txt"
    paper.write_text(TEXT_A)
    args = ["-w", str(workdir), "--llm-url", server.base_url, "--llm-model", "scripted-model", *db_args]
    assert main(["index", str(paper), "--json", "--profile", "academic", *args]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["usage"]["by_purpose"]["extract"]["calls"] == 1
    code = main(["ask", "What is GraphRAG?", "--mode", "naive", "--json", *args])
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and data["usage"]["by_purpose"]["answer"]["calls"] == 1 and data["sources"]
    assert data["cited"] and all(s["rank"] in data["cited"] for s in data["sources"])
    for mode in ("local", "subgraph", "global", "hybrid"):  # the graph modes read the extracted graph
        code = main(["retrieve", "What does GraphRAG build over the corpus?", "--mode", mode, "--json", *args])
        data = json.loads(capsys.readouterr().out)
        assert code == 0 and data["results"], mode
        assert any("Knowledge Graph" in r["text"] for r in data["results"]), mode


def test_only_context_makes_no_llm_call(llm_server, workdir, capsys):
    server = llm_server(rules=default_rules())
    with kb_for(server, workdir) as kb:
        kb.insert(texts=[TEXT_A])
    before = server.stats.calls
    args = ["-w", str(workdir), "--llm-url", server.base_url, "--llm-model", "scripted-model"]
    code = main(["ask", "What is GraphRAG?", "--mode", "naive", "--only-context", "--json", *args])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and "[1]" in data["context"] and server.stats.calls == before


def test_session_history_reaches_the_follow_up(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with kb_for(server, workdir) as kb:
        kb.insert(texts=[TEXT_A])
        kb.query("What is GraphRAG?", mode="naive", session="s1")
        kb.query("And what does it build?", mode="naive", session="s1")
    answer_requests = [r for r in server.stats.requests if "numbered sources" in json.dumps(r)]
    follow_up = json.dumps(answer_requests[-1])
    assert "Earlier question: What is GraphRAG?" in follow_up


def test_extraction_starts_before_the_last_file_is_read(llm_server, workdir, tmp_path, monkeypatch):
    """Files are parsed one by one while earlier papers are already with the LLM."""
    import time

    import scholargraph.app.pipeline as pipeline_module

    server = llm_server(rules=default_rules())
    papers = tmp_path / "papers"
    papers.mkdir()
    for name, text in (("a.txt", TEXT_A), ("b.txt", TEXT_B), ("c.txt", TEXT_A + " Late addition.")):
        (papers / name).write_text(text)
    calls_seen_while_reading_c: list[int] = []
    real_load = pipeline_module.iter_file

    def iter_file(path, options, warnings):
        if path.name == "c.txt":
            deadline = time.monotonic() + 10
            while server.stats.calls == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            calls_seen_while_reading_c.append(server.stats.calls)
        return real_load(path, options, warnings)

    monkeypatch.setattr(pipeline_module, "iter_file", iter_file)
    with kb_for(server, workdir) as kb:
        report = kb.insert([papers])
    assert report.ok and len(report.added) == 3
    assert calls_seen_while_reading_c[0] > 0  # a and b were being extracted while c was read


def test_cost_figures_agree_with_the_server(llm_server, workdir, tmp_path, capsys):
    # `stats --cost` counted failed HTTP attempts as calls; index --json, stats --cost and
    # the server must agree, with answered calls, failed attempts and cache hits apart
    server = llm_server(rules=default_rules())
    server.fail_next(3, status=429, retry_after=0.01)
    paper = tmp_path / "paper.txt"
    paper.write_text(TEXT_A)
    args = ["-w", str(workdir), "--llm-url", server.base_url, "--llm-model", "scripted-model"]
    assert main(["index", str(paper), "--json", "--profile", "academic", *args]) == 0
    run = json.loads(capsys.readouterr().out)["usage"]
    assert run["failed_attempts"] == 3 and run["cached_calls"] == 0
    assert run["llm_calls"] + run["failed_attempts"] == server.stats.calls
    assert main(["stats", "--cost", "--json", *args]) == 0
    stats = json.loads(capsys.readouterr().out)
    total, (paper_cost,), rest = stats["usage"], stats["cost_by_document"].values(), stats["cost_outside_documents"]
    assert (total["llm_calls"], total["failed_attempts"], total["cached_calls"]) == (run["llm_calls"], 3, 0)
    assert paper_cost["failed_attempts"] == 3 and paper_cost["by_purpose"]["extract"]["calls"] == 1
    assert paper_cost["llm_calls"] + rest["llm_calls"] == run["llm_calls"] and rest["failed_attempts"] == 0
    assert main(["stats", "--cost", *args]) == 0
    shown = capsys.readouterr().out
    assert f"{run['llm_calls']} answered calls, 3 failed attempts, 0 cache hits" in shown
    assert f"{paper_cost['llm_calls']} answered calls, 3 failed attempts, 0 cache hits" in shown

    sent = server.stats.calls
    assert main(["index", str(paper), "--force", "--json", "--profile", "academic", *args]) == 0
    again = json.loads(capsys.readouterr().out)["usage"]
    assert server.stats.calls == sent and (again["llm_calls"], again["failed_attempts"]) == (0, 0)
    assert again["cached_calls"] == paper_cost["llm_calls"]  # the same graph: no community report to redo
    assert main(["stats", "--cost", "--json", *args]) == 0
    total = json.loads(capsys.readouterr().out)["usage"]
    assert (total["llm_calls"], total["failed_attempts"], total["cached_calls"]) == (run["llm_calls"], 3, again["cached_calls"])


def graph_snapshot(kb):
    """Everything a re-run must reproduce: entities (with their provenance records) and edges."""
    entities = {e.name: (e.type, sorted(e.aliases), e.description, len(kb.store.entity_name_keys(e.id)))
                for e in kb.entities(limit=10_000)}
    return entities, sorted(kb.store.all_edges())


def test_force_with_identical_cached_answers_gives_the_same_graph(llm_server, workdir):
    # `index --force` changed the graph (271 -> 269 entities): the old provenance stayed
    # beside the new, so descriptions, vectors and then resolution drifted run after run
    server = llm_server(rules=default_rules())
    with kb_for(server, workdir) as kb:
        kb.insert(texts=[TEXT_A, TEXT_B])
        first = graph_snapshot(kb)
        for _ in range(2):
            again = kb.insert(texts=[TEXT_A, TEXT_B], force=True)
            assert again.usage["extract"].calls == 0 and again.usage["extract"].cached_calls == 2
            assert graph_snapshot(kb) == first


class _Totals:
    """The Progress protocol, keeping the run's total of documents."""

    def __init__(self) -> None:
        self.total = 0

    def start(self, total: int) -> None:
        self.total = total

    def add_total(self, more: int) -> None:
        self.total += more

    def read(self, records: int) -> None: ...
    def advance(self) -> None: ...
    def phase(self, name: str) -> None: ...
    def log(self, message: str) -> None: ...
    def finish(self) -> None: ...


def test_the_progress_total_is_counted_without_reading_every_pending_id(llm_server, workdir, monkeypatch):
    """A long-lived worker starts a run per batch: its progress total is a count, not a read of
    every PENDING document's id (a million registered documents would be read per batch)."""
    server = llm_server(rules=default_rules())
    totals = _Totals()
    with kb_for(server, workdir, progress=totals) as kb:
        asked: list[object] = []
        real = kb.store.pending_ids
        monkeypatch.setattr(kb.store, "pending_ids", lambda only=None: asked.append(only) or real(only))
        report = kb.insert(texts=[TEXT_A, TEXT_B])
    assert report.ok and len(report.added) == 2 and totals.total == 2
    assert None not in asked  # never every pending id
