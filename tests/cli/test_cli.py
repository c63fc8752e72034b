"""The `scholargraph` command: JSON shapes, exit codes, error messages."""

import json

import pytest

from scholargraph.cli import main


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a.md").write_text("# Graph RAG\n\n## Introduction\nKnowledge graphs help retrieval-augmented generation (RAG) answer multi-hop questions.\n")
    (folder / "b.txt").write_text("Contrastive learning trains sentence encoders such as SimCSE on paired sentences.\n")
    return folder


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_index_status_stats_retrieve_ask_json(capsys, corpus, workdir, db_args):
    w = str(workdir)
    code, out, _ = run(capsys, "index", str(corpus), "-w", w, "--json", "--profile", "offline", *db_args)
    report = json.loads(out)
    assert code == 0 and len(report["processed"]) == 2 and report["profile"] == "offline"

    code, out, _ = run(capsys, "status", "-w", w, "--json", *db_args)
    docs = json.loads(out)["documents"]
    assert code == 0 and {d["status"] for d in docs} == {"PROCESSED"}

    code, out, _ = run(capsys, "stats", "-w", w, "--json", *db_args)
    stats = json.loads(out)
    assert {"documents", "chunks", "entities", "relations", "usage"} <= set(stats)
    assert stats["documents"] == 2 and {"prompt_tokens", "completion_tokens", "total_tokens"} <= set(stats["usage"])

    code, out, _ = run(capsys, "retrieve", "What trains sentence encoders?", "-w", w, "--json", "--mode", "naive", "-k", "2", *db_args)
    data = json.loads(out)
    assert code == 0 and data["query"] == "What trains sentence encoders?"
    first = data["results"][0]
    assert {"rank", "score", "chunk_id", "document_id", "title", "section", "page_start", "page_end", "text"} <= set(first)
    assert first["rank"] == 1 and "SimCSE" in first["text"]

    code, out, _ = run(capsys, "ask", "What trains sentence encoders?", "-w", w, "--json", "--mode", "naive", *db_args)
    answer = json.loads(out)
    assert code == 0 and {"answer", "sources", "usage"} <= set(answer) and answer["extractive"]
    assert answer["sources"] and "SimCSE" in answer["answer"]


def test_batch_queries_keep_input_order(capsys, corpus, workdir, tmp_path, db_args):
    w = str(workdir)
    run(capsys, "index", str(corpus), "-w", w, "--json", "--profile", "offline", *db_args)
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"question": "What is SimCSE?"}\n\nknowledge graphs\n{"question": "multi-hop"}\n')
    code, out, _ = run(capsys, "retrieve", "--queries", str(queries), "-w", w, "--mode", "naive", *db_args)
    lines = [json.loads(x) for x in out.strip().splitlines()]
    assert code == 0 and [x["query"] for x in lines] == ["What is SimCSE?", "knowledge graphs", "multi-hop"]


def test_delete_and_missing_document(capsys, corpus, workdir, db_args):
    w = str(workdir)
    _, out, _ = run(capsys, "index", str(corpus), "-w", w, "--json", "--profile", "offline", *db_args)
    doc_id = json.loads(out)["processed"][0]
    code, out, _ = run(capsys, "delete", doc_id, "-w", w, "--json", *db_args)
    assert code == 0 and json.loads(out)["deleted"][0]["deleted"] == doc_id
    code, _, err = run(capsys, "delete", "nope", "-w", w, *db_args)
    assert code == 5 and "no document with id 'nope'" in err


def test_failed_file_gives_nonzero_exit(capsys, corpus, workdir, db_args):
    (corpus / "bad.json").write_text("{not json")
    code, out, _ = run(capsys, "index", str(corpus), "-w", str(workdir), "--json", "--profile", "offline", *db_args)
    report = json.loads(out)
    assert code == 1 and len(report["processed"]) == 2 and "invalid JSON" in report["failed"][0]["error"]


def test_bad_setting_exit_code_2(capsys, corpus, workdir, db_args):
    code, _, err = run(capsys, "index", str(corpus), "-w", str(workdir), "--chunk-size", "10", "--chunk-overlap", "50", *db_args)
    assert code == 2 and "chunking" in err


def test_unreachable_llm_stops_before_any_work(capsys, corpus, workdir, db_args):
    code, _, err = run(capsys, "index", str(corpus), "-w", str(workdir), "--llm-url", "http://127.0.0.1:9/v1",
                       "--llm-model", "m", "--profile", "academic", *db_args)
    assert code == 3 and "127.0.0.1:9" in err
    code, out, _ = run(capsys, "status", "-w", str(workdir), "--json", *db_args)
    assert json.loads(out)["documents"] == []


def test_llm_profile_without_llm_is_a_config_error(capsys, corpus, workdir, db_args):
    code, _, err = run(capsys, "index", str(corpus), "-w", str(workdir), "--profile", "academic", *db_args)
    assert code == 2 and "needs an LLM" in err


def _index_four_papers(workdir, toml: str, profile: str) -> None:
    """Four small text papers indexed with ``toml`` as the workspace's scholargraph.toml."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "scholargraph.toml").write_text(toml)
    papers = workdir.parent / "papers"
    papers.mkdir()
    for i in range(4):
        (papers / f"p{i}.txt").write_text(f"Paper {i}. GraphRAG builds a Knowledge Graph. BERT{i} embeds text {i}.")
    assert main(["index", str(papers), "--profile", profile, "-w", str(workdir), "--quiet"]) == 0


def test_stats_cost_shows_the_calls_and_tokens_of_each_llm_endpoint(llm_server, workdir, capsys):
    """Two servers of one model in scholargraph.toml (llm.endpoints): `stats --cost` tells what each answered."""
    from support.canned import default_rules

    servers = [llm_server(rules=default_rules()) for _ in range(2)]
    _index_four_papers(workdir, '[llm]\nmodel = "scripted-model"\nmax_concurrency = 1\nbackoff_base = 0.01\n'
                       + "".join(f'[[llm.endpoints]]\nbase_url = "{s.base_url}"\n' for s in servers), "academic")
    capsys.readouterr()
    assert main(["stats", "--cost", "--json", "-w", str(workdir)]) == 0
    per_endpoint = json.loads(capsys.readouterr().out)["cost_by_endpoint"]
    assert set(per_endpoint) == {s.base_url for s in servers}
    assert [per_endpoint[s.base_url]["llm_calls"] for s in servers] == [s.stats.calls for s in servers]
    assert all(per_endpoint[s.base_url]["total_tokens"] > 0 for s in servers)
    assert main(["stats", "--cost", "-w", str(workdir)]) == 0
    shown = capsys.readouterr().out
    assert "per LLM endpoint:" in shown and all(f"{s.base_url}: {s.stats.calls} calls" in shown for s in servers)


def test_stats_cost_shows_the_batches_of_each_embedding_endpoint(llm_server, workdir, capsys):
    """Two embedding servers of one model (embeddings.endpoints): `stats --cost` tells what each embedded,
    and the LLM's call counts do not include them."""
    servers = [llm_server(embedding_dim=8) for _ in range(2)]
    _index_four_papers(workdir, '[embeddings]\nprovider = "openai"\nmodel = "e"\ndimension = 8\nbatch_size = 2\n'
                       'max_concurrency = 1\n'
                       + "".join(f'[[embeddings.endpoints]]\nbase_url = "{s.base_url}"\n' for s in servers), "offline")
    capsys.readouterr()
    assert main(["stats", "--cost", "--json", "-w", str(workdir)]) == 0
    stats = json.loads(capsys.readouterr().out)
    per_endpoint = stats["embedding_batches_by_endpoint"]
    assert set(per_endpoint) == {s.base_url for s in servers}
    checks = 1  # the health check before the run asks each endpoint once; it is not a batch of the run
    assert [per_endpoint[s.base_url]["batches"] for s in servers] == [s.stats.embedding_calls - checks for s in servers]
    assert stats["cost_by_endpoint"] == {} and stats["usage"]["llm_calls"] == 0  # offline profile: no LLM call
    assert main(["stats", "--cost", "-w", str(workdir)]) == 0
    shown = capsys.readouterr().out
    assert "per embedding endpoint:" in shown
    assert all(f"{s.base_url}: {s.stats.embedding_calls - checks} batches" in shown for s in servers)
