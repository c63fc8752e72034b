"""The localkg profile (paper2lkg, seed 004 §4): a detailed local knowledge graph per paper.

Five stages, one module each, each prompt a file in ``prompts/`` naming the seed section it
implements: mention extraction at section / paragraph / sentence level with named / general /
other classes (:mod:`.mentions`), entity linking by descriptions, embeddings and cliques
(:mod:`.linking`), local relation extraction (:mod:`.local_relations`), paper-level relations over
the shrunken paper (:mod:`.global_relations`), taxonomy and predicate resolution (:mod:`.taxonomy`).
Mentions and sentences are stored, so every triple traces back to the sentence it came from
(``scholargraph export``); the entities join the workspace graph through the usual name
resolution, so every query mode works over these papers too.
"""

from __future__ import annotations

from ...plugins.base import ExtractorContext, Profile, plugin_settings
from .calls import STAGES
from .extractor import LocalKGExtractor
from .settings import LocalKGSettings


def _make(ctx: ExtractorContext) -> LocalKGExtractor:
    return LocalKGExtractor(ctx.llm, plugin_settings(ctx.settings, "localkg", LocalKGSettings), ctx.embed)


PROFILE = Profile("localkg", "paper2lkg: per-paper local KG (mentions, entity linking, local and paper-level "
                  "relations, taxonomy, predicate resolution) with sentence provenance", _make, needs_llm=True,
                  llm_stages=tuple(STAGES.values()), settings=LocalKGSettings)
