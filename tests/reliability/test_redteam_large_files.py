"""A CSV of very many rows: a 1M-row file reached 2.2 GB of memory after 300 s
with nothing committed, because every row became a Document in memory before the first was indexed.
Rows now stream: registered and committed in batches while the file is read, a bounded number
waiting, and a run killed mid-file keeps what it committed and a rerun finishes it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from crashtest import KillPoint, run_killed
from redteam import SENTENCES

from scholargraph.app.pipeline import REGISTER_BATCH
from scholargraph.ingest import csvfile
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
    assert result.code == 0, result.err
    assert seen_at_last_row.get("PROCESSED", 0) > 0  # indexed while the file was still being read
    waiting = seen_at_last_row.get("PENDING", 0) + seen_at_last_row.get("PROCESSING", 0)
    assert waiting <= 2 * REGISTER_BATCH  # a bounded number registered ahead of the indexing
    assert counts(scholar.workdir) == {"PROCESSED": ROWS}
    [outcome] = result.json["files"]
    assert outcome["outcome"] == "indexed" and len(outcome["documents"]) == ROWS


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
