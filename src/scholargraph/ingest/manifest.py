"""Offline metadata for citations: a CSV or BibTeX manifest mapping files to DOI, authors, year,
venue, title and id. Keys are file names (or stems); no online lookups.

CSV columns: ``file`` (or ``filename``/``path``), and any of ``id, doi, title, authors, year,
venue`` (``journal``/``booktitle`` accepted); authors separated by ``;`` or `` and ``.
BibTeX: entries are matched by their ``file`` field (as Zotero/JabRef export it) or by their
citation key equal to the file stem.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..errors import LoadError
from ..models import Document
from .identity import paper_id

FIELDS = ("id", "doi", "title", "authors", "year", "venue")
_ALIASES = {"journal": "venue", "booktitle": "venue", "author": "authors", "filename": "file", "path": "file"}


def read_manifest(path: Path) -> dict[str, dict]:
    if not path.is_file():
        raise LoadError(str(path), "manifest not found")
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    entries = _read_bibtex(text) if path.suffix.lower() in {".bib", ".bibtex"} else _read_csv(text, path)
    out: dict[str, dict] = {}
    for entry in entries:
        name = Path(str(entry.pop("file", "")).split(":")[0]).name
        if name:
            out[name] = entry
            out.setdefault(Path(name).stem, entry)
    return out


def _read_csv(text: str, path: Path) -> list[dict]:
    reader = csv.DictReader(text.splitlines())
    cols = {(c or "").strip().lower(): c for c in reader.fieldnames or []}
    if not ({"file", "filename", "path"} & set(cols)):
        raise LoadError(str(path), f"manifest needs a 'file' column; found {', '.join(cols) or 'none'}")
    rows = []
    for row in reader:
        entry = {}
        for low, original in cols.items():
            key = _ALIASES.get(low, low)
            value = (row.get(original) or "").strip()
            if value and (key in FIELDS or key == "file"):
                entry[key] = value
        rows.append(entry)
    return rows


_ENTRY = re.compile(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", re.MULTILINE)
_FIELD = re.compile(r"(\w+)\s*=\s*(\{(?:[^{}]|\{[^{}]*\})*\}|\"[^\"]*\"|\d+)\s*,?", re.DOTALL)


def _read_bibtex(text: str) -> list[dict]:
    entries = []
    starts = list(_ENTRY.finditer(text))
    for i, m in enumerate(starts):
        body = text[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        entry: dict = {"id": None}
        for f in _FIELD.finditer(body):
            key = _ALIASES.get(f.group(1).lower(), f.group(1).lower())
            value = " ".join(f.group(2).strip('{}"').replace("{", "").replace("}", "").split())
            if key in FIELDS or key == "file":
                entry[key] = value
        entry.setdefault("file", m.group(2))
        entry["id"] = entry.get("doi") or None
        entries.append({k: v for k, v in entry.items() if v})
    return entries


def apply_manifest(doc: Document, source: Path, manifest: dict[str, dict]) -> bool:
    """Complete/override ``doc``'s metadata from the manifest entry of its file; True if one applied."""
    entry = manifest.get(source.name) or manifest.get(source.stem)
    if not entry:
        return False
    if entry.get("title"):
        doc.title = entry["title"]
    if entry.get("authors"):
        doc.authors = [a.strip() for a in re.split(r";| and ", entry["authors"]) if a.strip()]
    if entry.get("year"):
        match = re.search(r"\d{4}", str(entry["year"]))
        if match:
            doc.year = int(match.group(0))
        else:
            doc.warnings.append(f"manifest: year {entry['year']!r} is not a year; ignored")
    if entry.get("venue"):
        doc.venue = entry["venue"]
    if entry.get("doi"):
        doc.doi = entry["doi"]
    given = paper_id(entry.get("id") or entry.get("doi"))
    if given:
        doc.id = given
    return True
