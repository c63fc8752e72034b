"""HTML loader on small pages written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from scholargraph.errors import LoadError
from scholargraph.ingest import html
from scholargraph.ingest.registry import LoadOptions, load_file

SYLLABUS = """<!DOCTYPE html>
<html lang="en"><head>
  <meta charset="utf-8">
  <title>CS 501: Information Retrieval | Example University</title>
  <meta name="author" content="Ada Lovelace; Alan Turing">
  <style>body { font-family: serif; }</style>
  <script>var tracking = "SCRIPT TEXT";</script>
</head>
<body>
  <div id="cookie-banner">We use cookies. <button>Accept</button></div>
  <header class="site-header"><a href="/">Example University</a></header>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/courses">Courses</a></li></ul></nav>
  <div class="breadcrumbs">Home &gt; Courses &gt; CS 501</div>
  <main>
    <h1>CS 501: Information Retrieval</h1>
    <p>This course covers   indexing,
       ranking and evaluation of search engines.</p>
    <h2>Schedule</h2>
    <table>
      <tr><th>Week</th><th>Topic</th></tr>
      <tr><td>1</td><td>Boolean retrieval</td></tr>
      <tr><td>2</td><td>Vector space model</td></tr>
    </table>
    <h2>Readings</h2>
    <ul>
      <li>Manning et al. <em>Introduction to IR</em></li>
      <li>Papers:
        <ol><li>BM25 revisited</li><li>Dense retrieval</li></ol>
      </li>
    </ul>
    <h3>Code</h3>
    <pre>def score(q, d):
    return bm25(q, d)</pre>
    <p hidden>HIDDEN PARAGRAPH</p>
    <p style="display: none">INVISIBLE TEXT</p>
    <div class="share-buttons">Share on social media</div>
    <div id="comments">COMMENT THREAD</div>
  </main>
  <aside class="sidebar">SIDEBAR TEXT</aside>
  <footer>Copyright 2024 FOOTER TEXT</footer>
</body></html>
"""

ARTICLE = """<html><head>
<meta name="citation_title" content="Graph Retrieval for Scientific Papers">
<meta name="citation_author" content="Lovelace, Ada">
<meta name="citation_author" content="Turing, Alan">
<meta name="citation_publication_date" content="2021/05/03">
<meta name="citation_doi" content="doi:10.1000/xyz123">
<meta name="citation_journal_title" content="Journal of Tests">
<meta property="og:title" content="Not This One">
<title>Site | Graph Retrieval</title></head>
<body><div class="page has-sidebar"><article>
<h1>Graph Retrieval for Scientific Papers</h1>
<h2>Abstract</h2><p>We study graph retrieval.</p>
<h2>1. Introduction</h2><p>Papers are long.</p><h3>1.1 Motivation</h3><p>Because.</p>
<h2>2. Method</h2><p>We index.<br>Line two.</p>
<h2>References</h2><ul><li>A. Author. 2020. Paper one.</li><li>B. Author. 2019. Paper two.</li></ul>
</article></div></body></html>
"""


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def test_syllabus_boilerplate_dropped(tmp_path: Path) -> None:
    doc = html.load(write(tmp_path, "syllabus.html", SYLLABUS), LoadOptions())[0]
    assert doc.title == "CS 501: Information Retrieval | Example University"
    assert doc.authors == ["Ada Lovelace", "Alan Turing"]
    text = doc.full_text
    for junk in (
        "SCRIPT TEXT",
        "cookies",
        "Courses",
        "Home",
        "HIDDEN",
        "INVISIBLE",
        "Share on",
        "COMMENT",
        "SIDEBAR",
        "FOOTER",
        "font-family",
    ):
        assert junk not in text, junk
    assert [(s.heading, s.level) for s in doc.sections] == [
        ("CS 501: Information Retrieval", 1),
        ("Schedule", 2),
        ("Readings", 2),
        ("Code", 3),
    ]
    assert doc.sections[0].text == "This course covers indexing, ranking and evaluation of search engines."
    assert doc.sections[1].text == "Week\tTopic\n1\tBoolean retrieval\n2\tVector space model"
    assert (
        doc.sections[2].text
        == "- Manning et al. Introduction to IR\n- Papers:\n  - BM25 revisited\n  - Dense retrieval"
    )
    assert doc.sections[3].text == "def score(q, d):\n    return bm25(q, d)"
    assert doc.id.startswith("md5:") and doc.doi is None


def test_scholarly_article_metadata_and_kinds(tmp_path: Path) -> None:
    doc = html.load(write(tmp_path, "article.htm", ARTICLE), LoadOptions())[0]
    assert doc.title == "Graph Retrieval for Scientific Papers"
    assert doc.authors == ["Lovelace, Ada", "Turing, Alan"]
    assert (doc.year, doc.doi, doc.venue) == (2021, "10.1000/xyz123", "Journal of Tests")
    assert doc.id == "10.1000/xyz123"
    kinds = [(s.heading, s.kind) for s in doc.sections]
    assert kinds == [
        ("Graph Retrieval for Scientific Papers", "body"),
        ("Abstract", "abstract"),
        ("1. Introduction", "introduction"),
        ("1.1 Motivation", "introduction"),
        ("2. Method", "body"),
    ]
    assert doc.abstract == "We study graph retrieval."
    assert doc.sections[-1].text == "We index.\nLine two."
    assert doc.references == ["A. Author. 2020. Paper one.", "B. Author. 2019. Paper two."]
    with_refs = html.load(write(tmp_path, "article2.htm", ARTICLE), LoadOptions(include_references=True))[0]
    assert with_refs.sections[-1].kind == "references" and with_refs.id == doc.id


def test_encodings(tmp_path: Path) -> None:
    latin = "<html><head><meta charset='iso-8859-1'></head><body><p>Café naïve</p></body></html>"
    doc = html.load(write(tmp_path, "latin.html", latin.encode("iso-8859-1")), LoadOptions())[0]
    assert doc.full_text == "Café naïve"
    undeclared = "<html><body><p>Résumé – déjà vu</p></body></html>".encode("cp1252")
    doc = html.load(write(tmp_path, "cp.html", undeclared), LoadOptions())[0]
    assert doc.full_text == "Résumé – déjà vu"
    xml_decl = '<?xml version="1.0" encoding="utf-8"?><html><body><p>Ünïcode</p></body></html>'
    assert html.load(write(tmp_path, "x.html", xml_decl), LoadOptions())[0].full_text == "Ünïcode"
    assert (
        html.load(write(tmp_path, "bom.html", b"\xef\xbb\xbf<p>bom text</p>"), LoadOptions())[0].full_text == "bom text"
    )


@pytest.mark.parametrize(
    "content",
    [
        "   \n  ",
        "<html><head><title>Only a title</title></head><body><nav>menu</nav><script>x()</script></body></html>",
    ],
)
def test_no_readable_text(tmp_path: Path, content: str) -> None:
    with pytest.raises(LoadError) as err:
        html.load(write(tmp_path, "empty.html", content), LoadOptions())
    assert err.value.reason.startswith("no readable text in HTML")


def test_without_headings_and_title_fallbacks(tmp_path: Path) -> None:
    page = "<html><head><meta property='og:title' content='OG Title'></head><body><p>Just text.</p></body></html>"
    doc = html.load(write(tmp_path, "plain.html", page), LoadOptions())[0]
    assert doc.title == "OG Title"
    assert [(s.heading, s.kind) for s in doc.sections] == [("", "body")]
    bare = html.load(write(tmp_path, "bare-page.html", "<p>text only</p>"), LoadOptions())[0]
    assert bare.title == "bare-page"


def test_manifest_applies(tmp_path: Path) -> None:
    options = LoadOptions(manifest={"syllabus.html": {"id": "course-501", "year": 2024}})
    doc = load_file(write(tmp_path, "syllabus.html", SYLLABUS), options)[0]
    assert doc.id == "course-501" and doc.year == 2024


def test_specs() -> None:
    assert html.SPECS[0].suffixes == (".html", ".htm")
