"""fastbio profile (seed 003 §2.4, §3.1): a biomedical graph in two stages per paper.

1. **Draft** -- one LLM call per paper on its abstract (purpose ``extract``): typed entities
   (``extraction.entity_types``; the default "paper" preset becomes "biomedical") and directed
   relations typed by ``extraction.relation_types`` (default ``BIO_RELATION_TYPES``), each with a
   one-sentence description (``.draft.draft_schema``). Genes are named
   by HGNC symbol and diseases by MeSH heading, the surface form kept as alias; an optional
   dictionary (``.normalise``) is applied first. The draft asks for no confidence: an edge's
   confidence is its weight from its nodes' weights (seed 003 §2.4, ``graph.weights``); one a
   model writes all the same is kept on the relation record.
2. **Refine** -- for each relation, the main-text paragraphs of the *same* paper most similar
   to "the relationship between SOURCE and TARGET" + its draft (cosine >= ``refine_threshold``,
   at most ``refine_paragraphs``, else the single best paragraph) go into one short call
   (purpose ``refine``) that rewrites the description. Papers without main text keep the draft.

Failure isolation: a draft call that fails after its retries fails only its paper (the pipeline
marks it FAILED; a rerun retries it); unusable draft output is recorded as a ChunkFailure and the
paper is indexed without a graph. A refine call that fails or answers unusably keeps that
relation's draft description and is recorded; the other relations are unaffected. An unreachable
server stops the run (LLMUnavailableError propagates).

Similarity for stage 2: the ``embed`` callable given to the constructor (the workspace embedder's
``embed``); without one, lexical overlap of entity names and draft terms with each paragraph.

This module is the entry point (``FastBioExtractor``: set-up, cost estimate, the two stages in
order); stage 1 lives in ``.draft``, stage 2 in ``.refine``, and
their public names are re-exported here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from ...extract.types import BIO_RELATION_TYPES
from ...ingest.chunking import layout
from ...models import Chunk, Document, Extraction, Usage
from ...plugins.base import plugin_settings
from ...prompts import load_prompt
from .draft import (
    DRAFT_SCHEMA,
    OTHER_TYPE,
    RELATION_TYPE_HINTS,
    REPAIR_NOTE,
    DraftStage,
    bio_entity_types,
    map_relation_type,
)
from .normalise import BioDictionary, dictionary_from_settings, normalise_extraction
from .refine import (
    DEFAULT_REFINE_PARAGRAPHS,
    DEFAULT_REFINE_THRESHOLD,
    MAX_DESCRIPTION_CHARS,
    MAX_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    NON_MAIN_KINDS,
    Passage,
    RefineStage,
    RefineTarget,
    chunk_at,
    clean_refined,
    main_passages,
    terms,
)
from .settings import FastBioSettings

Embed = Callable[[Sequence[str]], Awaitable[np.ndarray]]


class FastBioExtractor(DraftStage, RefineStage):
    """``FastBioExtractor(llm, settings, embed=None, dictionary=None)``; ``settings`` is the whole Settings."""

    name = "fastbio"
    uses_llm = True

    def __init__(self, llm, settings, embed: Embed | None = None, *, dictionary: BioDictionary | None = None):
        self.llm = llm
        ext = settings.extraction
        self.settings = settings
        self.entity_types = bio_entity_types(ext.entity_types)
        self.relation_types = list(ext.relation_types or BIO_RELATION_TYPES)
        self.parse_types = self.entity_types + ([OTHER_TYPE] if OTHER_TYPE not in self.entity_types else [])
        own = plugin_settings(settings, "fastbio", FastBioSettings)
        self.threshold = own.refine_threshold
        self.max_paragraphs = own.refine_paragraphs
        self.max_concurrency = int(getattr(ext, "max_chunk_concurrency", 0) or 0)
        self.dictionary = dictionary if dictionary is not None else dictionary_from_settings(settings)
        self.embed = embed
        self.similarity = "embedding" if embed is not None else "lexical"
        self.draft_prompt = load_prompt("fastbio_draft", __package__)
        self.refine_prompt = load_prompt("fastbio_refine", __package__)
        self._draft_system = self.draft_prompt.system.format(
            types=", ".join(self.entity_types), relation_types=", ".join(self.relation_types))
        self._refine_system = self.refine_prompt.system
        self.notes: list[str] = []
        if embed is None:
            self.notes.append("fastbio: no embedder given; main-text paragraphs are matched lexically "
                              "(entity names and draft terms)")

    # -- dry run ------------------------------------------------------------------------------

    def estimate(self, chunks: list[Chunk], count) -> dict[str, Usage]:
        """Rough cost of one paper: the draft prompt is counted exactly; relations are assumed at one
        per ~50 abstract tokens (2-10), each ~60 output tokens; each refine call at the prompt plus
        two paragraphs (~200 tokens each; at most ``refine_paragraphs``) and ~70 output tokens."""
        if not chunks:
            return {}
        abstract = [c for c in chunks if c.section and "abstract" in c.section.casefold()] or chunks[:1]
        body = [c for c in chunks if c not in abstract]
        abstract_text = " ".join(c.text for c in abstract)
        user = count(self.draft_prompt.user.format(title=chunks[0].header.removeprefix("Paper: ").split("\n")[0],
                                                   abstract=abstract_text))
        n_rel = max(2, min(10, count(abstract_text) // 50))
        out = {"extract": Usage(1, 0, count(self._draft_system) + user, 40 + 60 * n_rel, 1)}
        if body:
            body_tokens = sum(c.tokens for c in body)
            passage = min(body_tokens, 200 * min(2, self.max_paragraphs))
            prompt = count(self._refine_system) + 60 + passage
            out["refine"] = Usage(n_rel, 0, n_rel * prompt, n_rel * 70, n_rel)
        return out

    # -- extraction ---------------------------------------------------------------------------

    def _abstract(self, doc: Document, chunks: list[Chunk]) -> tuple[str, str, int]:
        """(abstract text, chunk id it is attributed to, offset after which the main text starts)."""
        full_text, placed = layout(doc)
        sections = [p for p in placed if p.section.kind == "abstract" and p.section.text.strip()]
        default = chunks[0].id if chunks else ""
        if sections:
            text = "\n\n".join(p.section.text.strip() for p in sections)
            return text, chunk_at(chunks, sections[0].text_start, default), 0
        if doc.abstract.strip():
            return doc.abstract.strip(), default, 0
        # no abstract: the first chunk stands in for it, the rest of the paper is the main text
        first = chunks[0] if chunks else None
        if first is None:
            return "", default, 0
        return first.text, first.id, first.char_end or 0

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        abstract, chunk_id, main_from = self._abstract(doc, chunks)
        if not abstract.strip():
            return Extraction()
        found = await self._draft(doc, abstract, chunk_id)
        normalise_extraction(found, self.dictionary, self.entity_types)
        for e in found.entities:
            if e.type == OTHER_TYPE and OTHER_TYPE not in self.entity_types:
                e.type = ""
        passages = main_passages(doc, chunks, main_from) if found.relations else []
        if passages:
            found.failures += await self._refine_all(doc, found, passages)
        return found

    async def _chat(self, messages: list[dict], purpose: str, doc_id: str, schema: dict | None = None, parse=None):
        """``parse`` validates the reply before it is cached (see ``LLMClient.chat``)."""
        kwargs: dict[str, Any] = {"purpose": purpose, "document_id": doc_id, "parse": parse}
        if schema is not None:
            kwargs.update(schema=schema, schema_name="biomedical_graph")
        return await self.llm.chat(messages, **kwargs)


__all__ = ["DEFAULT_REFINE_PARAGRAPHS", "DEFAULT_REFINE_THRESHOLD", "DRAFT_SCHEMA", "MAX_DESCRIPTION_CHARS",
           "MAX_PASSAGE_CHARS", "MIN_PASSAGE_CHARS", "NON_MAIN_KINDS", "OTHER_TYPE", "RELATION_TYPE_HINTS",
           "REPAIR_NOTE", "Embed", "FastBioExtractor", "Passage", "RefineTarget", "bio_entity_types", "clean_refined",
           "main_passages", "map_relation_type", "terms"]
