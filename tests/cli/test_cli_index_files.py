"""Which files a run reads, and deleting what one file brought (a folder holding
titles.json made 22 junk papers that ranked first in answers and made `delete <file>.pdf` ambiguous)."""

from __future__ import annotations

import json

from scholargraph import KnowledgeBase
from scholargraph.cli import main

PAPER = "# Dense Retrieval\n\n## Abstract\nDense retrieval encodes queries and passages with BERT encoders.\n"


def _folder(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "dense.md").write_text(PAPER, encoding="utf-8")
    titles = {f"paper{i}.pdf": f"A Study of Retrieval Method {i}" for i in range(22)}
    (folder / "titles.json").write_text(json.dumps(titles), encoding="utf-8")
    return folder


def test_a_json_file_that_is_not_papers_is_skipped_with_a_reason(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["index", str(_folder(tmp_path)), "-w", str(ws), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    files = {f["path"].rsplit("/", 1)[-1]: f for f in report["files"]}
    assert files["dense.md"]["outcome"] == "indexed" and files["titles.json"]["outcome"] == "skipped"
    assert "not papers" in files["titles.json"]["reason"] and not report["failed"]
    with KnowledgeBase(ws, progress=False) as kb:
        assert [r.title for r in kb.status()] == ["Dense Retrieval"]  # no junk papers, no FAILED row
    assert main(["index", str(tmp_path / "papers"), "-w", str(ws)]) == 0
    assert "titles.json" in capsys.readouterr().err  # the reason is shown in the human output too


def test_index_exclude_leaves_out_matching_files(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["index", str(_folder(tmp_path)), "-w", str(ws), "--exclude", "*.json", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [f["path"].rsplit("/", 1)[-1] for f in report["files"]] == ["dense.md"]
    assert any("excluded 1 file" in n for n in report["notes"])


def test_delete_source_removes_every_paper_of_one_file(tmp_path, capsys):
    ws = tmp_path / "ws"
    jsonl = tmp_path / "two.jsonl"
    jsonl.write_text("\n".join(json.dumps({"id": f"p{i}", "title": f"Paper {i}", "text": f"BERT paper {i} text."})
                               for i in range(2)), encoding="utf-8")
    (tmp_path / "one.md").write_text(PAPER, encoding="utf-8")
    assert main(["index", str(jsonl), str(tmp_path / "one.md"), "-w", str(ws)]) == 0
    capsys.readouterr()
    assert main(["delete", "--source", str(jsonl), "-w", str(ws), "--json"]) == 0
    deleted = json.loads(capsys.readouterr().out)["deleted"]
    assert sorted(d["deleted"] for d in deleted) == ["p0", "p1"]
    with KnowledgeBase(ws, progress=False) as kb:
        assert [r.title for r in kb.status()] == ["Dense Retrieval"]
    assert main(["delete", "--source", str(tmp_path / "nothing.json"), "-w", str(ws)]) == 5
    assert "no paper" in capsys.readouterr().err


def test_status_shows_whole_ids_and_the_source_file_at_80_columns(tmp_path, capsys, monkeypatch):
    """`status` fits 80 columns (ids are not wrapped over three lines) and shows each paper's file."""
    from scholargraph.cli import output as cli_output

    monkeypatch.setattr(cli_output.out, "_width", 80)
    (tmp_path / "dense_retrieval_paper.md").write_text(PAPER, encoding="utf-8")
    ws = tmp_path / "ws"
    assert main(["index", str(tmp_path / "dense_retrieval_paper.md"), "-w", str(ws)]) == 0
    capsys.readouterr()
    assert main(["status", "-w", str(ws)]) == 0
    out = capsys.readouterr().out
    with KnowledgeBase(ws, progress=False) as kb:
        doc_id = kb.status()[0].id
    assert any(doc_id in line for line in out.splitlines()), out  # on one line
    assert "dense_retrieval_paper.md" in out and "Dense Retrieval" in out


def test_a_folder_of_only_unsupported_files_fails_like_a_named_one(tmp_path, capsys):
    """Such a folder exits 1 and names the unsupported files, as a named unsupported file does."""
    folder = tmp_path / "office"
    folder.mkdir()
    (folder / "notes.docx").write_bytes(b"PK\x03\x04 not really")
    ws = tmp_path / "ws"
    assert main(["index", str(folder), "-w", str(ws)]) == 1
    err = capsys.readouterr().err
    assert "no supported files" in err and "notes.docx" in err


def test_stats_count_papers_apart_from_failed_files(tmp_path):
    """`stats` counts FAILED rows as documents, not as papers (the web Stats page shows papers)."""
    (tmp_path / "p.md").write_text(PAPER, encoding="utf-8")
    (tmp_path / "empty.txt").write_bytes(b"")
    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}, progress=False) as kb:
        kb.insert([tmp_path / "p.md", tmp_path / "empty.txt"])
        stats = kb.stats()
    assert stats.documents == 2 and stats.papers == 1


def test_retrieve_top_k_shows_at_most_k_rows_per_list(tmp_path, capsys):
    """`retrieve --top-k K` prints at most K rows under each list, each list headed by the score that ranks it."""
    text = ("BERT encoders embed passages. Dense retrieval uses BERT encoders and FAISS indexes. "
            "ColBERT extends BERT encoders with late interaction. SPLADE expands BERT encoders sparsely.")
    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}, progress=False) as kb:
        kb.insert(texts=[{"id": f"p{i}", "title": f"Paper {i}", "text": f"{text} Paper {i}."} for i in range(4)])
    assert main(["retrieve", "BERT encoders for dense retrieval", "-w", str(tmp_path / "ws"), "-k", "1",
                 "-m", "hybrid"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.lstrip().startswith("[")]
    headings = [line for line in out.splitlines() if "score ranks this list" in line]
    assert headings and len(rows) == len(headings)  # one row under each heading
