"""Answer without an LLM: the sentences of the retrieved sources that best match the question,
each with its citation, labelled as extractive."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from ..models import Source
from ..text.sentences import sentence_spans
from ..text.stopwords import STOPWORDS
from .citations import neutralise_source_citations

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]+")
LABEL = "Extractive answer (no LLM configured; these are the passages that best match the question):"


def _terms(text: str) -> list[str]:
    return [w for w in (t.lower() for t in _WORD.findall(text)) if w not in STOPWORDS and len(w) > 1]


def _stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def best_sentences(question: str, sources: Sequence[Source], limit: int = 5) -> list[tuple[str, int, float]]:
    """(sentence, source number, score), best first; at most two sentences per source."""
    q_terms = Counter(_stem(t) for t in _terms(question))
    if not q_terms:
        return []
    scored = []
    for rank, source in enumerate(sources):
        prior = 1.0 / (1.0 + 0.15 * rank)
        headings = {" ".join(h.split()) for h in (source.section or "").split(" / ") if h.strip()}
        for start, end in sentence_spans(source.text):
            sentence = neutralise_source_citations(" ".join(source.text[start:end].split()))
            if len(sentence) < 25 or any(sentence in h for h in headings):  # a chunk's text holds its headings
                continue
            terms = {_stem(t) for t in _terms(sentence)}
            overlap = sum(1 for t in q_terms if t in terms)
            if not overlap:
                continue
            score = prior * overlap / math.sqrt(len(q_terms)) * (1.0 / (1.0 + len(sentence) / 600))
            scored.append((sentence, source.number, score))
    scored.sort(key=lambda x: -x[2])
    picked: list[tuple[str, int, float]] = []
    per_source: Counter[int] = Counter()
    for sentence, number, score in scored:
        if per_source[number] < 2:
            picked.append((sentence, number, score))
            per_source[number] += 1
        if len(picked) >= limit:
            break
    return picked


def extractive_answer(question: str, sources: Sequence[Source], limit: int = 5) -> tuple[str, list[int]]:
    picked = best_sentences(question, sources, limit)
    if not picked:
        return ("No passage in the indexed documents matches the question.", [])
    lines = [LABEL] + [f"- {sentence} [{number}]" for sentence, number, _ in picked]
    cited = list(dict.fromkeys(number for _, number, _ in picked))
    return "\n".join(lines), cited
