"""The localkg extractor: one paper -> its local knowledge graph, in the five stages of seed 004 §4.

    Stage 1 mentions (.mentions) -> 2 entity linking (.linking) -> 3 local relations
    (.local_relations) -> 4 paper-level relations (.global_relations) -> 5 taxonomy and predicate
    resolution (.taxonomy) -> records (.records)

Each stage's calls are counted under their own purpose (``lkg_mentions`` ... ``lkg_taxonomy``), so
``scholargraph stats --cost`` shows calls and tokens per paper and per stage, and every answer is
cached (a re-run, or a re-index after an interruption, costs nothing for what was answered).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from ...models import Chunk, Document, Extraction, Usage
from .calls import StageContext
from .document import read_paper
from .estimate import estimate_paper
from .global_relations import GlobalStage
from .linking import LinkingStage
from .local_relations import RelationStage
from .mentions import MentionStage
from .records import to_extraction
from .settings import LocalKGSettings
from .taxonomy import PredicateStage, TaxonomyStage


class LocalKGExtractor:
    name = "localkg"
    uses_llm = True

    def __init__(self, llm, settings: LocalKGSettings, embed: Callable[[Sequence[str]], Awaitable[np.ndarray]]):
        self.llm = llm
        self.settings = settings
        self.embed = embed

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        paper = read_paper(doc, chunks)
        if not paper.sentences:
            return Extraction()
        ctx = StageContext(self.llm, self.embed, self.settings, doc.id)
        mentions = await MentionStage(ctx, paper).run()                          # stage 1
        entities = await LinkingStage(ctx, paper).run(mentions)                  # stage 2
        local = await RelationStage(ctx, paper, entities).run()                  # stage 3
        global_stage = GlobalStage(ctx, paper, entities, local)
        paper_level = await global_stage.run()                                   # stage 4
        triples = [*local, *paper_level]
        broader = await TaxonomyStage(ctx, paper, entities).run() if self.settings.taxonomy else []  # stage 5
        await PredicateStage(ctx, paper, entities).run(triples)
        return to_extraction(paper, entities, triples, broader, ctx.failures, global_stage.relevance)

    def estimate_document(self, doc: Document, chunks: list[Chunk], count: Callable[[str], int]) -> dict[str, Usage]:
        """Calls and tokens a paper would cost (``index --dry-run``): see :mod:`.estimate`."""
        return estimate_paper(read_paper(doc, chunks), self.settings, count)
