"""Benchmark the PDF loader backends on the 6 dev PDFs (../shared/data/dev/pdfs).

    .venv/bin/python -m benchmarks.bench_pdf [--repeat 3] [--json-out benchmarks/results/pdf_parsing.json]

For each backend (pypdf; PyMuPDF when installed): pages/s over all PDFs (each pass parses every
PDF once; the median of ``--repeat`` passes), title exact matches against ``titles.json``
(casefold + whitespace normalised), and section-heading recall against the two companion
s2orc JSON files (distinct ``pdf_parse.body_text[].section`` names, case/number-insensitive;
a name that the s2orc parser merged from two consecutive headings matches their join).
A JSON object is printed to stdout and written to ``--json-out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import DEV, write_result
from scholargraph.ingest import pdf, pdf_pymupdf

DEFAULT_OUT = "benchmarks/results/pdf_parsing.json"
DEV_PDFS = DEV / "pdfs"
COMPANIONS = ("N18-3011", "2020.acl-main.207")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def heading_key(text: str) -> str:
    return " ".join(re.sub(r"[^a-z ]", " ", text.casefold()).split())


def heading_recall(headings: list[str], expected: set[str]) -> tuple[float, list[str]]:
    ours = [heading_key(h) for h in headings if heading_key(h)]
    found = set(ours) | {f"{a} {b}" for a, b in zip(ours, ours[1:], strict=False)}
    missed = sorted(e for e in expected if e not in found)
    return 1 - len(missed) / len(expected), missed


def expected_sections(stem: str) -> set[str]:
    companion = json.loads((DEV_PDFS / f"{stem}.json").read_text())
    return {heading_key(p["section"]) for p in companion["pdf_parse"]["body_text"]} - {""}


def bench_backend(backend: str, files: list[Path], titles: dict[str, str], repeat: int) -> dict[str, Any]:
    passes, docs = [], {}
    for _ in range(repeat):
        start = time.perf_counter()
        docs = {f.name: pdf.parse_pdf(f, backend) for f in files}
        passes.append(time.perf_counter() - start)
    pages = sum(d.metadata["pages"] for d in docs.values())
    median = statistics.median(passes)
    title_ok = {name: _norm(docs[name].title) == _norm(t) for name, t in titles.items()}
    recall = {}
    for stem in COMPANIONS:
        value, missed = heading_recall([s.heading for s in docs[f"{stem}.pdf"].sections], expected_sections(stem))
        recall[stem] = {"recall": round(value, 4), "missed": missed}
    return {
        "pages": pages,
        "seconds_per_pass": [round(p, 4) for p in passes],
        "median_seconds": round(median, 4),
        "pages_per_second": round(pages / median, 1),
        "title_matches": f"{sum(title_ok.values())}/{len(title_ok)}",
        "title_mismatches": {n: docs[n].title for n, ok in title_ok.items() if not ok},
        "section_recall": recall,
        "sections_per_pdf": {n: len(d.sections) for n, d in docs.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-out", default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not DEV_PDFS.exists():
        print(f"dev PDFs not found at {DEV_PDFS}", file=sys.stderr)
        return 2
    titles = json.loads((DEV_PDFS / "titles.json").read_text())
    files = [DEV_PDFS / name for name in sorted(titles)]
    backends = ["pypdf"] + (["pymupdf"] if pdf_pymupdf.available() else [])
    for backend in backends:  # warm-up: imports and first-call costs are not parsing speed
        pdf.parse_pdf(files[0], backend)
    result = {
        "benchmark": "pdf_parsing",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "pdfs": len(files),
        "repeat": args.repeat,
        "backends": {b: bench_backend(b, files, titles, args.repeat) for b in backends},
    }
    write_result("pdf_parsing", result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
