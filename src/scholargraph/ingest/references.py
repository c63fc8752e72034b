"""One reference-list entry (as the PDF, JATS, MEDLINE or JSON loaders give it: a string) ->
its identifiers, year and title, for the citation network (``graph/citations``).

Identifiers are read where present (``10.xxxx/...`` DOIs, ``pmid:``/``PMID`` numbers, which the
JATS and MEDLINE loaders append). The title is a best guess from the common layouts: quoted
(IEEE), after the year ("Authors. 2018. Title. Venue" in ACL, "Authors (2018). Title." in APA and
JATS), else unknown; matching never depends on it alone (see ``normalise_title``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
_PMID = re.compile(r"\bpmid\s*[:=]?\s*(\d{5,9})\b", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)[a-z]?(?!\d)")
_QUOTED = re.compile(r"[\"“”‘’']{1,2}([^\"“”]{12,300}?)[,.]?[\"“”’']{1,2}")
_AFTER_YEAR = re.compile(r"(?:\(\s*(?:19|20)\d\d[a-z]?\s*\)|(?<![\d(])(?:19|20)\d\d[a-z]?)[.,:]?\s+(.{12,400})")
_NON_WORD = re.compile(r"[^0-9a-z]+")


@dataclass
class ParsedReference:
    raw: str
    doi: str | None = None
    pmid: str | None = None
    year: int | None = None
    title: str | None = None


def normalise_doi(doi: str | None) -> str | None:
    if not doi:
        return None
    doi = doi.strip().lower().removeprefix("https://doi.org/").removeprefix("doi:").rstrip(".,;)]")
    return doi or None


def normalise_title(title: str | None) -> str:
    """Lower case, letters and digits only, single spaces: what titles are matched on."""
    if not title:
        return ""
    return " ".join(_NON_WORD.sub(" ", title.lower()).split())


def _title_after_year(text: str) -> str | None:
    for m in _AFTER_YEAR.finditer(text):
        rest = m.group(1)
        end = re.search(r"(?<=[A-Za-z0-9)\]?!])[.?!](?=\s|$)", rest)
        title = rest[: end.start() + (1 if rest[end.start()] in "?!" else 0)] if end else rest
        title = title.strip(" .,;:")
        if len(title.split()) >= 3 and not re.match(r"(?i)(in|proceedings|journal|arxiv|pp?\.)\b", title):
            return title
    return None


def parse_reference(raw: str) -> ParsedReference:
    text = " ".join(raw.split())
    ref = ParsedReference(text)
    if m := _DOI.search(text):
        ref.doi = normalise_doi(m.group(1))
    if m := _PMID.search(text):
        ref.pmid = m.group(1)
    years = [int(y) for y in _YEAR.findall(text)]
    ref.year = years[0] if years else None
    quoted = _QUOTED.search(text)
    if quoted and len(quoted.group(1).split()) >= 3:
        ref.title = quoted.group(1).strip(" ,.")
    else:
        ref.title = _title_after_year(text)
    return ref
