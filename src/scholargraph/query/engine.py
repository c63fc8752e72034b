"""Query engine: mode -> numbered sources -> answer (LLM with verified citations, or extractive)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import Settings
from ..errors import ConfigError
from ..ingest.tokenizer import TextTokenizer
from ..llm.embeddings import Embedder
from ..models import Answer, Source, Usage
from ..prompts import load_prompt
from ..store.sqlite import SQLiteStore
from .citations import StreamingCitationFilter, verify_citations
from .extractive import extractive_answer
from .sources import chunk_sources, format_context

MODES = ("naive",)


@dataclass
class Retrieval:
    question: str
    mode: str
    sources: list[Source]
    context: str
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, Usage] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def truncate_sources(sources: list[Source], budget: int, count: Callable[[str], int]) -> list[Source]:
    kept, used = [], 0
    for s in sources:
        n = count(s.text)
        if kept and used + n > budget:
            break
        kept.append(s)
        used += n
    return kept


class QueryEngine:
    def __init__(self, store: SQLiteStore, settings: Settings, embedder: Embedder, tokenizer: TextTokenizer, llm=None):
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.llm = llm

    async def retrieve(self, question: str, mode: str | None = None, top_k: int | None = None) -> Retrieval:
        mode = mode or self.settings.query.mode
        top_k = top_k or self.settings.query.top_k
        if not question.strip():
            raise ConfigError("the question is empty")
        t0 = time.perf_counter()
        if mode != "naive":
            raise ConfigError(f"query mode {mode!r} is not available; available: {', '.join(MODES)}")
        sources = await self._naive(question, top_k)
        sources = truncate_sources(sources, self.settings.query.max_context_tokens, self.tokenizer.count)
        return Retrieval(question, mode, sources, format_context(sources), {"retrieval_s": time.perf_counter() - t0})

    async def _naive(self, question: str, top_k: int) -> list[Source]:
        if self.store.count("chunks") == 0:
            return []
        query = await self.embedder.embed_one(question)
        hits = self.store.vector_index("chunk", self.embedder.dim).search(query, top_k)
        chunks = self.store.get_chunks(i for i, _ in hits)
        return chunk_sources(self.store, [(chunks[i], s) for i, s in hits if i in chunks])

    async def answer(self, question: str, mode: str | None = None, top_k: int | None = None,
                     history: list[tuple[str, str]] | None = None, on_text: Callable[[str], None] | None = None) -> Answer:
        retrieval = await self.retrieve(question, mode, top_k)
        answer = Answer(question, "", retrieval.mode, retrieval.sources, timings=dict(retrieval.timings),
                        context=retrieval.context, notes=list(retrieval.notes))
        if not retrieval.sources:
            answer.text = "Nothing is indexed that matches the question (is the workspace empty? see `scholargraph status`)."
            return answer
        t0 = time.perf_counter()
        if self.llm is None:
            answer.text, answer.cited = extractive_answer(question, retrieval.sources)
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
        answer.usage = self.llm.usage_since(before)
