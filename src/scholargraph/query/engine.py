"""Query engine: the mode a user names -> numbered sources -> answer (LLM with verified citations,
or extractive).

Modes are plug-ins (:mod:`scholargraph.plugins.registry`): the engine looks the mode up by name,
checks the common switches against what it can honour, and lets it retrieve. A mode that writes
its own answer (``QueryMode.answer``) does so; for the others the engine answers from the
numbered context, with the session's earlier turns. ``Answer.usage`` holds the retrieval's and the
answer's calls; ``timings`` add ``generation_s``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence

from ..config import Settings
from ..errors import ConfigError
from ..graph.memory import GraphCache
from ..ingest.tokenizer import TextTokenizer
from ..llm.embeddings import Embedder
from ..llm.rerank import Reranker
from ..models import Answer
from ..plugins.base import ABLATION_FLAGS, QueryContext, QueryMode, QueryRequest
from ..plugins.registry import get_mode
from ..prompts import load_prompt
from ..store.base import QueryStore
from .citations import CitationNumbers, StreamingCitationFilter, number_cited_sources, verify_citations
from .extractive import LABEL, LABEL_NO_STATEMENT, extractive_answer
from .grounding import LOOP_REPEATS, attribute_uncited, markers, notes_for, reground, repeated_sentences
from .retrieval import Retrieval, history_text, merge_usage
from .trace import build_trace

__all__ = ["QueryEngine"]


class QueryEngine:
    def __init__(self, store: QueryStore, settings: Settings, embedder: Embedder, tokenizer: TextTokenizer, llm=None,
                 graphs: GraphCache | None = None, reranker: Reranker | None = None):
        self.store = store
        self.graphs = graphs or GraphCache()  # give the knowledge base's to reuse the graph across engines
        self.settings = settings
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.llm = llm
        self.context = QueryContext(store, settings, embedder, tokenizer, llm, self.graphs, reranker)

    def _mode(self, name: str | None, request: QueryRequest) -> QueryMode:
        if not request.question.strip():
            raise ConfigError("the question is empty")
        mode = get_mode(name or self.settings.query.mode)
        for key, flag in ABLATION_FLAGS.items():
            if key in mode.unsupported and not getattr(request, key):
                raise ConfigError(f"query mode {mode.name!r} cannot honour {flag}; drop it, or use a graph mode "
                                  "(local, subgraph, global, hybrid)")
        return mode

    async def retrieve(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                       clues: bool = True, subgraph: bool = True) -> Retrieval:
        """Numbered sources and context for ``question``.

        ``clues=False`` skips clue retrieval (thesis ablation "-clues": keywords from the question
        alone); ``subgraph=False`` replaces the shortest-path subgraph by one-hop neighbours of the
        matched entities (ablation "-subgraph"). Modes that use neither are unaffected."""
        request = QueryRequest(question, top_k, clues, subgraph)
        retrieval = await self._mode(mode, request).retrieve(self.context, request)
        retrieval.trace = build_trace(self.context.store, retrieval.mode, retrieval.details)
        return retrieval

    async def answer(self, question: str, mode: str | None = None, top_k: int | None = None,
                     history: Sequence[tuple[str, str]] | None = None, on_text: Callable[[str], None] | None = None, *,
                     clues: bool = True, subgraph: bool = True) -> Answer:
        numbers = CitationNumbers()  # streamed text is numbered as the final answer will be
        shown = (lambda piece: on_text(numbers.apply(piece))) if on_text else None
        request = QueryRequest(question, top_k, clues, subgraph, tuple(history or ()), shown)
        answer = await self._answer(self._mode(mode, request), request)
        answer.trace = build_trace(self.context.store, answer.mode, answer.trace)  # the mode's details, named
        return number_cited_sources(answer, numbers)

    async def _answer(self, impl: QueryMode, request: QueryRequest) -> Answer:
        """The answer in context numbers (verified citations); ``answer`` renumbers it."""
        question, on_text = request.question, request.on_text
        if impl.answer is not None:
            return await impl.answer(self.context, request)
        retrieval = await impl.retrieve(self.context, request)
        cut = set(retrieval.cut)  # the prompt holds only what fit the budget; the rest is reported
        answer = Answer(question, "", retrieval.mode, [s for s in retrieval.sources if s.number not in cut],
                        timings=dict(retrieval.timings), context=retrieval.context, notes=list(retrieval.notes),
                        usage=merge_usage(retrieval.usage), keywords=retrieval.keywords,
                        cut=[s for s in retrieval.sources if s.number in cut], context_tokens=dict(retrieval.context_tokens),
                        trace=dict(retrieval.details))
        if not retrieval.sources:
            answer.text = "Nothing is indexed that matches the question (is the workspace empty? see `scholargraph status`)."
            if on_text:  # a streamed answer shows it too
                on_text(answer.text)
            return answer
        t0 = time.perf_counter()
        if self.llm is None:
            _extractive(answer, on_text)
        else:
            reply = await self._generate(answer, request.history, on_text)
            if not answer.text:  # only source labels or bare [n]: asked once more, after its reply
                answer.notes.append("the model's answer held no statement (only source labels): asked again once")
                if on_text:
                    on_text("\n\n")
                await self._generate(answer, request.history, on_text, previous=reply)
            if not answer.text:
                answer.notes.append("asked again, the model's answer still held no statement: an extractive "
                                    "answer from the sources follows")
                _extractive(answer, on_text, LABEL_NO_STATEMENT)
        answer.timings["generation_s"] = time.perf_counter() - t0
        return answer

    async def _generate(self, answer: Answer, history: Sequence[tuple[str, str]], on_text,
                        previous: str | None = None) -> str:
        """The model's answer, regrounded and checked, into ``answer``; returns its raw reply.
        ``previous``: a raw reply that held no statement, followed by the answer_again prompt."""
        valid = {s.number for s in answer.sources}
        past = history_text(history)
        language = f"in {self.settings.query.answer_language}" if self.settings.query.answer_language else "in the language of the question"
        messages = load_prompt("answer").messages(context=answer.context, question=answer.question, history=past,
                                                  language=language)
        if previous is not None:
            messages += [{"role": "assistant", "content": previous},
                         *load_prompt("answer_again").messages(question=answer.question)]
        before = self.llm.usage_snapshot()
        if on_text is None:
            result = await self.llm.chat(messages, purpose="answer")
            raw = result.text
            if result.finish_reason == "length":
                answer.notes.append(f"the model's answer stopped at its completion budget ({result.completion_tokens:,} "
                                    "tokens; llm.max_tokens): it may be incomplete")
        else:
            filt = StreamingCitationFilter(valid)
            pieces = []
            async with contextlib.aclosing(self.llm.stream_chat(messages, purpose="answer")) as stream:
                async for piece in stream:
                    pieces.append(piece)
                    on_text(filt.feed(piece))
                    if any(c in piece for c in ".!?") and len(repeated_sentences("".join(pieces))) >= LOOP_REPEATS:
                        answer.notes.append(f"the model began repeating itself ({LOOP_REPEATS} sentences said "
                                            "before): its answer was stopped there")
                        break
            on_text(filt.flush())
            raw = "".join(pieces)
        if len(raw) >= self.settings.llm.max_reply_chars:  # the client cut it there (and did not cache it)
            answer.notes.append(f"the model's answer was cut at {len(raw):,} characters (llm.max_reply_chars)")
        fixed = reground(raw, answer.sources, answer.question)
        answer.notes += notes_for(fixed)
        check = verify_citations(fixed.text, valid)
        answer.text, answer.cited, answer.removed_citations = check.text.strip(), check.cited, check.removed
        if check.removed:
            answer.notes.append(f"removed citation(s) {check.removed}: not among the {len(valid)} sources given to the model")
        if not check.cited and answer.text:
            _attribute(answer, valid)
        answer.usage = merge_usage(answer.usage, self.llm.usage_since(before))
        return raw


def _attribute(answer: Answer, valid: set[int]) -> None:
    """An answer that cites nothing: its sentences that one source's words hold are cited to it, and
    the notes say so (the model wrote no number)."""
    text, found = attribute_uncited(answer.text, answer.sources, answer.question)
    if not found:
        answer.notes.append("the model's answer cites none of the sources: check it against them")
        return
    check = verify_citations(text, valid)
    answer.text, answer.cited = check.text.strip(), check.cited
    one = len(found) == 1
    answer.notes.append(f"the model's answer cites none of the sources: {len(found)} of its sentences "
                        f"{'is' if one else 'are'} cited to the source(s) that hold {'its' if one else 'their'} words "
                        f"({', '.join(f'{markers(ns)} {m} of {k}' for ns, m, k in found)}; "
                        "matched by scholargraph, not cited by the model)")


def _extractive(answer: Answer, on_text, label: str = LABEL) -> None:
    """The answer written without an LLM from the sources: chunks carry the passages; entity and
    relation lines only when no chunk was retrieved (of the sources in the context: a number cut
    from it has no source to resolve to)."""
    passages = [s for s in answer.sources if s.kind == "chunk"] or answer.sources
    answer.text, answer.cited = extractive_answer(answer.question, passages, graph=answer.sources, label=label)
    answer.extractive = True
    if on_text:
        on_text(answer.text)
