"""PubMed/MEDLINE XML and PMC JATS XML loader (.xml, .nxml).

MEDLINE (``<PubmedArticleSet>``): one Document per article, text = title + structured abstract.
JATS (``<article>``, also wrapped in ``<pmc-articleset>``): abstract and body sections in order,
nested ``<sec>`` as deeper levels, figure/table captions as "Figure: "/"Table: " paragraphs,
reference list into ``Document.references``. External DTDs and entities are never loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from ..errors import LoadError
from ..models import Document, Section
from .identity import doc_id, paper_id
from .jsonfile import parse_year
from .registry import LoaderSpec, LoadOptions
from .sections import clean_ws, join_paragraphs, make_section, title_from_text

MEDLINE_ROOTS = {"PubmedArticleSet", "PubmedArticle", "MedlineCitationSet", "MedlineCitation"}
JATS_ROOTS = {"article", "pmc-articleset", "articles"}
_PARSER_OPTIONS = dict(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True, remove_comments=True)
# Not part of a paragraph's running text: floats are added as captions, the rest dropped.
_FLOATS = ("fig", "table-wrap", "supplementary-material", "graphic", "inline-graphic", "media", "fn")
MAX_SECTION_DEPTH = 12
_DATE_PREFERENCE = ("epub", "ppub", "pub", "collection", "epub-ppub")


# Elements whose text must not run into the next element's ("in vitro" + "SH-SY5Y cells ...").
_SPACED = frozenset("p title label caption list-item td th tr surname sec def term".split())


def _text(el: etree._Element | None, strip: tuple[str, ...] = ()) -> str:
    """All text under ``el`` (whitespace collapsed), without the subtrees named in ``strip``."""
    if el is None:
        return ""
    parts: list[str] = []
    walker = etree.iterwalk(el, events=("start", "end"))
    for event, node in walker:
        is_element = isinstance(node.tag, str)
        if event == "start":
            if node is not el and is_element and node.tag in strip:
                walker.skip_subtree()
            elif is_element and node.text:
                parts.append(node.text)
        elif node is not el:
            if is_element and node.tag in _SPACED:
                parts.append(" ")
            if node.tail:
                parts.append(node.tail)
    return clean_ws("".join(parts))


# --- parsing ---------------------------------------------------------------------------------


def _strip_namespaces(root: etree._Element) -> None:
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = etree.QName(el).localname


def parse_xml(path: Path) -> tuple[etree._Element, str | None]:
    """(root element, parse error message when the tree was recovered from malformed XML)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise LoadError(str(path), "binary file, not XML")
    try:
        root = etree.fromstring(data, etree.XMLParser(**_PARSER_OPTIONS))
        error = None
    except etree.XMLSyntaxError as exc:
        error = str(exc)
        try:
            root = etree.fromstring(data, etree.XMLParser(recover=True, **_PARSER_OPTIONS))
        except etree.XMLSyntaxError:
            root = None
        if root is None:
            raise LoadError(str(path), f"malformed XML: {error}") from exc
    _strip_namespaces(root)
    return root, error


# --- MEDLINE ---------------------------------------------------------------------------------


def _medline_authors(article: etree._Element) -> list[str]:
    names = []
    for author in article.iterfind("AuthorList/Author"):
        if author.get("ValidYN") == "N":
            continue
        first = _text(author.find("ForeName")) or _text(author.find("Initials"))
        name = clean_ws(f"{first} {_text(author.find('LastName'))}") or _text(author.find("CollectiveName"))
        if name:
            names.append(name)
    return names


def _medline_abstract(article: etree._Element) -> str:
    parts = []
    for part in article.iterfind("Abstract/AbstractText"):
        text, label = _text(part), (part.get("Label") or "").strip()
        if text:
            parts.append(f"{label.capitalize() if label.isupper() else label}: {text}" if label else text)
    return join_paragraphs(parts)


_YEAR_PATHS = (
    "Article/Journal/JournalIssue/PubDate/Year",
    "Article/Journal/JournalIssue/PubDate/MedlineDate",  # "1998 Dec-1999 Jan"
    "Article/ArticleDate/Year",
    "DateCompleted/Year",
)


def _medline_year(citation: etree._Element) -> int | None:
    for xpath in _YEAR_PATHS:
        year = parse_year(_text(citation.find(xpath)))
        if year:
            return year
    return None


def _article_ids(entry: etree._Element, citation: etree._Element) -> dict[str, str]:
    """{"doi": ..., "pmc": ...} from PubmedData/ArticleIdList, else Article/ELocationID."""
    ids = {(a.get("IdType") or "").lower(): _text(a) for a in entry.iterfind("PubmedData/ArticleIdList/ArticleId")}
    for eloc in citation.iterfind("Article/ELocationID"):
        ids.setdefault((eloc.get("EIdType") or "").lower(), _text(eloc))
    return {k: v for k, v in ids.items() if k and v}


def _medline_document(entry: etree._Element, path: Path) -> Document | None:
    """``entry`` is a PubmedArticle (or a bare MedlineCitation). None when it has no abstract."""
    citation = entry if entry.tag == "MedlineCitation" else entry.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    if article is None:
        return None
    title, abstract = _text(article.find("ArticleTitle")), _medline_abstract(article)
    if not abstract:
        return None
    ids = _article_ids(entry, citation)
    pmid = paper_id(_text(citation.find("PMID")))
    identifier, md5 = doc_id(pmid, abstract)
    metadata: dict[str, object] = {
        "mesh": [_text(d) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")],
        "keywords": [_text(k) for k in citation.iterfind("KeywordList/Keyword")],
        "publication_types": [_text(t) for t in article.iterfind("PublicationTypeList/PublicationType")],
    }
    if ids.get("pmc"):
        metadata["pmcid"] = ids["pmc"]
    return Document(
        id=identifier,
        title=title or title_from_text(abstract),
        sections=[Section("Abstract", abstract, kind="abstract")],
        source_path=str(path),
        authors=_medline_authors(article),
        year=_medline_year(citation),
        venue=_text(article.find("Journal/Title")) or _text(citation.find("MedlineJournalInfo/MedlineTA")) or None,
        doi=ids.get("doi"),
        pmid=pmid,
        abstract=abstract,
        metadata={k: v for k, v in metadata.items() if v},
        content_md5=md5,
        references=_medline_references(entry),
    )


def _medline_references(entry: etree._Element) -> list[str]:
    """Reference citations, each followed by its ``pmid:``/``doi:`` when the record gives them."""
    out = []
    for ref in entry.iterfind("PubmedData/ReferenceList/Reference"):
        text = _text(ref.find("Citation"))
        if not text:
            continue
        for aid in ref.iterfind("ArticleIdList/ArticleId"):
            kind = {"pubmed": "pmid", "doi": "doi"}.get((aid.get("IdType") or "").lower())
            if kind and _text(aid) and f"{kind}:" not in text:
                text += f" {kind}:{_text(aid)}"
        out.append(text)
    return out


def _medline_entries(root: etree._Element) -> Iterator[etree._Element]:
    if root.tag in {"PubmedArticle", "MedlineCitation"}:
        yield root
        return
    for entry in root:
        if entry.tag in {"PubmedArticle", "MedlineCitation"}:
            yield entry


# --- JATS ------------------------------------------------------------------------------------


def _float_caption(el: etree._Element) -> str:
    caption = _text(el.find("caption"), strip=("xref",)) or _text(el.find("title"))
    if not caption:
        return ""
    return f"{'Table' if el.tag == 'table-wrap' else 'Figure'}: {caption}"


def _block_paragraphs(el: etree._Element) -> list[str]:
    """Paragraph texts of one block element of a section (p, fig, table-wrap, list, ...)."""
    if el.tag in {"fig", "table-wrap", "fig-group", "table-wrap-group"}:
        floats = [el] if el.tag in {"fig", "table-wrap"} else list(el.iter("fig", "table-wrap"))
        return [c for c in (_float_caption(f) for f in floats) if c]
    if el.tag in {"title", "label", "sec", "supplementary-material", "graphic", "media", "fn-group", "ref-list"}:
        return []
    captions = [c for c in (_float_caption(f) for f in el.iter("fig", "table-wrap")) if c]
    return [t for t in [_text(el, strip=_FLOATS)] if t] + captions


def _jats_sections(sec: etree._Element, level: int) -> list[Section]:
    """The section ``sec`` (with its own paragraphs) followed by its subsections, in order."""
    heading = _text(sec.find("title"))
    paragraphs: list[str] = []
    children: list[Section] = []
    for child in sec:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "sec" and level >= MAX_SECTION_DEPTH:  # absurd nesting: keep the text only
            paragraphs.append(_text(child, strip=_FLOATS))
        elif child.tag == "sec":
            children.extend(_jats_sections(child, level + 1))
        else:
            paragraphs.extend(_block_paragraphs(child))
    return [make_section(heading, join_paragraphs(paragraphs), level=level), *children]


def _jats_body(body: etree._Element | None) -> list[Section]:
    sections: list[Section] = []
    loose: list[str] = []  # paragraphs directly under <body>, outside any <sec>
    for child in body if body is not None else []:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "sec":
            if loose:
                sections.append(Section("", join_paragraphs(loose), kind="body"))
                loose = []
            sections.extend(_jats_sections(child, 1))
        else:
            loose.extend(_block_paragraphs(child))
    if loose:
        sections.append(Section("", join_paragraphs(loose), kind="body"))
    return sections


def _jats_abstract(meta: etree._Element) -> str:
    abstracts = list(meta.iterfind("abstract"))
    main = next((a for a in abstracts if not a.get("abstract-type")), abstracts[0] if abstracts else None)
    if main is None:
        return ""
    paragraphs = []
    for sec in main.iterfind("sec"):
        label, text = _text(sec.find("title")), join_paragraphs(_text(p, strip=_FLOATS) for p in sec.iterfind("p"))
        paragraphs.append(f"{label}: {text}" if label and text else text)
    paragraphs += [_text(p, strip=_FLOATS) for p in main.iterfind("p")]
    return join_paragraphs(paragraphs)


def _jats_authors(meta: etree._Element) -> list[str]:
    names = []
    for contrib in meta.iterfind("contrib-group/contrib[@contrib-type='author']"):
        name = contrib.find("name")
        if name is not None:
            names.append(clean_ws(f"{_text(name.find('given-names'))} {_text(name.find('surname'))}"))
        else:
            names.append(_text(contrib.find("string-name")) or _text(contrib.find("collab")))
    return [n for n in names if n]


def _jats_year(meta: etree._Element) -> int | None:
    dates = {(d.get("pub-type") or d.get("date-type") or ""): d for d in meta.iterfind("pub-date")}
    ordered = [dates[k] for k in _DATE_PREFERENCE if k in dates] + list(dates.values())
    for date in ordered:
        year = parse_year(_text(date.find("year"))) or parse_year(date.get("iso-8601-date"))
        if year:
            return year
    return None


def _pub_ids(cit: etree._Element) -> str:
    """" doi:... pmid:..." for the identifiers a citation carries (kept for the citation network)."""
    ids: dict[str, str] = {}
    for p in cit.iter("pub-id"):
        kind = (p.get("pub-id-type") or "").lower()
        if kind in ("doi", "pmid") and _text(p):
            ids.setdefault(kind, _text(p))
    return "".join(f" {k}:{v}" for k, v in ids.items())


def _citation_string(ref: etree._Element) -> str:
    """One reference as text; element-citation fields are assembled with punctuation. Its DOI and
    PMID, when given, end the string as ``doi:...`` / ``pmid:...``."""
    cit = next(ref.iter("mixed-citation", "element-citation", "nlm-citation"), None)
    if cit is None:
        return _text(ref, strip=("label",))
    if cit.tag == "mixed-citation":
        text = _text(cit, strip=("pub-id",))
        return f"{text}{_pub_ids(cit)}" if text else ""
    names = [clean_ws(f"{_text(n.find('surname'))} {_text(n.find('given-names'))}") for n in cit.iter("name")]
    names += [_text(c) for c in cit.iter("collab")]
    authors = ", ".join(n for n in names if n) + (" et al." if cit.find(".//etal") is not None else "")
    pages = "-".join(t for t in (_text(cit.find("fpage")), _text(cit.find("lpage"))) if t)
    volume = _text(cit.find("volume"))
    where = " ".join(t for t in (_text(cit.find("source")), volume + (f":{pages}" if pages else "")) if t)
    year = _text(cit.find("year"))
    parts = [authors, f"({year})" if year else "", _text(cit.find("article-title")), where]
    text = ". ".join(p.strip(". ") for p in parts if p.strip(". ")) + "."
    return text + _pub_ids(cit)


def _jats_document(article: etree._Element, path: Path, options: LoadOptions) -> Document | None:
    meta = article.find("front/article-meta")
    if meta is None:
        meta = etree.Element("article-meta")
    ids = {(a.get("pub-id-type") or "").lower(): _text(a) for a in meta.iterfind("article-id")}
    abstract = _jats_abstract(meta)
    sections = [Section("Abstract", abstract, kind="abstract")] if abstract else []
    sections += _jats_body(article.find("body"))
    for app in article.iterfind("back/app-group/app"):
        sections.extend(_jats_sections(app, 1))
    references = [r for r in (_citation_string(ref) for ref in article.iterfind("back//ref-list/ref")) if r]
    if options.include_references and references:
        sections.append(Section("References", "\n".join(references), kind="references"))
    text = "\n\n".join(s.text for s in sections if s.text)
    if not text.strip():
        return None
    pmid = paper_id(ids.get("pmid"))
    pmcid = ids.get("pmc") or ids.get("pmcid")
    pmcid = f"PMC{pmcid}" if pmcid and pmcid.isdigit() else pmcid
    identifier, md5 = doc_id(pmid or ids.get("doi") or pmcid, text)
    return Document(
        id=identifier,
        title=_text(meta.find("title-group/article-title"), strip=("xref", "fn")) or path.stem,
        sections=sections,
        source_path=str(path),
        authors=_jats_authors(meta),
        year=_jats_year(meta),
        venue=_text(article.find("front/journal-meta//journal-title")) or None,
        doi=ids.get("doi") or None,
        pmid=pmid,
        abstract=abstract,
        metadata={k: v for k, v in {"pmcid": pmcid, "article_type": article.get("article-type")}.items() if v},
        content_md5=md5,
        references=references,
    )


def _jats_articles(root: etree._Element) -> list[etree._Element]:
    return [root] if root.tag == "article" else [a for a in root if a.tag == "article"]


# --- loader ----------------------------------------------------------------------------------


def _load_medline(root: etree._Element, path: Path) -> tuple[list[Document], str]:
    entries = list(_medline_entries(root))
    docs = [d for d in (_medline_document(e, path) for e in entries) if d]
    if docs and len(docs) < len(entries):
        docs[0].warnings.append(f"skipped {len(entries) - len(docs)} of {len(entries)} articles without an abstract")
    if not docs:
        found = f"none of its {len(entries)} articles has an abstract" if entries else "it holds no <PubmedArticle>"
        raise LoadError(str(path), f"no text in the PubMed/MEDLINE XML: {found}")
    return docs, f"{len(docs)} articles"


def _load_jats(root: etree._Element, path: Path, options: LoadOptions) -> tuple[list[Document], str]:
    articles = _jats_articles(root)
    docs = [d for d in (_jats_document(a, path, options) for a in articles) if d]
    if not docs:
        found = "no abstract or body text" if articles else "no <article> element"
        raise LoadError(str(path), f"no text in the JATS XML: {found}")
    return docs, f"{sum(len(d.sections) for d in docs)} sections"


def load_xml(path: Path, options: LoadOptions) -> list[Document]:
    root, error = parse_xml(path)
    try:
        if root.tag in MEDLINE_ROOTS:
            docs, recovered = _load_medline(root, path)
        elif root.tag in JATS_ROOTS:
            docs, recovered = _load_jats(root, path, options)
        else:
            raise LoadError(str(path), f"XML is neither PubMed/MEDLINE nor JATS (root element <{root.tag}>)")
    except LoadError:
        if error is not None:
            raise LoadError(str(path), f"malformed XML: {error}") from None
        raise
    if error is not None:
        docs = [d for d in docs if d.title and d.title != path.stem and d.full_text.strip()]
        if not docs:
            raise LoadError(str(path), f"malformed XML: {error}")
        docs[0].warnings.append(f"XML was truncated or malformed; recovered {recovered} ({error})")
    return docs


# --- streaming (a MEDLINE set of many articles) -----------------------------------------------

MEDLINE_SETS = {"PubmedArticleSet", "MedlineCitationSet"}
MEDLINE_ENTRIES = {"PubmedArticle", "MedlineCitation"}


def _root_tag(path: Path) -> str | None:
    """The root element's local name, read from the file's first element (None: not parseable)."""
    try:
        for _, el in etree.iterparse(str(path), events=("start",), **_PARSER_OPTIONS):
            return etree.QName(el).localname
    except (etree.XMLSyntaxError, OSError):
        return None
    return None


def stream_xml(path: Path, options: LoadOptions, warnings: list[str]) -> Iterator[Document]:
    """A MEDLINE set's articles one by one as the file is read: each is parsed, turned into a
    Document and dropped, so a file of a million citations is never held whole. Any other XML
    (JATS: one paper, a single citation, a file that does not parse) is read as ``load_xml`` does."""
    if _root_tag(path) not in MEDLINE_SETS:
        yield from load_xml(path, options)
        return
    entries = docs = 0
    context = etree.iterparse(str(path), events=("end",), recover=True, **_PARSER_OPTIONS)
    root: etree._Element | None = None
    for _, el in context:
        parent = el.getparent()
        if parent is None or parent.getparent() is not None or not isinstance(el.tag, str):
            continue  # the root itself, or inside an entry
        root = parent
        if etree.QName(el).localname in MEDLINE_ENTRIES:
            entries += 1
            _strip_namespaces(el)
            doc = _medline_document(el, path)
            if doc is not None:
                docs += 1
                yield doc
        el.clear()
        while el.getprevious() is not None:  # what was read before this entry goes
            del root[0]
    errors = [e for e in context.error_log if e.level >= etree.ErrorLevels.ERROR]
    error = f"{errors[0].message.strip()}, line {errors[0].line}" if errors else None
    if not docs:
        if error is not None:
            raise LoadError(str(path), f"malformed XML: {error}")
        found = f"none of its {entries} articles has an abstract" if entries else "it holds no <PubmedArticle>"
        raise LoadError(str(path), f"no text in the PubMed/MEDLINE XML: {found}")
    if docs < entries:
        warnings.append(f"skipped {entries - docs} of {entries} articles without an abstract")
    if error is not None:
        warnings.append(f"XML was truncated or malformed; recovered {docs} articles ({error})")


SPECS = [
    LoaderSpec(
        name="pubmed",
        suffixes=(".xml", ".nxml"),
        load=load_xml,
        stream=stream_xml,
        description="PubMed/MEDLINE XML (title + abstract per article) and PMC JATS full text",
    )
]
