"""A three-paper workspace for the web app's API and browser tests, written for them (no
../shared): JSON papers with authors, years, venues, DOIs, sections and references that cite one
another, so every view (library, paper pages, citations, overview, communities) has something to
show on a fresh clone."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "web_corpus"


def paper_paths() -> list[Path]:
    return sorted(CORPUS.glob("*.json"))
