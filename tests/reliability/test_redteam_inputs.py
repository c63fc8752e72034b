"""Hostile input files against `scholargraph index` (the defects found and the file cases
that must keep holding): one bad file never stops the others, every path given is reported, and
nothing a hostile file points to reaches the index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from redteam import write_papers

OFFLINE = ("--profile", "offline")


def files_of(report: dict) -> dict[str, dict]:
    return {f["path"]: f for f in report["files"]}


# -- defect 1: a file name that is not valid UTF-8 -------------------------------------------------


def test_a_file_name_that_is_not_utf8_fails_alone_and_reruns_do_not_crash(scholar, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1)
    bad = corpus / os.fsdecode(b"\xffbadbytes.txt")
    bad.write_text("A paper\n\nGraph Neural Networks learn node embeddings.\n", encoding="utf-8")
    shown = str(corpus / "\\xffbadbytes.txt")
    for attempt in range(2):  # the rerun behaves the same, it does not crash either
        result = scholar("index", str(corpus), *OFFLINE)
        report = result.json
        assert result.code == 1, result.err
        assert [f["path"] for f in report["failed"]] == [shown]
        assert "not valid UTF-8" in report["failed"][0]["error"] and "rename" in report["failed"][0]["error"]
        assert files_of(report)[shown]["outcome"] == "failed"
        assert files_of(report)[str(corpus / "p00.txt")]["outcome"] == ("indexed" if attempt == 0 else "already indexed")
    rows = {d["source_path"]: d for d in scholar("status").json["documents"]}
    assert rows[str(corpus / "p00.txt")]["status"] == "PROCESSED"
    assert rows[shown]["status"] == "FAILED" and "not valid UTF-8" in rows[shown]["error"]
    assert "\\xff" in scholar("status", llm=False).out  # the table escapes it too, and prints


# -- defect 6: identical files ---------------------------------------------------------------------


XXE = """<?xml version="1.0"?>
<!DOCTYPE article [<!ENTITY secret SYSTEM "file://{secret}">]>
<article><front><article-meta><title-group><article-title>Entity expansion</article-title></title-group>
<abstract><p>Graph Neural Networks learn node embeddings &secret; from citations.</p></abstract>
</article-meta></front><body><sec><title>Introduction</title><p>Knowledge Graphs link genes.</p></sec></body></article>
"""


def test_every_input_path_is_reported_even_identical_ones(scholar, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN", encoding="utf-8")
    (corpus / "a.txt").write_text("Same paper\n\nContrastive Learning trains Sentence Embeddings.\n", encoding="utf-8")
    (corpus / "b.txt").write_text("Same paper\n\nContrastive Learning trains Sentence Embeddings.\n", encoding="utf-8")
    (corpus / "xxe.xml").write_text(XXE.format(secret=secret), encoding="utf-8")
    (corpus / "xxe.nxml").write_text(XXE.format(secret=secret), encoding="utf-8")
    for i in range(3):
        (corpus / f"empty{i}.txt").write_bytes(b"")
    result = scholar("index", str(corpus), *OFFLINE)
    report = result.json
    files = files_of(report)
    paths = sorted(str(p) for p in corpus.iterdir())
    assert sorted(files) == paths  # every path, once
    assert files[str(corpus / "a.txt")]["outcome"] == "indexed"
    duplicate = files[str(corpus / "b.txt")]
    assert duplicate["outcome"] == "duplicate" and duplicate["duplicate_of"] == str(corpus / "a.txt")
    assert files[str(corpus / "xxe.xml")]["outcome"] == "duplicate"  # .nxml sorts first
    for i in range(3):
        assert files[str(corpus / f"empty{i}.txt")]["outcome"] == "failed"
    assert len(report["failed"]) == 3 and result.code == 1
    failed_rows = [d for d in scholar("status").json["documents"] if d["status"] == "FAILED"]
    assert sorted(d["source_path"] for d in failed_rows) == [str(corpus / f"empty{i}.txt") for i in range(3)]
    # billion laughs / XXE: nothing the entity points to is indexed
    results = scholar("retrieve", "TOP-SECRET-TOKEN", "--mode", "naive").json["results"]
    assert results and not any("TOP-SECRET" in json.dumps(r) for r in results)


def test_a_file_indexed_earlier_from_another_path_is_named(scholar, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1)
    copy = tmp_path / "copy.txt"
    copy.write_text((corpus / "p00.txt").read_text(encoding="utf-8"), encoding="utf-8")
    scholar("index", str(corpus), *OFFLINE)
    files = files_of(scholar("index", str(copy), *OFFLINE).json)
    assert files[str(copy)]["outcome"] == "duplicate" and files[str(copy)]["duplicate_of"] == str(corpus / "p00.txt")


# -- defect 7: a lone surrogate escape in JSON -------------------------------------------------------


def test_a_lone_surrogate_in_json_is_replaced_and_the_paper_indexed(scholar, tmp_path):
    paper = tmp_path / "paper.json"
    paper.write_text('{"title": "Lone \\ud800 surrogate", "abstract": "Graph Neural Networks \\udc80 learn node '
                     'embeddings from the Citation Graph."}', encoding="utf-8")
    result = scholar("index", str(paper), *OFFLINE)
    report = result.json
    assert result.code == 0 and len(report["processed"]) == 1, report
    assert any("invalid Unicode" in w for w in report["warnings"])
    [row] = scholar("status").json["documents"]
    assert row["status"] == "PROCESSED" and row["title"] == "Lone \ufffd surrogate"


# -- defect 5: a huge text file ------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_text_file_over_the_document_limit_is_refused_up_front(scholar, tmp_path, monkeypatch):
    corpus = write_papers(tmp_path / "corpus", 1)
    line = "Graph Neural Networks learn node embeddings from the Citation Graph of many papers.\n"
    with (corpus / "huge.txt").open("w", encoding="utf-8") as f:
        f.write("A huge paper\n\n")
        f.writelines(line * (6_000_000 // len(line)))
    monkeypatch.setenv("SCHOLARGRAPH_INGEST__MAX_DOCUMENT_MB", "5")
    result = scholar("index", str(corpus), *OFFLINE)
    report = result.json
    assert result.code == 1
    [failed] = report["failed"]
    assert failed["path"] == str(corpus / "huge.txt")
    assert "6 MB" in failed["error"] and "ingest.max_document_mb" in failed["error"]
    assert files_of(report)[str(corpus / "p00.txt")]["outcome"] == "indexed"


# -- cases that held and must keep holding ------------------------------------------------------------


def test_fifos_symlink_loops_and_unreadable_files_fail_alone(scholar, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1)
    os.mkfifo(corpus / "fifo.txt")  # opening it would block forever
    (corpus / "loop").symlink_to(corpus)  # a directory symlink loop
    (corpus / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    locked = corpus / "locked.txt"
    locked.write_text("secret", encoding="utf-8")
    locked.chmod(0)
    try:
        result = scholar("index", str(corpus), *OFFLINE)
    finally:
        locked.chmod(0o600)
    files = files_of(result.json)
    assert files[str(corpus / "p00.txt")]["outcome"] == "indexed"
    assert files[str(corpus / "fifo.txt")]["outcome"] == "failed"
    assert "not a regular file" in files[str(corpus / "fifo.txt")]["error"]
    assert files[str(corpus / "dangling.txt")]["outcome"] == "failed"
    if os.geteuid() != 0:  # root reads anything
        assert files[str(locked)]["outcome"] == "failed" and "ermission" in files[str(locked)]["error"]
    assert result.code == 1


def test_billion_laughs_expands_nothing(scholar, tmp_path):
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    xml = (f'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY l0 "lol">{laughs}]>'
           "<article><front><article-meta><title-group><article-title>Laughs</article-title></title-group>"
           "</article-meta></front><body><sec><title>Intro</title><p>&l9; Knowledge Graphs link genes.</p></sec>"
           "</body></article>")
    (tmp_path / "lol.xml").write_text(xml, encoding="utf-8")
    result = scholar("index", str(tmp_path / "lol.xml"), *OFFLINE)
    report = result.json
    assert report["files"][0]["outcome"] in ("indexed", "failed")
    stats = scholar("stats").json
    assert stats["chunks"] <= 2  # the expansion (10^9 "lol") never happened


def _pdf(path: Path, text: str, encrypt: bool = False, image_only: bool = False) -> Path:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.add_page()
    if image_only:
        pdf.rect(20, 20, 100, 100, style="F")  # a drawing, no text layer
    else:
        pdf.set_font("Helvetica", size=12)
        pdf.multi_cell(0, 8, text)
    if encrypt:
        pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.output(str(path))
    return path


def test_encrypted_image_only_and_truncated_pdfs_fail_with_reasons(scholar, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1)
    body = "Graph Neural Networks learn node embeddings. " * 20
    _pdf(corpus / "locked.pdf", body, encrypt=True)
    _pdf(corpus / "scan.pdf", body, image_only=True)
    whole = _pdf(tmp_path / "whole.pdf", body).read_bytes()
    (corpus / "cut.pdf").write_bytes(whole[: len(whole) // 2])
    result = scholar("index", str(corpus), *OFFLINE)
    files = files_of(result.json)
    assert files[str(corpus / "p00.txt")]["outcome"] == "indexed"
    for name in ("locked.pdf", "scan.pdf", "cut.pdf"):
        entry = files[str(corpus / name)]
        assert entry["outcome"] == "failed" and entry["error"], entry
    assert "password" in files[str(corpus / "locked.pdf")]["error"].lower() or \
        "encrypt" in files[str(corpus / "locked.pdf")]["error"].lower()
    assert "text" in files[str(corpus / "scan.pdf")]["error"].lower()


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "cp1252"])
def test_csv_in_other_encodings_is_indexed(scholar, tmp_path, encoding):
    path = tmp_path / "papers.csv"
    path.write_text("title,abstract\nCaf\u00e9 study,Graph Neural Networks learn na\u00efve node embeddings.\n",
                    encoding=encoding)
    result = scholar("index", str(path), *OFFLINE)
    assert result.code == 0 and len(result.json["processed"]) == 1
    [row] = scholar("status").json["documents"]
    assert row["title"] == "Caf\u00e9 study"
