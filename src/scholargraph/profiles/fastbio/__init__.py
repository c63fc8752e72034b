"""The fastbio profile (fastbmRAG, seed 003): two-stage extraction (draft graph from abstracts,
relations refined from the main text; :mod:`.extractor`), gene/disease name normalisation
(:mod:`.normalise`), the ``bio`` query mode (:mod:`.query`) and the fastbmRAG-compatible
``scholargraph fastbm`` command (:mod:`.cli`). Its prompts are in ``prompts/``."""

from __future__ import annotations

from ...plugins.base import ExtractorContext, Profile, plugin_settings
from .cli import add_fastbm_parser
from .extractor import FastBioExtractor
from .normalise import load_dictionary
from .query import BIO_MODE
from .settings import FastBioSettings


def _make(ctx: ExtractorContext) -> FastBioExtractor:
    path = plugin_settings(ctx.settings, "fastbio", FastBioSettings).dictionary
    return FastBioExtractor(ctx.llm, ctx.settings, embed=ctx.embed, dictionary=load_dictionary(path) if path else None)


PROFILE = Profile("fastbio", "fastbmRAG: draft graph from abstracts, relations refined from the main text; "
                  "bio query mode", _make, needs_llm=True, modes=(BIO_MODE,), add_cli=add_fastbm_parser,
                  settings=FastBioSettings)
