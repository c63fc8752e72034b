"""Answer without an LLM: the sentences of the retrieved sources that best match the question,
each with its citation, labelled as extractive; graph modes add the relations they retrieved.

A sentence is quoted once (overlapping chunks hold the same sentence), and never when it is not
prose: cut short where a display formula was (it ends without a full stop, "... of f is"), or
pseudo-code ("2: S ← max(...)")."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from ..models import Source
from ..text.sentences import sentence_spans
from ..text.stopwords import STOPWORDS
from .citations import neutralise_source_citations

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]+")
LABEL = "Extractive answer (no LLM configured; these are the passages that best match the question):"
# when a model is configured but its answer held no statement (engine.py)
LABEL_NO_STATEMENT = ("Extractive answer (the model's answer held no statement; these are the passages that best "
                      "match the question):")
LEADS_NOTE = "(no sentence of them shares a word with the question: the first sentences of the best-ranked passages)"
GRAPH_LABEL = "Graph evidence (relations this mode retrieved):"
# a sentence cut where a display formula was: "... the β-smooth sensitivity of f is"
_CUT_SHORT = re.compile(r"(?:\b(?:is|are|was|were|be|of|the|a|an|by|as|to|and|or|with|for|in|that|which|where|"
                        r"given|defined|follows|than)|[=:,(≤≥<>+\-*/])\s*$", re.IGNORECASE)
_CODE = re.compile(r"[←⇐≔{}]|(?:^|\s)\d{1,3}:\s|\bend\s+(?:for|if|while)\b|\breturn\s+\S+\s*$")


def _terms(text: str) -> list[str]:
    return [w for w in (t.lower() for t in _WORD.findall(text)) if w not in STOPWORDS and len(w) > 1]


def _stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """The stemmed content words of ``text`` (no stopwords, no single characters)."""
    return {_stem(t) for t in _terms(text)}


def is_prose(sentence: str) -> bool:
    """A whole sentence of prose: not cut short where a formula was, and not pseudo-code."""
    return not _CUT_SHORT.search(sentence) and len(_CODE.findall(sentence)) < 2


def _key(sentence: str) -> str:
    return " ".join(_terms(sentence))


def quotable_sentences(source: Source) -> Iterator[str]:
    """The sentences of a source an answer may quote: prose of 25 characters or more, never one of
    its headings (a chunk's text holds them), its own citation markers neutralised."""
    headings = {" ".join(h.split()) for h in (source.section or "").split(" / ") if h.strip()}
    for start, end in sentence_spans(source.text):
        sentence = neutralise_source_citations(" ".join(source.text[start:end].split()))
        if len(sentence) >= 25 and not any(sentence in h for h in headings) and is_prose(sentence):
            yield sentence


def best_sentences(question: str, sources: Sequence[Source], limit: int = 5) -> list[tuple[str, int, float]]:
    """(sentence, source number, score), best first; at most two sentences per source."""
    q_terms = Counter(_stem(t) for t in _terms(question))
    if not q_terms:
        return []
    scored = []
    for rank, source in enumerate(sources):
        prior = 1.0 / (1.0 + 0.15 * rank)
        for sentence in quotable_sentences(source):
            terms = content_stems(sentence)
            overlap = sum(1 for t in q_terms if t in terms)
            if not overlap:
                continue
            score = prior * overlap / math.sqrt(len(q_terms)) * (1.0 / (1.0 + len(sentence) / 600))
            scored.append((sentence, source.number, score))
    scored.sort(key=lambda x: -x[2])
    picked: list[tuple[str, int, float]] = []
    per_source: Counter[int] = Counter()
    seen: set[str] = set()
    for sentence, number, score in scored:
        if per_source[number] < 2 and _key(sentence) not in seen:  # overlapping chunks: quoted once
            picked.append((sentence, number, score))
            per_source[number] += 1
            seen.add(_key(sentence))
        if len(picked) >= limit:
            break
    return picked


def leading_sentences(sources: Sequence[Source], limit: int = 3) -> list[tuple[str, int, float]]:
    """The first prose sentence of each of the first ``limit`` sources (in their rank order): what
    the retrieval ranked best, for a question none of their sentences shares a word with (an
    abstract that only says "DBE" for "double balloon enteroscopy")."""
    firsts = ((next(quotable_sentences(source), None), source.number) for source in sources)
    return [(sentence, number, 0.0) for sentence, number in firsts if sentence is not None][:limit]


def extractive_answer(question: str, sources: Sequence[Source], limit: int = 5,
                      graph: Sequence[Source] = (), graph_limit: int = 3, label: str = LABEL) -> tuple[str, list[int]]:
    """``graph``: the relation sources a graph mode retrieved (best first); the first
    ``graph_limit`` are listed after the sentences, so that modes differ by what they retrieve.
    ``label``: the first line, saying why the answer is extractive."""
    picked = best_sentences(question, sources, limit)
    relations = [s for s in graph if s.kind == "relation"][:graph_limit]
    lines = [label]
    if not picked and not relations:
        picked = leading_sentences(sources)
        if not picked:
            return ("No passage in the indexed documents matches the question.", [])
        lines.append(LEADS_NOTE)
    lines += [f"- {sentence} [{number}]" for sentence, number, _ in picked]
    if relations:
        lines += [GRAPH_LABEL] + [f"- {' '.join(s.text.split())[:300]} [{s.number}]" for s in relations]
    cited = list(dict.fromkeys([number for _, number, _ in picked] + [s.number for s in relations]))
    return "\n".join(lines), cited
