"""CSV/TSV loader: fastbmRAG layout, list-literal main text, ids, metadata, bad input."""

from __future__ import annotations

import ast
import csv
import sys
from pathlib import Path

import pytest
from support.dev_data import dev_data_dir

from scholargraph.errors import LoadError
from scholargraph.ingest.csvfile import load_csv, split_abstract, split_main_text
from scholargraph.ingest.registry import LoadOptions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"
DEV = dev_data_dir(Path(__file__).resolve().parents[2])


def load(path: Path) -> list:
    return load_csv(path, LoadOptions())


def test_fastbm_style_rows() -> None:
    docs = load(FIXTURES / "papers.csv")
    assert [d.id for d in docs] == ["111", "222", "444"]  # row 3 has no text; "222.0" -> "222"
    first, second, fourth = docs
    assert first.title == "First paper title" and first.year == 2022 and first.venue == "J One"
    assert first.pmid == "111"
    assert [(s.heading, s.kind) for s in first.sections] == [("Abstract", "abstract"), ("Main text", "body")]
    assert first.sections[1].text == "Para one.\n\nPara two's text."
    assert first.abstract == "Background: first abstract sentence. More.\n\nResults: it worked."
    assert first.metadata == {"weight": 4.0, "notes": "keep me", "row": 1}  # index column ignored
    assert first.content_md5 and first.id != f"md5:{first.content_md5}"  # the given id wins
    assert first.warnings == ["skipped 1 of 4 rows without abstract or main text (data rows 3)"]
    assert second.title == "Second abstract."  # no title column value: first abstract sentence
    assert second.sections[1].text == "Line para one.\n\nLine para two."
    assert "weight" not in second.metadata  # "n/a" is missing, not a value
    assert fourth.sections[0].text == "[unbalanced list literal"  # bad literal kept as text
    assert fourth.year is None


def test_tsv() -> None:
    [doc] = load(FIXTURES / "papers.tsv")
    assert (doc.id, doc.title, doc.pmid) == ("555", "A TSV paper", "555")
    assert doc.authors == ["Anna Rossi", "Ben Okafor"]


def test_semicolon_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "semi.csv"
    path.write_text("title;abstract\nT;Some abstract, with a comma.\n", encoding="utf-8")
    [doc] = load(path)
    assert doc.abstract == "Some abstract, with a comma."


def test_main_text_helpers() -> None:
    assert split_main_text("['a', 'b ', '']") == ["a", "b"]
    assert split_main_text("first\n\nsecond\nthird") == ["first", "second", "third"]
    assert split_main_text("[not a list") == ["[not a list"]
    assert split_main_text("[__import__('os')]") == ["[__import__('os')]"]  # never evaluated
    assert split_abstract("One.|Two.|Three") == ["One.", "Two.", "Three"]
    assert split_abstract("x |y| z") == ["x |y| z"]  # a bar inside a sentence stays


def test_missing_text_columns(tmp_path: Path) -> None:
    path = tmp_path / "meta.csv"
    path.write_text("paper_id,title,year\n1,A,2020\n", encoding="utf-8")
    with pytest.raises(LoadError) as info:
        load(path)
    reason = info.value.reason
    assert "'paper_id', 'title', 'year'" in reason and "'abstract'" in reason and "'main_text'" in reason


def test_no_row_with_text(tmp_path: Path) -> None:
    path = tmp_path / "blank_rows.csv"
    path.write_text("paper_id,abstract,main_text\n1,,\n2,nan,[]\n", encoding="utf-8")
    with pytest.raises(LoadError, match="no row has text"):
        load(path)


def test_non_utf8_csv(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("title,abstract\nT,Caf\u00e9 study.\n".encode("latin-1"))
    [doc] = load(path)
    assert doc.abstract == "Café study."
    assert doc.warnings == ["decoded as latin-1: not valid UTF-8"]


def test_duplicate_ids_warned(tmp_path: Path) -> None:
    path = tmp_path / "dupes.csv"
    path.write_text("id,abstract\n7,First.\n7,Second.\n", encoding="utf-8")
    docs = load(path)
    assert len(docs) == 2 and "duplicate paper id '7'" in docs[1].warnings[0]


def test_binary_csv(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(LoadError, match="binary file"):
        load(path)


@pytest.mark.shared
@pytest.mark.parametrize(
    ("name", "rows", "float_column"), [("demo1.csv", 10, "weight"), ("demo2.csv", 9, "IMPACT_FACTOR")]
)
def test_fastbm_demo_csvs(name: str, rows: int, float_column: str) -> None:
    path = DEV / "fastbm" / name
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf-8", newline="") as handle:
        raw = list(csv.DictReader(handle))
    docs = load(path)
    assert len(docs) == rows
    assert [d.id for d in docs] == [r["paper_id"] for r in raw]
    for doc, row in zip(docs, raw, strict=True):
        assert doc.title == row["articletitle"] and doc.sections[0].kind == "abstract"
        assert isinstance(doc.metadata[float_column], float)
        main = row["main_text"].strip()
        if main.startswith("[") and main != "[]":
            paragraphs = [p for p in ast.literal_eval(main) if p.strip()]
            assert doc.sections[1].text.count("\n\n") == len(paragraphs) - 1
