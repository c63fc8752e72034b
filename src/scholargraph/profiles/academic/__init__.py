"""The academic profile (thesis 000 §3.2, §4.3, §5.2): one LLM call per chunk for entities,
relations and content keywords, with gleaning (:mod:`.extractor`, prompts in ``prompts/``)."""

from __future__ import annotations

from ...extract.types import entity_types, relation_types
from ...plugins.base import ExtractorContext, Profile
from .extractor import AcademicExtractor


def _make(ctx: ExtractorContext) -> AcademicExtractor:
    ext = ctx.settings.extraction
    return AcademicExtractor(ctx.llm, ext, entity_types(ext.entity_types), relation_types(ext.entity_types,
                                                                                        ext.relation_types))


PROFILE = Profile("academic", "LLM extraction per chunk: entities, relations, content keywords (the default "
                  "with an LLM)", _make, needs_llm=True)
