"""Extraction profiles: one module each, chosen by ``extraction.profile``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..config import Settings
from ..errors import ConfigError
from ..models import Chunk, Document, Extraction

if TYPE_CHECKING:
    from ..llm.client import LLMClient


class Extractor(Protocol):
    name: str
    uses_llm: bool

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction: ...


class NoExtraction:
    """Chunks and vectors only (naive RAG); no graph."""

    name = "none"
    uses_llm = False

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        return Extraction()


class OfflineProfile:
    """Draft graph without an LLM: terms, acronyms, co-occurrence, keyphrases (extract.offline)."""

    name = "offline"
    uses_llm = False

    def __init__(self, entity_types: list[str]):
        from .offline import OfflineExtractor

        self._extractor = OfflineExtractor(entity_types=entity_types)

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        return self._extractor.extract_document([(c.id, c.text) for c in chunks])


def resolve_profile(settings: Settings) -> str:
    """``auto`` = academic when an LLM is configured, else offline."""
    profile = settings.extraction.profile
    if profile == "auto":
        return "academic" if settings.llm.configured else "offline"
    if profile in {"academic", "fastbio"} and not settings.llm.configured:
        raise ConfigError(
            f"extraction.profile={profile!r} needs an LLM: set llm.base_url and llm.model "
            "(e.g. --llm-url http://localhost:11434/v1 --llm-model qwen2.5:7b), or use --profile offline"
        )
    return profile


def make_extractor(profile: str, settings: Settings, llm: LLMClient | None, embed=None) -> Extractor:
    """``embed`` (async texts -> vectors) is used by profiles that retrieve inside a paper (fastbio)."""
    from .types import entity_types

    types = entity_types(settings.extraction.entity_types)
    if profile == "none":
        return NoExtraction()
    if profile == "offline":
        return OfflineProfile(types)
    if profile == "academic":
        from .academic import AcademicExtractor

        assert llm is not None
        return AcademicExtractor(llm, settings.extraction, types)
    if profile == "fastbio":
        from .fastbio import FastBioExtractor

        assert llm is not None
        dictionary = None
        if settings.extraction.bio_dictionary:
            from .bio_normalise import load_dictionary

            dictionary = load_dictionary(settings.extraction.bio_dictionary)
        return FastBioExtractor(llm, settings, embed=embed, dictionary=dictionary)
    raise ConfigError(f"extraction.profile: unknown profile {profile!r}")
