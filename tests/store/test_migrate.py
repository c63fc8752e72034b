"""`scholargraph migrate --to DSN`: a SQLite workspace copied into PostgreSQL with nothing lost."""

from __future__ import annotations

import json

import psycopg

from scholargraph.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_migrated_workspace_answers_the_same_from_postgres(capsys, tmp_path, pg_dsn):
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "a.md").write_text("# Graph RAG\n\n## Introduction\nKnowledge graphs help retrieval-augmented "
                                 "generation (RAG) answer multi-hop questions.\n")
    (papers / "b.txt").write_text("Contrastive learning trains sentence encoders such as SimCSE on paired sentences.\n")
    w = str(tmp_path / "ws")
    assert run(capsys, "index", str(papers), "-w", w, "--json", "--profile", "offline")[0] == 0
    assert run(capsys, "ask", "What is SimCSE?", "-w", w, "--json", "--mode", "naive", "--session", "s1")[0] == 0
    question = ["retrieve", "What trains sentence encoders?", "-w", w, "--json", "--mode", "hybrid", "-k", "3"]
    before = json.loads(run(capsys, *question)[1])
    _, out, _ = run(capsys, "stats", "-w", w, "--json")
    stats_before = json.loads(out)

    dsn = pg_dsn()
    code, out, err = run(capsys, "migrate", "-w", w, "--to", dsn, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"], err
    assert report["tables"]["chunks"] == {"source": stats_before["chunks"], "target": stats_before["chunks"]}
    assert report["tables"]["sessions"]["target"] == 1 and report["tables"]["entity_sources"]["target"] > 0
    assert report["sample"]["chunk"]["compared"] == report["vectors"]["chunk"]["source"] > 0
    assert report["sample"]["chunk"]["min_cosine"] >= 0.9999

    after = json.loads(run(capsys, *question, "--db", dsn)[1])
    assert [r["chunk_id"] for r in after["results"]] == [r["chunk_id"] for r in before["results"]]
    stats_after = json.loads(run(capsys, "stats", "-w", w, "--json", "--db", dsn)[1])
    for key in ("documents", "chunks", "entities", "relations", "keywords"):
        assert stats_after[key] == stats_before[key], key

    code, _, err = run(capsys, "migrate", "-w", w, "--to", dsn)  # never into a knowledge base that exists
    assert code == 4 and "already holds a knowledge base" in err
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == stats_before["documents"]


def test_migrate_without_a_workspace_is_a_clear_error(capsys, tmp_path, pg_dsn):
    code, _, err = run(capsys, "migrate", "-w", str(tmp_path / "none"), "--to", pg_dsn())
    assert code == 4 and "no SQLite workspace" in err
