"""The offline profile: a draft graph without an LLM -- terms, acronyms, co-occurrence relations
and keyphrases (:mod:`.extractor`). Instant, deterministic, honest about being a
draft."""

from __future__ import annotations

from ...extract.types import entity_types
from ...models import Chunk, Document, Extraction
from ...plugins.base import ExtractorContext, Profile
from .extractor import OfflineExtractor


class OfflineProfile:
    name = "offline"
    uses_llm = False

    def __init__(self, types: list[str]):
        self._extractor = OfflineExtractor(entity_types=types)

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        return self._extractor.extract_document([(c.id, c.text) for c in chunks])


def _make(ctx: ExtractorContext) -> OfflineProfile:
    return OfflineProfile(entity_types(ctx.settings.extraction.entity_types))


PROFILE = Profile("offline", "draft graph without an LLM: terms, acronyms, co-occurrence, keyphrases", _make)
