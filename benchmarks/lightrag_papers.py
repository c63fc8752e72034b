"""The paper sets of the LightRAG comparison.

scholargraph indexes each paper in its native format (the ASKG sectioned JSON, the fastbmRAG CSV,
PDF, JATS ...), as a user would. LightRAG indexes plain text only, so it gets the same content as
one text file per paper: the title, then each section's heading and text (what our loader read
from the native file, laid out as our chunker lays it out)."""

from __future__ import annotations

import csv as csvmod
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import DEV
from scholargraph.ingest.chunking import layout
from scholargraph.ingest.registry import load_file
from scholargraph.models import Document


@dataclass
class PaperSet:
    name: str
    texts: list[Path]  # one plain-text file per paper: what LightRAG indexes
    ours: list[Path]  # what scholargraph inserts: the native files
    profiles: list[str]  # our profiles compared on this set
    source: str
    ours_by_profile: dict[str, list[Path]] = field(default_factory=dict)

    def inputs_for(self, profile: str) -> list[Path]:
        return self.ours_by_profile.get(profile, self.ours)


def _write(dirpath: Path, stem: str, title: str, body: str) -> Path:
    path = dirpath / f"{stem}.txt"
    path.write_text(f"{title.strip()}\n\n{body.strip()}\n" if title.strip() else f"{body.strip()}\n", encoding="utf-8")
    return path


def _as_text(dirpath: Path, stem: str, doc: Document) -> Path:
    return _write(dirpath, stem, doc.title, layout(doc)[0])


def askg_set(tmp: Path) -> PaperSet:
    out = tmp / "askg"
    out.mkdir()
    natives = sorted((DEV / "askg" / "papers").glob("*.json"))
    texts = [_as_text(out, src.stem, load_file(src)[0]) for src in natives]
    return PaperSet("askg", texts, natives, ["academic"],
                    "6 ASKG papers (../shared/data/dev/askg/papers/*.json): scholargraph reads the sectioned JSON, "
                    "LightRAG the same sections as text")


def fastbm_set(tmp: Path, csv: Path) -> PaperSet:
    out = tmp / "fastbm"
    out.mkdir()
    texts = []
    csvmod.field_size_limit(1 << 30)
    with csv.open(newline="", encoding="utf-8") as fh:
        for i, row in enumerate(csvmod.DictReader(fh)):
            body = "\n\n".join(x.strip() for x in (row.get("abstract") or "", row.get("main_text") or "") if x and x.strip())
            texts.append(_write(out, f"{i:02d}_{row.get('paper_id') or i}", row.get("articletitle") or "", body))
    # both our profiles read the CSV itself (fastbmRAG's input); LightRAG title + abstract + main text per row
    return PaperSet("fastbm", texts, [csv], ["fastbio", "academic"],
                    f"fastbm {csv.name}: scholargraph reads the CSV, LightRAG title + abstract + main text per row")


def custom_set(tmp: Path, given: list[Path]) -> PaperSet:
    out = tmp / "papers"
    out.mkdir()
    files: list[Path] = []
    for p in given:
        files += sorted(x for x in p.iterdir() if x.is_file()) if p.is_dir() else [p]
    texts = []
    for i, src in enumerate(files):
        if src.suffix.lower() in {".txt", ".md"}:
            texts.append(Path(shutil.copy(src, out / f"{i:03d}_{src.stem}.txt")))
            continue
        for j, doc in enumerate(load_file(src)):
            texts.append(_as_text(out, f"{i:03d}_{j:03d}_{src.stem}", doc))
    return PaperSet("papers", texts, files, ["academic", "fastbio"],
                    f"{len(files)} given files ({len(texts)} papers): scholargraph reads them natively, LightRAG as text")
