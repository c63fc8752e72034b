"""Plain-text / Markdown loader, heading classification, and the registry's generic checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from scholargraph.errors import LoadError
from scholargraph.ingest import csvfile, jsonfile, pubmed, registry, text
from scholargraph.ingest.registry import LoadOptions, load_file
from scholargraph.ingest.sections import classify_heading, first_sentence, normalise_heading, title_from_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"


@pytest.fixture
def my_loaders(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry holding only the text/JSON/CSV/XML loaders (PDF and HTML live elsewhere)."""
    monkeypatch.setattr(registry, "_LOADERS", {})
    for module in (text, jsonfile, csvfile, pubmed):
        for spec in module.SPECS:
            registry.register(spec)


def load(path: Path, **options: object) -> list:
    return text.load_text(path, LoadOptions(**options))


# --- classify_heading ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("Abstract", "abstract"),
        ("ABSTRACT:", "abstract"),
        ("1 Introduction", "introduction"),
        ("I. INTRODUCTION", "introduction"),
        ("Conclusion", "conclusion"),
        ("5. Conclusions and Future Work", "conclusion"),
        ("Concluding remarks", "conclusion"),
        ("Summary and Conclusion", "conclusion"),
        ("Discussion and conclusions", "conclusion"),
        ("References", "references"),
        ("Bibliography", "references"),
        ("2.1 Methods", "body"),
        ("Related Work", "body"),
        ("Introduction of a new dataset", "introduction"),
        ("", "body"),
    ],
)
def test_classify_heading(heading: str, kind: str) -> None:
    assert classify_heading(heading) == kind


def test_heading_helpers() -> None:
    assert normalise_heading("  2.1.  Data  sets ") == "Data sets"
    assert first_sentence("One sentence here. Another one.") == "One sentence here."
    long = "word " * 100
    cut = first_sentence(long, limit=50)
    assert len(cut) <= 50 and cut.endswith("…")
    assert title_from_text("BACKGROUND: Endometriosis is common. More text.") == "Endometriosis is common."


# --- markdown --------------------------------------------------------------------------------


def test_markdown_sections_levels_and_kinds() -> None:
    [doc] = load(FIXTURES / "paper.md")
    assert doc.title == "Graph Retrieval for Scientific Papers"
    headings = [(s.heading, s.level, s.kind) for s in doc.sections]
    assert headings == [
        ("", 1, "front"),
        ("Graph Retrieval for Scientific Papers", 1, "front"),
        ("Abstract", 2, "abstract"),
        ("1 Introduction", 2, "introduction"),
        ("2 Methods", 2, "body"),
        ("2.1 Data", 3, "body"),
        ("Evaluation", 2, "body"),  # setext heading
        ("Conclusions", 2, "conclusion"),
    ]
    assert doc.sections[0].text == "Preprint, not peer reviewed."
    intro = doc.sections[3].text
    assert "# this comment is code, not a heading" in intro  # fenced code is not a heading
    assert doc.abstract.startswith("We index papers")


def test_markdown_references_go_to_document_references() -> None:
    [doc] = load(FIXTURES / "paper.md")
    assert doc.references == ["Doe J. Graphs everywhere. 2018.", "Roe R. A Book. 2001."]
    assert "Graphs everywhere" not in doc.full_text
    [kept] = load(FIXTURES / "paper.md", include_references=True)
    assert kept.sections[-1].kind == "references"
    assert "Graphs everywhere" in kept.full_text


def test_id_is_content_md5() -> None:
    [doc] = load(FIXTURES / "paper.md")
    assert doc.id == f"md5:{doc.content_md5}"
    assert len(doc.content_md5) == 32


def test_markdown_without_h1_uses_first_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("## Abstract\n\nShort.\n\n## Results\n\nFine.\n", encoding="utf-8")
    [doc] = load(path)
    assert [s.heading for s in doc.sections] == ["Abstract", "Results"]
    assert doc.title == "Short."  # "Abstract" is not a title


# --- plain text ------------------------------------------------------------------------------


def test_plain_text_single_section_and_title() -> None:
    [doc] = load(FIXTURES / "plain.txt")
    assert doc.title == "Meeting notes about the graph project"
    assert len(doc.sections) == 1 and doc.sections[0].heading == "" and doc.sections[0].kind == "body"


def test_plain_text_numbered_headings_split() -> None:
    [doc] = load(FIXTURES / "numbered.txt")
    assert doc.title == "Learning to Rank Citations"
    assert [(s.heading, s.level, s.kind) for s in doc.sections] == [
        ("", 1, "front"),
        ("Abstract", 1, "abstract"),
        ("1 Introduction", 1, "introduction"),
        ("2 Method", 1, "body"),
        ("2.1 Features", 2, "body"),
        ("3 Conclusion", 1, "conclusion"),
    ]
    assert "2 it is fast." in doc.sections[2].text  # a numbered list item is not a heading
    assert doc.references == ["Doe J. Ranking. 2019."]


def test_numbered_list_alone_is_not_split(tmp_path: Path) -> None:
    path = tmp_path / "recipe.txt"
    path.write_text("Pancakes\n\n1 Mix flour\n\nstir well\n\n3 Eggs\n", encoding="utf-8")
    [doc] = load(path)
    assert len(doc.sections) == 1


def test_long_first_line_title_falls_back_to_stem(tmp_path: Path) -> None:
    path = tmp_path / "long_line.txt"
    path.write_text("x" * 300 + "\nmore", encoding="utf-8")
    [doc] = load(path)
    assert doc.title == "long_line"


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.md"
    path.write_bytes(b"# Title\r\n\r\n## Intro\r\n\r\nText.\r\n")
    [doc] = load(path)
    assert [s.heading for s in doc.sections] == ["Title", "Intro"]
    assert "\r" not in doc.full_text


# --- decoding --------------------------------------------------------------------------------


def test_non_utf8_text_decoded_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("Café study — résumé\nBody.".encode("cp1252"))
    [doc] = load(path)
    assert doc.title == "Café study — résumé"
    assert doc.warnings == ["decoded as latin-1: not valid UTF-8"]


def test_utf16_and_utf8_bom(tmp_path: Path) -> None:
    utf16 = tmp_path / "u16.txt"
    utf16.write_bytes("Ünïcode title\nbody".encode("utf-16"))
    [doc] = load(utf16)
    assert doc.title == "Ünïcode title" and not doc.warnings
    bom = tmp_path / "bom.md"
    bom.write_bytes("\ufeff# Title\n\nBody".encode())
    [doc] = load(bom)
    assert doc.title == "Title"


def test_binary_file_with_txt_suffix(tmp_path: Path, my_loaders: None) -> None:
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    with pytest.raises(LoadError, match="binary file, not text"):
        load_file(path)


def test_binary_without_nul_bytes(tmp_path: Path) -> None:
    path = tmp_path / "noise.txt"
    path.write_bytes(bytes(b for b in range(1, 256)) * 20)
    with pytest.raises(LoadError, match="binary file"):
        load(path)


# --- generic registry checks -----------------------------------------------------------------


def test_empty_file(tmp_path: Path, my_loaders: None) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with pytest.raises(LoadError, match="empty file"):
        load_file(path)


def test_whitespace_only_file(tmp_path: Path, my_loaders: None) -> None:
    path = tmp_path / "blank.md"
    path.write_text("  \n\n\t\n", encoding="utf-8")
    with pytest.raises(LoadError, match="no text content"):
        load_file(path)


def test_headings_without_text(tmp_path: Path) -> None:
    path = tmp_path / "skeleton.md"
    path.write_text("# Title\n\n## Empty section\n", encoding="utf-8")
    with pytest.raises(LoadError, match="no text content"):
        load(path)


def test_unknown_extension(tmp_path: Path, my_loaders: None) -> None:
    path = tmp_path / "paper.docx"
    path.write_bytes(b"PK\x03\x04 not really a docx")
    with pytest.raises(LoadError, match=r"unsupported file type '\.docx'.*\.txt"):
        load_file(path)


def test_load_file_sets_source_path(my_loaders: None) -> None:
    [doc] = load_file(FIXTURES / "plain.txt")
    assert doc.source_path == str(FIXTURES / "plain.txt")
