"""PubMed/MEDLINE and PMC JATS XML loader."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from support.dev_data import dev_data_dir

from scholargraph.errors import LoadError
from scholargraph.ingest.pubmed import load_xml
from scholargraph.ingest.registry import LoadOptions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"
DEV = dev_data_dir(Path(__file__).resolve().parents[2])
JATS = DEV / "pdfs" / "jats"



JATS_TITLES = {
    "PMC5828200.nxml": "Curcuminoid submicron particle ameliorates cognitive deficits and decreases amyloid "
    "pathology in Alzheimer\u2019s disease mouse model",
    "PMC6398430.nxml": "Counting crows: population structure and group size variation in an urban population of crows",
    "PMC7417471.nxml": "Graphene impregnated electrospun nanofiber sensing materials: a comprehensive overview on "
    "bridging laboratory set-up to industry",
}


def load(path: Path, **options: object) -> list:
    return load_xml(path, LoadOptions(**options))


# --- MEDLINE ---------------------------------------------------------------------------------


def test_medline_articles() -> None:
    first, second = load(FIXTURES / "medline.xml")
    assert first.id == first.pmid == "31000001"
    assert first.title == "Serum IL-6 levels in women with endometriosis: a cohort study."
    assert first.authors == ["Jane A Smith", "K Müller", "Endometriosis Study Group"]
    assert (first.year, first.venue, first.doi) == (2019, "Journal of Imaginary Endocrinology", "10.1000/jie.2019.0042")
    assert first.abstract == (
        "Background: Endometriosis is a chronic inflammatory disease.\n\n"
        "Methods: We measured serum IL-6 in 120 women.\n\n"
        "Results: IL-6 was higher in cases than in controls (p < 0.01)."
    )
    assert [(s.heading, s.kind) for s in first.sections] == [("Abstract", "abstract")]
    assert first.metadata["mesh"] == ["Endometriosis", "Interleukin-6"]
    assert first.metadata["pmcid"] == "PMC6500001"
    assert first.references == ["Doe J. Inflammation in endometriosis. Fertil Steril. 2015;103:1-10."]
    assert first.warnings == ["skipped 1 of 3 articles without an abstract"]
    assert second.year == 1998  # from MedlineDate "1998 Dec-1999 Jan"
    assert second.doi is None and second.abstract.startswith("Unstructured")


def test_medline_without_any_abstract(tmp_path: Path) -> None:
    path = tmp_path / "letters.xml"
    path.write_text(
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>"
        "<ArticleTitle>T</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>",
        encoding="utf-8",
    )
    with pytest.raises(LoadError, match="none of its 1 articles has an abstract"):
        load(path)


# --- JATS ------------------------------------------------------------------------------------


def test_jats_structure() -> None:
    [doc] = load(FIXTURES / "jats_small.nxml")
    assert doc.title == "Graph methods for small corpora"
    assert doc.authors == ["Anna Rossi"]  # the editor is not an author
    assert (doc.year, doc.venue, doc.doi, doc.pmid) == (2020, "Small Test Journal", "10.9999/stj.2020.1", None)
    assert doc.id == "10.9999/stj.2020.1"  # no PMID: the DOI is the id
    assert doc.metadata["pmcid"] == "PMC1234567"
    assert doc.abstract == "Background: Graphs help retrieval.\n\nResults: They help a lot."  # not the teaser
    assert [(s.heading, s.level, s.kind) for s in doc.sections] == [
        ("Abstract", 1, "abstract"),
        ("", 1, "body"),
        ("Introduction", 1, "introduction"),
        ("Methods", 1, "body"),
        ("Data", 2, "body"),
        ("Cleaning", 3, "body"),
        ("Conclusions", 1, "conclusion"),
    ]
    intro = doc.sections[2].text
    assert intro == "Knowledge graphs were used before [1].\n\nFigure: Overview. The pipeline in three steps."
    assert doc.sections[4].text == "We used ten papers from two fields.\n\nTable: Corpus statistics"  # no footnote
    assert "We thank nobody" not in doc.full_text


def test_jats_references() -> None:
    [doc] = load(FIXTURES / "jats_small.nxml")
    assert doc.references == [
        "Doe J et al. (2018). Graphs everywhere. J Graphs 5:1-9. doi:10.1/jg.5.1",
        "Roe R. A Book. 2001.",
    ]
    assert all(s.kind != "references" for s in doc.sections)
    [with_refs] = load(FIXTURES / "jats_small.nxml", include_references=True)
    assert with_refs.sections[-1].heading == "References" and "Graphs everywhere" in with_refs.sections[-1].text


def test_truncated_jats_is_recovered_with_warning(tmp_path: Path) -> None:
    data = (FIXTURES / "jats_small.nxml").read_bytes()
    path = tmp_path / "cut.nxml"
    path.write_bytes(data[: data.index(b"Duplicates were")])
    [doc] = load(path)
    assert doc.title == "Graph methods for small corpora"
    assert [s.heading for s in doc.sections][:3] == ["Abstract", "", "Introduction"]
    assert doc.warnings[0].startswith("XML was truncated or malformed; recovered ")


def test_truncated_before_any_text(tmp_path: Path) -> None:
    data = (FIXTURES / "jats_small.nxml").read_bytes()
    path = tmp_path / "cut.xml"
    path.write_bytes(data[: data.index(b"<contrib-group>")])
    with pytest.raises(LoadError, match="malformed XML: "):
        load(path)


def test_not_xml(tmp_path: Path) -> None:
    path = tmp_path / "notes.xml"
    path.write_text("just some words", encoding="utf-8")
    with pytest.raises(LoadError, match="malformed XML"):
        load(path)


def test_other_xml_flavour(tmp_path: Path) -> None:
    path = tmp_path / "tei.xml"
    path.write_text('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body/></text></TEI>', encoding="utf-8")
    with pytest.raises(LoadError, match=r"XML is neither PubMed/MEDLINE nor JATS \(root element <TEI>\)"):
        load(path)


def test_external_entities_are_not_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    path = tmp_path / "xxe.xml"
    path.write_text(
        f'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY x SYSTEM "file://{secret}">]>'
        "<article><front><article-meta><title-group><article-title>T</article-title></title-group>"
        "</article-meta></front><body><p>&x; body</p></body></article>",
        encoding="utf-8",
    )
    [doc] = load(path)
    assert "TOP SECRET" not in doc.full_text and "body" in doc.full_text


# --- shared dev data -------------------------------------------------------------------------


def _top_level_titles(path: Path) -> list[str]:
    root = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    return [" ".join("".join(sec.find("title").itertext()).split()) for sec in root.find("body").findall("sec")]


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(JATS_TITLES))
def test_real_jats_files(name: str) -> None:
    [doc] = load(JATS / name)
    assert doc.title == JATS_TITLES[name]
    assert doc.pmid and doc.id == doc.pmid and doc.doi
    assert doc.sections[0].kind == "abstract" and len(doc.abstract) > 500
    top = [s.heading for s in doc.sections[1:] if s.level == 1]
    assert top == _top_level_titles(JATS / name)  # every top-level <sec> title, in order
    assert any(s.level >= 2 for s in doc.sections)
    assert len(doc.references) > 40 and all(s.kind != "references" for s in doc.sections)
    assert len(doc.full_text) > 20000 and not doc.warnings
