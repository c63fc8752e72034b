"""The paper sets of the LightRAG comparison: the same plain text for both systems (LightRAG
indexes the .txt files; scholargraph the same files, or the source CSV for its fastbio profile)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import DEV
from scholargraph.ingest.registry import load_file


@dataclass
class PaperSet:
    name: str
    texts: list[Path]  # one plain-text file per paper: what LightRAG indexes
    ours: list[Path]  # what scholargraph inserts (the same files, or the source CSV for fastbio)
    profiles: list[str]  # our profiles compared on this set
    source: str
    ours_by_profile: dict[str, list[Path]] = field(default_factory=dict)

    def inputs_for(self, profile: str) -> list[Path]:
        return self.ours_by_profile.get(profile, self.ours)


def _write(dirpath: Path, stem: str, title: str, body: str) -> Path:
    path = dirpath / f"{stem}.txt"
    path.write_text(f"{title.strip()}\n\n{body.strip()}\n" if title.strip() else f"{body.strip()}\n", encoding="utf-8")
    return path


def askg_set(tmp: Path) -> PaperSet:
    out = tmp / "askg"
    out.mkdir()
    texts = []
    for src in sorted((DEV / "askg" / "papers").glob("*.json")):
        doc = load_file(src)[0]
        texts.append(_write(out, src.stem, doc.title, doc.full_text))
    return PaperSet("askg", texts, texts, ["academic"], "6 ASKG papers (../shared/data/dev/askg/papers/*.json) as text")


def fastbm_set(tmp: Path, csv: Path) -> PaperSet:
    import csv as csvmod

    out = tmp / "fastbm"
    out.mkdir()
    texts = []
    csvmod.field_size_limit(1 << 30)
    with csv.open(newline="", encoding="utf-8") as fh:
        for i, row in enumerate(csvmod.DictReader(fh)):
            body = "\n\n".join(x.strip() for x in (row.get("abstract") or "", row.get("main_text") or "") if x and x.strip())
            texts.append(_write(out, f"{i:02d}_{row.get('paper_id') or i}", row.get("articletitle") or "", body))
    # our fastbio profile reads the CSV (abstract / main text columns); the academic one the texts
    return PaperSet("fastbm", texts, texts, ["fastbio", "academic"], f"fastbm {csv.name}: title + abstract + main text per row",
                    ours_by_profile={"fastbio": [csv]})


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
            texts.append(_write(out, f"{i:03d}_{j:03d}_{src.stem}", doc.title, doc.full_text))
    return PaperSet("papers", texts, texts, ["academic", "fastbio"], f"{len(files)} given files, {len(texts)} papers")
