"""JSON / JSON Lines loader: record lists, single papers, ASKG sections, id maps, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.dev_data import dev_data_dir

from scholargraph.errors import LoadError
from scholargraph.ingest.jsonfile import load_json, parse_authors, parse_year
from scholargraph.ingest.registry import LoadOptions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"
DEV = dev_data_dir(Path(__file__).resolve().parents[2])


def load(path: Path, **options: object) -> list:
    return load_json(path, LoadOptions(**options))


def write_json(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


# --- shapes ----------------------------------------------------------------------------------


def test_list_of_records() -> None:
    docs = load(FIXTURES / "papers.json")
    assert len(docs) == 2
    first, second = docs
    assert first.id == "P-1" and first.title == "Graph retrieval"
    assert first.authors == ["Anna Rossi", "Ben K Okafor"]
    assert (first.year, first.venue, first.doi) == (2021, "J Graphs", "10.1/jg.1")
    assert [s.kind for s in first.sections] == ["abstract", "body"]
    assert first.abstract == "We study graph retrieval."
    assert first.metadata == {"license": "CC-BY"}
    assert second.id.startswith("md5:") and second.venue == "Workshop on Graphs"
    assert second.authors == ["Anna Rossi", "Ben Okafor"]
    assert any("skipped 1 of 3 records" in w and "records 3" in w for w in first.warnings)


def test_single_object(tmp_path: Path) -> None:
    path = write_json(tmp_path, "one.json", {"title": "Solo", "body": "Body text.", "paper_id": 42})
    [doc] = load(path)
    assert doc.id == "42" and doc.title == "Solo" and doc.full_text == "Body text."


def test_container_key(tmp_path: Path) -> None:
    path = write_json(
        tmp_path, "wrapped.json", {"papers": [{"title": "A", "content": "a"}, {"title": "B", "content": "b"}]}
    )
    assert [d.title for d in load(path)] == ["A", "B"]


def test_sectioned_askg_paper() -> None:
    [doc] = load(FIXTURES / "askg_like.json")
    assert doc.title == "A Small Sectioned Paper"
    assert [(s.heading, s.kind) for s in doc.sections] == [
        ("Abstract", "abstract"),
        ("Introduction", "introduction"),
        ("Conclusion", "conclusion"),
    ]
    assert doc.sections[1].text == "First paragraph.\n\nSecond paragraph, first sentence. Second sentence."
    assert doc.abstract == "We test sectioned JSON. It has sentences."
    assert doc.metadata == {"iri": "Paper-Small_Test", "keywords": ["graphs", "tests"]}
    assert doc.id == f"md5:{doc.content_md5}"


def test_json_lines_with_token_sentences() -> None:
    first, second = load(FIXTURES / "papers.jsonl")
    assert first.id == "D1"
    assert first.full_text == "We propose a model (GraphRank). It works."
    assert first.title == "We propose a model (GraphRank)."
    assert "ner" in first.metadata
    assert (second.id, second.title, second.full_text) == ("D2", "Second", "Content field text.")


def test_json_lines_in_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_text('{"text": "one"}\n{"text": "two"}\n', encoding="utf-8")
    assert [d.full_text for d in load(path)] == ["one", "two"]


def test_id_mapping_and_labelled_contexts(tmp_path: Path) -> None:
    value = {
        "101": {
            "QUESTION": "Q?",
            "CONTEXTS": ["Bg text.", "Result text."],
            "LABELS": ["BACKGROUND", "RESULTS"],
            "YEAR": "2001",
        },
        "102": {"QUESTION": "Q2?", "CONTEXTS": ["Only context."], "LABELS": ["OBJECTIVE"], "YEAR": "1999"},
    }
    first, second = load(write_json(tmp_path, "pqa.json", value))
    assert first.id == "101" and first.year == 2001
    assert first.abstract == "Background: Bg text.\n\nResults: Result text."
    assert first.title == "Bg text."
    assert first.metadata["QUESTION"] == "Q?"
    assert second.id == "102"


def test_title_to_sentences_mapping(tmp_path: Path) -> None:
    path = write_json(tmp_path, "corpus.json", {"Demon Dice": ["Demon Dice is a game.", " It uses dice."]})
    [doc] = load(path)
    assert doc.title == "Demon Dice" and doc.full_text == "Demon Dice is a game. It uses dice."


def test_references_section_moved_out(tmp_path: Path) -> None:
    value = {
        "title": "T",
        "sections": [{"heading": "Intro", "text": "Hi."}, {"heading": "References", "text": "Ref A.\nRef B."}],
    }
    path = write_json(tmp_path, "refs.json", value)
    [doc] = load(path)
    assert doc.references == ["Ref A.", "Ref B."] and [s.heading for s in doc.sections] == ["Intro"]
    [kept] = load(path, include_references=True)
    assert kept.sections[-1].kind == "references"


def test_metadata_helpers() -> None:
    assert parse_authors("Smith, John") == ["John Smith"]
    assert parse_authors("A. Smith, B. Jones and C. Wu") == ["A. Smith", "B. Jones", "C. Wu"]
    assert parse_authors([{"name": "Full Name"}, {"given": "Ada", "family": "Lovelace"}, 7]) == [
        "Full Name",
        "Ada Lovelace",
    ]
    assert parse_year("Published 2019-05-01") == 2019 and parse_year(2020.0) == 2020
    assert parse_year("n/a") is None and parse_year(True) is None


# --- bad input -------------------------------------------------------------------------------


def test_truncated_json(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[{"title": "A", "text": "hello"}, {"title": "B", "te', encoding="utf-8")
    with pytest.raises(LoadError, match=r"invalid JSON: .* line 1 column \d+ \(the file looks truncated\)"):
        load(path)


def test_invalid_json_line_in_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "a"}\n{"text": oops}\n', encoding="utf-8")
    with pytest.raises(LoadError, match=r"invalid JSON: Expecting value at line 2 column 10"):
        load(path)


def test_no_usable_records_names_expected_fields(tmp_path: Path) -> None:
    path = write_json(tmp_path, "qa.json", [{"question": "q", "answer": "a"}])
    with pytest.raises(LoadError) as info:
        load(path)
    assert "no usable records" in info.value.reason
    assert "text, abstract" in info.value.reason and "found keys: answer, question" in info.value.reason


def test_scalar_json(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="JSON holds int"):
        load(write_json(tmp_path, "n.json", 42))


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 50000 + "]" * 50000, encoding="utf-8")
    with pytest.raises(LoadError, match="nested too deeply"):
        load(path)


# --- shared dev data -------------------------------------------------------------------------


@pytest.mark.shared
def test_askg_papers_keep_sections_in_order() -> None:
    files = sorted((DEV / "askg" / "papers").glob("kg_ASKG_*.json"))
    assert len(files) == 6
    for path in files:
        raw = json.loads(path.read_text(encoding="utf-8"))
        [doc] = load(path)
        assert doc.title == raw["title"]
        assert [s.heading for s in doc.sections] == [s["subtitle"] for s in raw["sections"]]
        assert doc.sections[0].kind == "abstract" and doc.abstract
        assert doc.metadata["iri"] == raw["iri"] and doc.id == f"md5:{doc.content_md5}"
        first_sentence = raw["sections"][1]["paragraphs"][0]["sentences"][0]["text"]
        assert doc.sections[1].text.startswith(first_sentence.strip())


@pytest.mark.shared
def test_scierc_json_lines() -> None:
    docs = load(DEV / "scierc" / "dev.json")
    assert len(docs) == 50
    assert all(d.full_text and not d.id.startswith("md5:") for d in docs)


@pytest.mark.shared
def test_other_dev_json_files() -> None:
    assert len(load(DEV / "pubmedqa" / "pqal_dev.json")) == 500
    qasper = load(DEV / "qasper" / "qasper_dev_5papers.json")
    assert [d.id for d in qasper][:1] == ["1909.00694"] and len(qasper) == 5
    assert any(s.level == 2 for s in qasper[0].sections)  # "A ::: B" headings nest
    [s2orc] = load(DEV / "pdfs" / "N18-3011.json")
    assert s2orc.title == "Construction of the Literature Graph in Semantic Scholar" and s2orc.references


def test_a_map_of_file_names_to_titles_is_not_papers(tmp_path: Path) -> None:
    """titles.json (file name -> title) is read as metadata, not as 22 junk papers."""
    from scholargraph.errors import NotPapersError

    titles = {f"paper{i}.pdf": f"A Study of Retrieval Method {i} for Scientific Text" for i in range(22)}
    with pytest.raises(NotPapersError, match="not papers") as info:
        load(write_json(tmp_path, "titles.json", titles))
    assert "22" in info.value.reason and "short strings" in info.value.reason
    corpus = {"Aspirin": "Aspirin is a drug. " * 30, "Warbler": "A warbler is a small songbird of the family. " * 20}
    assert len(load(write_json(tmp_path, "corpus.json", corpus))) == 2  # title -> text: papers, as before


def test_askg_papers_keep_their_own_sentences_and_iris() -> None:
    """seed 004 item 2: a DDM input's sentence segmentation and IRIs are kept, not re-split."""
    from scholargraph.ingest.chunking import chunk_document
    from scholargraph.ingest.tokenizer import load_tokenizer
    from scholargraph.profiles.localkg.document import read_paper

    total = 0
    for path in sorted((DEV / "askg" / "papers").glob("kg_ASKG_*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        given = [(" ".join(s["text"].split()), s["iri"]) for sec in raw["sections"] for p in sec["paragraphs"]
                 for s in p["sentences"] if s["text"].strip()]
        [doc] = load(path)
        chunks = chunk_document(doc, load_tokenizer(), 1200, 100, "structure", False)
        paper = read_paper(doc, chunks)
        assert [(s.text, s.iri) for s in paper.sentences] == given, path.name
        assert [r.iri for r in paper.records()] == [iri for _, iri in given]
        total += len(given)
    assert total == 650  # the six papers, every sentence as given


# --- streamed (issue 27 item 7: a file of many records is read record by record) ----------------


def _outcome(load_fn) -> tuple:
    try:
        return "ok", [d.to_dict() for d in load_fn()]
    except LoadError as exc:
        return type(exc).__name__, exc.reason


RECORDS = [{"title": f"P{i}", "text": "Words about graph retrieval and protein folding. " * 3, "year": 1990 + i}
           for i in range(6)]
STREAMED_CASES = {
    "array.json": json.dumps(RECORDS),
    "pretty.json": json.dumps(RECORDS, indent=2),
    "lines.jsonl": "\n".join(map(json.dumps, RECORDS)),
    "lists.json": json.dumps(RECORDS[:2]) + "\n" + json.dumps(RECORDS[2:]),
    "skipped.json": json.dumps([*RECORDS, {"foo": 1}, 5]),
    "truncated.json": json.dumps(RECORDS)[:-40],
    "bad.json": json.dumps(RECORDS[:2])[:-1] + " x]",
    "trailing_comma.json": json.dumps(RECORDS[:2])[:-1] + ",]",
    "map.json": json.dumps({f"id{i}": r for i, r in enumerate(RECORDS)}),
}


@pytest.mark.parametrize("name", sorted(STREAMED_CASES))
def test_streamed_records_are_what_the_whole_file_gives(tmp_path: Path, name: str, monkeypatch) -> None:
    """Read 7 characters at a time (records, numbers and strings cut anywhere), a file gives the
    documents, warnings and error messages (line and column) reading it whole gives."""
    from scholargraph.ingest import jsonfile

    path = tmp_path / name
    path.write_text(STREAMED_CASES[name], encoding="utf-8")
    monkeypatch.setattr(jsonfile, "READ_CHARS", 7)

    def streamed() -> list:
        warnings: list[str] = []
        docs = list(jsonfile.stream_json(path, LoadOptions(), warnings))
        docs[0].warnings.extend(warnings)
        return docs

    assert _outcome(streamed) == _outcome(lambda: load(path))
