"""A CSV of very many rows: a 1M-row file reached 2.2 GB of memory after 300 s
with nothing committed, because every row became a Document in memory before the first was indexed.
Rows now stream: registered and committed in batches while the file is read, a bounded number
waiting, and a run killed mid-file keeps what it committed and a rerun finishes it."""

from __future__ import annotations

import asyncio
import csv
import gc
import json
from pathlib import Path

import pytest
from crashtest import KillPoint, run_killed
from redteam import SENTENCES

from scholargraph.app.pipeline import REGISTER_BATCH, Pipeline
from scholargraph.graph import citations
from scholargraph.ingest import csvfile, jsonfile, pubmed
from scholargraph.store import open_store

ROWS = 3 * REGISTER_BATCH + 40  # several batches, the last one short
NONE = ("--profile", "none")


def write_csv(path: Path, rows: int) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["paper_id", "title", "abstract"])
        for i in range(rows):
            out.writerow([f"row{i}", f"Paper {i}", SENTENCES[i % len(SENTENCES)]])
    return path


def counts(workdir: Path) -> dict[str, int]:
    store = open_store(workdir, create=False)
    try:
        return store.status_counts()
    finally:
        store.close()


def assert_indexed_while_read(result, seen_at_last: dict[str, int], workdir) -> None:
    """The run succeeded, documents were PROCESSED while the file's last record was being parsed,
    only a bounded number were registered ahead of the indexing, and every one ended PROCESSED."""
    assert result.code == 0, result.err
    assert seen_at_last.get("PROCESSED", 0) > 0  # indexed while the file was still being read
    waiting = seen_at_last.get("PENDING", 0) + seen_at_last.get("PROCESSING", 0)
    assert waiting <= 2 * REGISTER_BATCH  # a bounded number registered ahead of the indexing
    assert counts(workdir) == {"PROCESSED": ROWS}


def test_rows_are_committed_before_the_last_row_is_read(scholar, tmp_path, monkeypatch):
    path = write_csv(tmp_path / "big.csv", ROWS)
    seen_at_last_row: dict[str, int] = {}
    to_document = csvfile.row_to_document

    def watching(row, roles, extra, source):
        if row.get("paper_id") == f"row{ROWS - 1}":  # the file's last row is being parsed now
            seen_at_last_row.update(counts(scholar.workdir))
        return to_document(row, roles, extra, source)

    monkeypatch.setattr(csvfile, "row_to_document", watching)
    result = scholar("index", str(path), *NONE, llm=False)
    assert_indexed_while_read(result, seen_at_last_row, scholar.workdir)
    [outcome] = result.json["files"]
    assert outcome["outcome"] == "indexed" and len(outcome["documents"]) == ROWS


def write_medline(path: Path, articles: int) -> Path:
    entries = "".join(
        f"<PubmedArticle><MedlineCitation><PMID>{90000000 + i}</PMID><Article><ArticleTitle>Paper {i}</ArticleTitle>"
        f"<Abstract><AbstractText>{SENTENCES[i % len(SENTENCES)]}</AbstractText></Abstract></Article>"
        "</MedlineCitation></PubmedArticle>\n" for i in range(articles))
    path.write_text(f"<?xml version='1.0'?>\n<PubmedArticleSet>\n{entries}</PubmedArticleSet>\n", encoding="utf-8")
    return path


def test_medline_articles_are_committed_before_the_last_is_read(scholar, tmp_path, monkeypatch):
    """A MEDLINE file of many citations streams as a CSV does: read article by article, never
    parsed whole before the first is indexed."""
    path = write_medline(tmp_path / "pubmed.xml", ROWS)
    seen_at_last: dict[str, int] = {}
    to_document = pubmed._medline_document

    def watching(entry, source):
        if entry.findtext("MedlineCitation/PMID") == str(90000000 + ROWS - 1):  # the file's last article
            seen_at_last.update(counts(scholar.workdir))
        return to_document(entry, source)

    monkeypatch.setattr(pubmed, "_medline_document", watching)
    result = scholar("index", str(path), *NONE, llm=False)
    assert_indexed_while_read(result, seen_at_last, scholar.workdir)


@pytest.mark.parametrize("layout", ["array", "lines"])
def test_json_records_are_committed_before_the_last_is_read(scholar, tmp_path, layout, monkeypatch):
    """A JSON array (or JSON Lines) of many records streams as a CSV does."""
    records = [{"id": f"rec{i}", "title": f"Paper {i}", "abstract": SENTENCES[i % len(SENTENCES)]} for i in range(ROWS)]
    path = tmp_path / ("papers.json" if layout == "array" else "papers.jsonl")
    path.write_text(json.dumps(records, indent=1) if layout == "array" else "\n".join(map(json.dumps, records)),
                    encoding="utf-8")
    seen_at_last: dict[str, int] = {}
    to_document = jsonfile.record_to_document

    def watching(raw, fallback_id, source, options):
        if raw.get("id") == f"rec{ROWS - 1}":  # the file's last record
            seen_at_last.update(counts(scholar.workdir))
        return to_document(raw, fallback_id, source, options)

    monkeypatch.setattr(jsonfile, "record_to_document", watching)
    result = scholar("index", str(path), *NONE, llm=False)
    assert_indexed_while_read(result, seen_at_last, scholar.workdir)


def live_document_tasks() -> int:
    """asyncio tasks of documents (finished or not) still held by someone."""
    return sum(1 for o in gc.get_objects() if isinstance(o, asyncio.Task) and "_process" in o.get_coro().__qualname__)


def test_a_run_keeps_no_per_row_objects_beyond_a_bound(scholar, tmp_path, monkeypatch):
    """Memory after warm-up stays flat: what the run holds per row while it goes on (one task per
    document) is let go when the row is done, and the end of the run lists no document: a CSV of
    abstracts has no reference list to match against the workspace (before: every document's
    finished task was kept to the end, and the citation step listed every document with its text:
    ~7 KB per row at the peak)."""
    path = write_csv(tmp_path / "big.csv", ROWS)
    held: list[int] = []
    done = Pipeline._done

    def watching(self, doc_id, task):
        done(self, doc_id, task)
        if len(self.taken) == ROWS and len(held) < 1:  # the last documents are being finished
            held.append(live_document_tasks())

    matched: list[int] = []  # papers indexed for citation matching
    index_papers = citations._Matcher.__post_init__

    def indexing(matcher):
        matched.append(len(matcher.papers))
        index_papers(matcher)

    monkeypatch.setattr(Pipeline, "_done", watching)
    monkeypatch.setattr(citations._Matcher, "__post_init__", indexing)
    result = scholar("index", str(path), *NONE, llm=False)
    assert result.code == 0, result.err
    assert counts(scholar.workdir) == {"PROCESSED": ROWS}
    assert held and held[0] <= 2 * REGISTER_BATCH < ROWS  # at most the documents in flight, not one per row
    assert sum(matched) == 0  # no reference list in the run: the workspace's papers were not indexed to match them


@pytest.mark.slow
def test_a_run_killed_mid_file_keeps_its_rows_and_a_rerun_finishes_without_duplicates(scholar, tmp_path):
    path = write_csv(tmp_path / "big.csv", ROWS)
    argv = ["index", str(path), *NONE]
    run_killed(scholar, argv, KillPoint("scholargraph.app.pipeline:Pipeline._commit", nth=REGISTER_BATCH + 10,
                                        when="return"), llm=False)
    kept = counts(scholar.workdir)
    assert kept.get("PROCESSED", 0) >= REGISTER_BATCH + 9  # every commit before the kill survived it
    assert sum(kept.values()) < ROWS  # killed before the whole file was registered
    result = scholar(*argv, llm=False)
    assert result.code == 0, result.err
    assert counts(scholar.workdir) == {"PROCESSED": ROWS}
    assert len(result.json["processed"]) == ROWS - kept["PROCESSED"]  # the rest, none twice
    store = open_store(scholar.workdir, create=False)
    try:
        assert sum(row.chunks for row in store.list_documents()) == ROWS  # one chunk per row, none twice
    finally:
        store.close()
