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

from scholargraph import report as run_report
from scholargraph.app.indexing import Indexing
from scholargraph.app.pipeline import REGISTER_BATCH, Pipeline
from scholargraph.cli import main
from scholargraph.graph import citations
from scholargraph.ingest import csvfile, jsonfile, pubmed
from scholargraph.models import DocStatus
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
    assert "truncated" not in result.json and "truncated" not in outcome  # fewer rows than REPORT_IDS: all listed


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
    finished = [0]
    done = Pipeline._done

    def watching(self, doc_id, counted, task):
        done(self, doc_id, counted, task)
        finished[0] += 1
        if finished[0] == ROWS - 1:  # the last documents are being finished
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


# -- the run's report of many records: counts and the first ids, not one entry per record --------

LISTED = 5  # REPORT_IDS in these tests: a run of a few dozen rows is "longer than the report"


def watch_the_end_of_the_run(monkeypatch) -> dict[str, int]:
    """What the pipeline still holds per document when its files' outcomes are computed."""
    held: dict[str, int] = {}
    outcomes = Pipeline.file_outcomes

    def watching(self, report):
        outcomes(self, report)
        held.update(ledger_ids=self.files.ids_held(), taken=len(self.taken))

    monkeypatch.setattr(Pipeline, "file_outcomes", watching)
    return held


def test_a_run_of_more_rows_than_the_report_lists_keeps_counts_not_ids(scholar, tmp_path, monkeypatch):
    """Issue 27 item 7: the run report kept every document id (processed, each file's documents, the
    ledger's map): ~0.5 KB per row of a 1M-row CSV. It now lists the first REPORT_IDS of each list
    and of each file, says how many there were and where the full list is."""
    monkeypatch.setattr(run_report, "REPORT_IDS", LISTED, raising=False)
    rows = 23
    path = write_csv(tmp_path / "big.csv", rows)
    held = watch_the_end_of_the_run(monkeypatch)
    result = scholar("index", str(path), *NONE, llm=False)
    assert result.code == 0, result.err
    assert counts(scholar.workdir) == {"PROCESSED": rows}
    report = result.json
    assert len(report["processed"]) == LISTED and report["processed"][0].startswith("row")
    assert report["truncated"]["processed"] == {"listed": LISTED, "total": rows}
    assert "status --json" in report["truncated"]["full_list"]
    [outcome] = report["files"]
    assert outcome["outcome"] == "indexed" and len(outcome["documents"]) == LISTED
    assert outcome["truncated"]["documents"] == {"listed": LISTED, "total": rows}
    assert held["ledger_ids"] <= LISTED and held["taken"] == 0  # objects kept per document: none beyond the list

    again = scholar("index", str(path), *NONE, llm=False)  # every row already indexed
    assert again.code == 0, again.err
    assert len(again.json["skipped"]) == LISTED and again.json["truncated"]["skipped"]["total"] == rows
    assert again.json["files"][0]["outcome"] == "already indexed"

    scholar.capsys.readouterr()
    code = main(["index", str(path), "--profile", "none", "-w", str(scholar.workdir), "--force"])
    summary = scholar.capsys.readouterr().out
    assert code == 0 and f"indexed {rows} document(s)" in summary  # the CLI's summary counts them all


def test_rows_another_worker_finished_are_not_remembered_to_the_end_of_the_file(scholar, tmp_path, monkeypatch):
    """Workers sharing a PostgreSQL database: the documents of this run's file that another worker
    indexes are looked up as the file is read, not kept by id until its end (here the "other
    worker" finishes every odd row in the commit that registers it)."""
    monkeypatch.setattr(run_report, "REPORT_IDS", LISTED, raising=False)
    rows = 60
    path = write_csv(tmp_path / "big.csv", rows)
    register_one = Pipeline._register_one

    def finished_elsewhere(self, doc, scope, report, force, source):
        queued = register_one(self, doc, scope, report, force, source)
        if queued and int(doc.id.removeprefix("row")) % 2:
            self.store.set_status(doc.id, DocStatus.PROCESSED)
        return queued

    monkeypatch.setattr(Pipeline, "_register_one", finished_elsewhere)
    held = watch_the_end_of_the_run(monkeypatch)
    result = scholar("index", str(path), *NONE, llm=False)
    assert result.code == 0, result.err
    assert result.json["truncated"]["processed"]["total"] == rows // 2  # the even rows: this worker's
    assert result.json["files"][0]["outcome"] == "indexed"
    assert held["ledger_ids"] <= LISTED  # before: the 30 rows of the other worker, by id, to the end


def test_the_worst_outcome_of_a_file_is_found_beyond_the_listed_documents(scholar, tmp_path, monkeypatch):
    """A row that fails after the first REPORT_IDS still makes its file "failed" (with the reason),
    and a paper repeated in a second file beyond them still makes that file a duplicate."""
    monkeypatch.setattr(run_report, "REPORT_IDS", LISTED, raising=False)
    rows = 17
    path = write_csv(tmp_path / "big.csv", rows)
    again = tmp_path / "again.csv"
    again.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n"
                     + "\n".join(path.read_text(encoding="utf-8").splitlines()[rows - 2:]) + "\n", encoding="utf-8")
    analyse = Pipeline._analyse

    async def failing(self, doc, chunks, repair=False):
        if doc.id == f"row{rows - 3}":
            raise ValueError("a row that cannot be analysed")
        return await analyse(self, doc, chunks, repair)

    monkeypatch.setattr(Pipeline, "_analyse", failing)
    result = scholar("index", str(path), str(again), *NONE, llm=False)
    assert result.code == 1
    first, second = result.json["files"]
    assert first["outcome"] == "failed" and "cannot be analysed" in first["error"]
    assert first["truncated"]["documents"]["total"] == rows
    assert second["outcome"] == "duplicate" and second["duplicate_of"] == first["path"]


def test_a_repeated_paper_id_beyond_the_listed_rows_names_its_first_row(scholar, tmp_path, monkeypatch):
    """The CSV reader remembers each paper id's first row as a digest (not a dict of the ids): a
    repeated id far into the file is still reported with both rows."""
    monkeypatch.setattr(run_report, "REPORT_IDS", LISTED, raising=False)
    path = write_csv(tmp_path / "big.csv", 30)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[26] = lines[26].replace("row25", "row3", 1)  # data row 26 repeats the paper id of data row 4
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = scholar("index", str(path), *NONE, llm=False)
    assert result.code == 0, result.err
    assert any("duplicate paper id 'row3' (data rows 4 and 26)" in w for w in result.json["warnings"])


def write_citing_records(path: Path, n: int) -> Path:
    """JSON Lines: one cited paper, then ``n - 1`` papers whose reference list cites it by title."""
    cited = "Sparse retrieval of scientific claims"
    records = [{"id": "rec0", "title": cited, "abstract": SENTENCES[0]}] + [
        {"id": f"rec{i}", "title": f"Paper {i}", "abstract": SENTENCES[i % len(SENTENCES)],
         "pdf_parse": {"bib_entries": {"b0": {"raw_text": f"A. Author. 2020. {cited}. In Proc. of X."}}}}
        for i in range(1, n)]
    path.write_text("\n".join(map(json.dumps, records)) + "\n", encoding="utf-8")
    return path


def citing(workdir: Path, target: str) -> set[str]:
    store = open_store(workdir, create=False)
    try:
        return {r.citing_id for r in store.references() if r.target_id == target}
    finally:
        store.close()


def test_the_citation_step_links_every_paper_of_a_run_longer_than_the_report(scholar, tmp_path, monkeypatch):
    """The citation step reads the run's documents from the store, not from the report's list, a
    block at a time (here 2: the cited paper and those citing it fall in different blocks)."""
    monkeypatch.setattr(run_report, "REPORT_IDS", 2, raising=False)
    monkeypatch.setattr(citations, "OWED_BLOCK", 2, raising=False)
    path = write_citing_records(tmp_path / "papers.jsonl", 9)
    result = scholar("index", str(path), *NONE, llm=False)
    assert result.code == 0, result.err
    assert len(result.json["processed"]) == 2
    assert citing(scholar.workdir, "rec0") == {f"rec{i}" for i in range(1, 9)}


def test_citations_owed_by_a_run_stopped_before_its_citation_step_are_linked_by_the_next(scholar, tmp_path,
                                                                                          monkeypatch):
    """Each commit queues its document for the citation step: a run that dies after its last
    commit leaves the step to the next run, even one that indexes nothing new (before: the list
    was the run's report, lost with it)."""
    path = write_citing_records(tmp_path / "papers.jsonl", 4)

    async def killed(self, report):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(Indexing, "_after_index", killed)
        try:
            scholar("index", str(path), *NONE, llm=False)
        except KeyboardInterrupt:
            pass
    assert counts(scholar.workdir) == {"PROCESSED": 4} and citing(scholar.workdir, "rec0") == set()
    result = scholar("index", str(path), *NONE, llm=False)  # nothing new to index
    assert result.code == 0, result.err
    assert result.json["processed"] == [] and citing(scholar.workdir, "rec0") == {"rec1", "rec2", "rec3"}
