"""bio query mode, step 5 (``.query``): the paper sources formatted as context and as a reference
list, split into batches that fit the token budget, one answer call per batch (concurrently; a
failed batch only loses its own papers), and one merge call when there was more than one batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ...errors import LLMError, LLMUnavailableError
from ...llm.wire import estimate_tokens
from ...models import Source
from ...prompts import load_prompt
from ...query.citations import verify_citations


def _paper_header(s: Source) -> str:
    where = ", ".join(str(x) for x in (s.venue, s.year) if x)
    return f"[{s.number}] {s.title or s.document_id}" + (f" ({where})" if where else "")


def format_papers(sources: Sequence[Source]) -> str:
    return "\n\n".join(f"{_paper_header(s)}\n{s.text}" for s in sources)


def format_references(sources: Sequence[Source], cited: Sequence[int] | None = None) -> str:
    """One line per (cited) paper: [n] paper id · title · journal · year."""
    wanted = set(cited or [])
    lines = []
    for s in sources:
        if wanted and s.number not in wanted:
            continue
        parts = [s.document_id or "?", s.title or "", s.venue or "", str(s.year) if s.year else ""]
        lines.append(f"[{s.number}] " + " · ".join(p for p in parts if p))
    return "\n".join(lines)


def batches(sources: Sequence[Source], budget: int, count: Callable[[str], int]) -> list[list[Source]]:
    """Consecutive papers whose context fits ``budget`` tokens (a paper larger than that goes alone)."""
    out: list[list[Source]] = []
    used = 0
    for s in sources:
        n = count(f"{_paper_header(s)}\n{s.text}")
        if out and used + n <= budget:
            out[-1].append(s)
            used += n
        else:
            out.append([s])
            used = n
    return out


def _language(settings) -> str:
    lang = settings.query.answer_language
    return f"in {lang}" if lang else "in the language of the question"


async def generate_answer(llm, settings, question: str, sources: list[Source], notes: list[str], budget: int,
                          history: str = "", removed: list[int] | None = None) -> str:
    """The merged answer text. Citations a batch answer makes to papers outside its batch are
    invented: they are dropped there and their numbers added to ``removed``."""
    count = getattr(llm, "count_tokens", None) or estimate_tokens
    groups = batches(sources, budget, count)
    prompt = load_prompt("bio_answer", __package__)
    language = _language(settings)

    async def one(group: list[Source]) -> str:
        messages = prompt.messages(context=format_papers(group), question=question, language=language,
                                   history=history)
        result = await llm.chat(messages, purpose="answer")
        # numbers outside this batch are invented: drop them before the merge sees them, and say so
        check = verify_citations(result.text, {s.number for s in group})
        if removed is not None:
            removed.extend(check.removed)
        return check.text.strip()

    results = await asyncio.gather(*(one(g) for g in groups), return_exceptions=True)
    partial: list[str] = []
    for group, res in zip(groups, results, strict=True):
        if isinstance(res, LLMUnavailableError):
            raise res
        if isinstance(res, BaseException):
            if not isinstance(res, LLMError):
                raise res
            notes.append(f"the answer for papers [{group[0].number}]-[{group[-1].number}] failed ({res}); "
                         "they are left out")
        elif res:
            partial.append(res)
    if not partial:
        first = next((r for r in results if isinstance(r, BaseException)), None)
        if first is not None:
            raise first
        return ""
    if len(partial) == 1:
        return partial[0]
    merge = load_prompt("bio_merge", __package__)
    answers = "\n\n".join(f"Part {i}:\n{p}" for i, p in enumerate(partial, start=1))
    try:
        result = await llm.chat(merge.messages(answers=answers, question=question, language=language), purpose="answer")
    except LLMUnavailableError:
        raise
    except LLMError as exc:
        notes.append(f"merging the {len(partial)} partial answers failed ({exc}); they are shown one after another")
        return "\n\n".join(partial)
    notes.append(f"{len(partial)} batches of papers answered separately and merged")
    return result.text


__all__ = ["batches", "format_papers", "format_references"]
