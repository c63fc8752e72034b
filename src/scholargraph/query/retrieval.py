"""What every query mode returns before an answer is written: :class:`Retrieval` (numbered
sources, context, timings, usage, notes), and small helpers shared by the modes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..models import Source, Usage, usage_to_json

__all__ = ["Retrieval", "budget_cut", "history_text", "merge_usage", "truncate_sources"]


@dataclass
class Retrieval:
    """The evidence for a question. ``sources``: the numbered sources, best first, numbered as in
    ``context`` ([1], [2], ...); ``retrieve --json`` and the HTTP API print them as ``sources`` (also
    as ``results``, the older name). An answer's ``context_sources`` are these."""

    question: str
    mode: str
    sources: list[Source]
    context: str
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, Usage] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # graph modes: {"high_level", "low_level", "clues", "source"} (None for naive)
    keywords: dict | None = None
    # graph modes: matched entities, paths, pruned/expanded relations... (for inspection and tests)
    details: dict = field(default_factory=dict)
    # numbers of the sources left out of ``context`` by the token budget (the results keep them)
    cut: list[int] = field(default_factory=list)
    context_tokens: dict[str, int] = field(default_factory=dict)  # {"budget", "used"}
    # ``details`` with names, for users (query/trace.py): set by the engine
    trace: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The ``retrieve --json`` object and the HTTP API's ``/retrieve`` reply. ``sources``: the
        numbered evidence (as in an answer); ``results`` is the same list under its older name, kept
        for existing clients."""
        sources = [s.to_json() for s in self.sources]
        return {"query": self.question, "mode": self.mode, "keywords": self.keywords,
                "sources": sources, "results": sources,
                "cut_from_context": self.cut, "context_tokens": self.context_tokens,
                "timings": {k: round(v, 4) for k, v in self.timings.items()}, "usage": usage_to_json(self.usage),
                "notes": self.notes, "trace": self.trace}


def merge_usage(*parts: dict[str, Usage]) -> dict[str, Usage]:
    out: dict[str, Usage] = {}
    for part in parts:
        for purpose, u in part.items():
            out.setdefault(purpose, Usage()).add(u)
    return out


def budget_cut(sources: list[Source], budget: int, count: Callable[[str], int]) -> tuple[list[Source], list[int], int]:
    """(sources that fit ``budget`` tokens, in order; numbers of those that did not; tokens used).
    The first source is always kept; the first one that overflows ends the context."""
    kept: list[Source] = []
    used = 0
    for s in sources:
        n = count(s.text)
        if kept and used + n > budget:
            break
        kept.append(s)
        used += n
    return kept, [s.number for s in sources[len(kept):]], used


def truncate_sources(sources: list[Source], budget: int, count: Callable[[str], int]) -> list[Source]:
    return budget_cut(sources, budget, count)[0]


def history_text(history: Sequence[tuple[str, str]]) -> str:
    """The last three turns of a session, as the answer prompts show them."""
    return "".join(f"\nEarlier question: {q}\nEarlier answer: {a}\n" for q, a in list(history)[-3:])
