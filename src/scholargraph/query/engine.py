"""Query engine: mode -> numbered sources -> answer (LLM with verified citations, or extractive).

Modes: ``naive`` (chunk vectors only), ``local`` (matched entities + one-hop neighbourhood),
``subgraph`` (thesis 000 §3.3.2), ``global`` (§3.3.3) and ``hybrid`` (§3.4: subgraph + global,
the default). Graph modes first retrieve clues and dual-level keywords (§3.3.1, one LLM call
when an LLM is configured, offline keywords otherwise), then rank entities, relations and text
units (:mod:`.graph_modes`) and number them as sources within per-part budgets (:mod:`.fusion`).

Costs: ``Retrieval.usage`` holds the keyword call, ``Answer.usage`` the keyword and answer
calls; ``timings`` has ``retrieval_s`` (all of retrieval), ``keywords_llm_s`` (the keyword
call inside it), ``retrieval_excl_llm_s`` and, for answers, ``generation_s``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..config import Settings
from ..errors import ConfigError
from ..graph.memory import GraphCache
from ..ingest.tokenizer import TextTokenizer
from ..llm.embeddings import Embedder
from ..models import Answer, Source
from ..prompts import load_prompt
from ..store.base import Store
from .citations import StreamingCitationFilter, verify_citations
from .extractive import extractive_answer
from .fusion import Budgets, build_sources, fuse, with_passages
from .graph_modes import GraphParams, Part, QueryVectors, global_retrieve, local_retrieve, subgraph_retrieve
from .keywords import Keywords, find_clues, make_keywords, query_terms, question_keyword
from .retrieval import Retrieval, merge_usage, truncate_sources
from .sources import chunk_sources, format_context

MODES = ("naive", "local", "subgraph", "global", "hybrid")
BIO_MODE = "bio"  # query/bio.py (its own retrieval and answer); dispatched here, imported lazily


class QueryEngine:
    def __init__(self, store: Store, settings: Settings, embedder: Embedder, tokenizer: TextTokenizer, llm=None,
                 graphs: GraphCache | None = None):
        self.store = store
        self.graphs = graphs or GraphCache()  # give the knowledge base's to reuse the graph across engines
        self.settings = settings
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.llm = llm

    async def retrieve(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                       clues: bool = True, subgraph: bool = True) -> Retrieval:
        """Numbered sources and context for ``question``.

        ``clues=False`` skips clue retrieval (thesis ablation "-clues": keywords from the question
        alone); ``subgraph=False`` replaces the shortest-path subgraph by one-hop neighbours of the
        matched entities (ablation "-subgraph"). Both only affect the graph modes."""
        mode = mode or self.settings.query.mode
        top_k = top_k or self.settings.query.top_k
        if not question.strip():
            raise ConfigError("the question is empty")
        if mode == BIO_MODE:
            from .bio import bio_retrieve

            return await bio_retrieve(self.store, self.settings, self.embedder, self.llm, question)
        if mode not in MODES:
            raise ConfigError(f"query mode {mode!r} is not available; available: {', '.join(MODES + (BIO_MODE,))}")
        t0 = time.perf_counter()
        if mode == "naive":
            sources = await self._naive(question, top_k)
            sources = truncate_sources(sources, self.settings.query.max_context_tokens, self.tokenizer.count)
            return Retrieval(question, mode, sources, format_context(sources), {"retrieval_s": time.perf_counter() - t0})
        retrieval = await self._graph(question, mode, top_k, clues, subgraph)
        elapsed = time.perf_counter() - t0
        retrieval.timings["retrieval_s"] = elapsed
        retrieval.timings["retrieval_excl_llm_s"] = elapsed - retrieval.timings.get("keywords_llm_s", 0.0)
        return retrieval

    async def _naive(self, question: str, top_k: int) -> list[Source]:
        if self.store.count("chunks") == 0:
            return []
        query = await self.embedder.embed_one(question)
        hits = self.store.vector_index("chunk", self.embedder.dim).search(query, top_k)
        chunks = self.store.get_chunks(i for i, _ in hits)
        return chunk_sources(self.store, [(chunks[i], s) for i, s in hits if i in chunks])

    async def answer(self, question: str, mode: str | None = None, top_k: int | None = None,
                     history: list[tuple[str, str]] | None = None, on_text: Callable[[str], None] | None = None, *,
                     clues: bool = True, subgraph: bool = True) -> Answer:
        if (mode or self.settings.query.mode) == BIO_MODE:
            from .bio import bio_answer

            return await bio_answer(self.store, self.settings, self.embedder, self.llm, question, on_text=on_text)
        retrieval = await self.retrieve(question, mode, top_k, clues=clues, subgraph=subgraph)
        answer = Answer(question, "", retrieval.mode, retrieval.sources, timings=dict(retrieval.timings),
                        context=retrieval.context, notes=list(retrieval.notes), usage=merge_usage(retrieval.usage),
                        keywords=retrieval.keywords)
        if not retrieval.sources:
            answer.text = "Nothing is indexed that matches the question (is the workspace empty? see `scholargraph status`)."
            return answer
        t0 = time.perf_counter()
        if self.llm is None:
            # chunks carry the passages; entity/relation lines only when no chunk was retrieved
            passages = [s for s in retrieval.sources if s.kind == "chunk"] or retrieval.sources
            answer.text, answer.cited = extractive_answer(question, passages)
            answer.extractive = True
            if on_text:
                on_text(answer.text)
        else:
            await self._generate(answer, history or [], on_text)
        answer.timings["generation_s"] = time.perf_counter() - t0
        return answer

    async def _generate(self, answer: Answer, history: list[tuple[str, str]], on_text) -> None:
        valid = {s.number for s in answer.sources}
        past = "".join(f"\nEarlier question: {q}\nEarlier answer: {a}\n" for q, a in history[-3:])
        language = f"in {self.settings.query.answer_language}" if self.settings.query.answer_language else "in the language of the question"
        messages = load_prompt("answer").messages(context=answer.context, question=answer.question, history=past,
                                                  language=language)
        before = self.llm.usage_snapshot()
        if on_text is None:
            result = await self.llm.chat(messages, purpose="answer")
            raw = result.text
        else:
            filt = StreamingCitationFilter(valid)
            pieces = []
            async for piece in self.llm.stream_chat(messages, purpose="answer"):
                pieces.append(piece)
                on_text(filt.feed(piece))
            on_text(filt.flush())
            raw = "".join(pieces)
        check = verify_citations(raw, valid)
        answer.text, answer.cited, answer.removed_citations = check.text.strip(), check.cited, check.removed
        if check.removed:
            answer.notes.append(f"removed citation(s) {check.removed}: not among the {len(valid)} sources given to the model")
        answer.usage = merge_usage(answer.usage, self.llm.usage_since(before))

    # -- graph modes ----------------------------------------------------------------------

    def _params(self, top_k: int) -> GraphParams:
        q = self.settings.query
        return GraphParams(top_k=top_k, node_threshold=q.node_threshold, nodes_per_keyword=q.nodes_per_keyword,
                           edge_threshold=q.edge_threshold, max_path_length=q.max_path_length)

    def _budgets(self) -> Budgets:
        q = self.settings.query
        total = q.max_context_tokens
        ent = q.entity_tokens if q.entity_tokens is not None else total // 5
        rel = q.relation_tokens if q.relation_tokens is not None else total // 4
        return Budgets(min(ent, total), min(rel, total), total)

    async def keywords(self, question: str, query_vec, clues: bool = True) -> Keywords:
        """Clue retrieval (eq. 3.2) then dual-level keywords (eq. 3.3; LLM when configured)."""
        q = self.settings.query
        found = find_clues(self.store, query_vec, q.clue_threshold, q.max_clues, self.embedder.dim) if clues else []
        return await make_keywords(question, found, self.llm)

    async def _graph(self, question: str, mode: str, top_k: int, clues: bool, subgraph: bool) -> Retrieval:
        timings: dict[str, float] = {}
        retrieval = Retrieval(question, mode, [], "", timings)
        if self.store.count("chunks") == 0:
            return retrieval
        dim = self.embedder.dim
        t = time.perf_counter()
        # one embedding call for the question and its own terms (the offline low-level keywords)
        terms = query_terms(question)
        first = await self.embedder.embed([question, *terms])
        query_vec = first[0]
        known = {question_keyword(question): query_vec, **dict(zip(terms, first[1:], strict=True))}
        kw = await self.keywords(question, query_vec, clues)
        timings["keywords_s"] = time.perf_counter() - t
        timings["keywords_llm_s"] = kw.llm_seconds
        retrieval.keywords = kw.to_json()
        retrieval.usage = merge_usage(kw.usage)
        retrieval.notes += kw.notes
        if not clues:
            retrieval.notes.append("clue retrieval disabled (-clues): keywords come from the question alone")

        t = time.perf_counter()
        if kw.clues:  # clue vectors are already in the keyword index
            index = self.store.vector_index("keyword", dim)
            for c in kw.clues:
                if c.text not in known and (v := index.get(c.id)) is not None:
                    known[c.text] = v
        missing = [x for x in dict.fromkeys(kw.low_level + kw.high_level) if x not in known]
        if missing:
            known.update(zip(missing, await self.embedder.embed(missing), strict=True))

        def stack(texts: list[str]) -> np.ndarray:
            return np.stack([known[x] for x in texts]).astype(np.float32) if texts else np.zeros((0, dim), np.float32)

        qv = QueryVectors(query_vec, kw.low_level, stack(kw.low_level), kw.high_level, stack(kw.high_level))
        timings["embed_keywords_s"] = time.perf_counter() - t

        t = time.perf_counter()
        before = self.graphs.current
        graph = self.graphs.get(self.store)
        timings["graph_s"] = time.perf_counter() - t  # version check, plus the load when the graph changed
        if graph is not before:
            retrieval.details["graph_loaded"] = {"edges": graph.edge_count, "seconds": round(graph.load_seconds, 4)}

        t = time.perf_counter()
        params = self._params(top_k)
        local_fn = subgraph_retrieve if subgraph else local_retrieve
        if mode in ("subgraph", "hybrid") and not subgraph:
            retrieval.notes.append("subgraph disabled (-subgraph): one-hop neighbours of the matched entities "
                                   "replace the shortest-path subgraph")
        if mode == "local":
            part = local_retrieve(self.store, graph, qv, params, dim)
        elif mode == "subgraph":
            part = local_fn(self.store, graph, qv, params, dim)
        elif mode == "global":
            part = global_retrieve(self.store, graph, qv, params, dim)
        else:
            part = fuse(local_fn(self.store, graph, qv, params, dim), global_retrieve(self.store, graph, qv, params, dim),
                        params.max_items, top_k)
            if self.settings.query.hybrid_passages:
                part = with_passages(part, self.store.vector_index("chunk", dim).search(query_vec, top_k), top_k)
        if not part.chunks and not part.entities and not part.relations:
            retrieval.notes.append("no entity or relation of the graph matched the question's keywords; "
                                   "showing the passages most similar to the question instead")
            hits = self.store.vector_index("chunk", dim).search(query_vec, top_k)
            part = Part(mode, chunks=hits, details=part.details)
        retrieval.notes += part.notes
        retrieval.details.update(part.details)
        timings["search_s"] = time.perf_counter() - t

        t = time.perf_counter()
        retrieval.sources, retrieval.context = build_sources(self.store, part, self._budgets(), self.tokenizer.count)
        timings["context_s"] = time.perf_counter() - t
        return retrieval
