"""A complete plug-in with its own settings, as a third party would write one: a profile whose
extractor makes an entity of every capitalised word at least ``min_length`` letters long, read
from ``[plugins.longwords]``. Registering it takes one line in the registry's BUILTIN_PLUGINS (the
tests add ``"support.example_plugin"``) or an entry point; nothing else changes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from scholargraph.models import EntityRecord, Extraction
from scholargraph.plugins.base import ExtractorContext, Profile, plugin_settings


class LongWordsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_length: int = Field(4, ge=1, description="shortest word that becomes an entity")


class LongWordsExtractor:
    name = "longwords"
    uses_llm = False

    def __init__(self, settings: LongWordsSettings):
        self.min_length = settings.min_length

    async def extract(self, doc, chunks):
        return Extraction(entities=[EntityRecord(w.strip(".,"), "Concept", "", c.id) for c in chunks
                                    for w in c.text.split() if w[0].isupper() and len(w.strip(".,")) >= self.min_length])


def _make(ctx: ExtractorContext) -> LongWordsExtractor:
    return LongWordsExtractor(plugin_settings(ctx.settings, "longwords", LongWordsSettings))


PROFILE = Profile("longwords", "capitalised words as entities", _make, settings=LongWordsSettings)
