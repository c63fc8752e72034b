"""The extractor contract: a profile's extractor turns one document's chunks into an Extraction.

Profiles (which extractor, for which settings) are plug-ins: :mod:`scholargraph.profiles`."""

from __future__ import annotations

from typing import Protocol

from ..models import Chunk, Document, Extraction

__all__ = ["Extractor", "NoExtraction"]


class Extractor(Protocol):
    name: str
    uses_llm: bool

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction: ...


class NoExtraction:
    """Chunks and vectors only (naive RAG); no graph. The extractor of profile ``none``, and what a
    run that only maintains or deletes hands the pipeline."""

    name = "none"
    uses_llm = False

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        return Extraction()
