"""Dual-level keywords for graph retrieval (thesis 000 §3.3.1).

1. Clues (eq. 3.2): the corpus content keywords whose vectors have cosine >= tau with the
   question, best first, at most ``max_clues``.
2. Keywords (eq. 3.3): one LLM call (purpose ``keywords``, prompt ``prompts/keywords.txt``)
   turns the question and the clues into ``high_level`` (themes, for global retrieval) and
   ``low_level`` (specific terms, for subgraph/local retrieval) keywords, as JSON.

Without an LLM — or when its output is unusable — keywords are made offline from the clues and
the question's own terms (runs of content words), and a note says so.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator, ConfigDict, model_validator

from ..errors import LLMError, ModelOutputError, ScholarGraphError
from ..llm.accounting import CutReply
from ..llm.output import LenientModel, output_schema, validate
from ..llm.repair import parse_json_result
from ..models import Usage
from ..prompts import load_prompt
from ..store.base import GraphSearch
from ..text.acronyms import is_acronym
from ..text.names import fold_plural
from ..text.stopwords import QUESTION_WORDS, STOPWORDS
from ..text.tokens import tokenize_with_offsets

MAX_HIGH = 6
MAX_LOW = 10
MAX_KEYWORD_CHARS = 80



def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p for p in re.split(r"[,;\n]", value) if p.strip()]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


KeywordList = Annotated[list[str], BeforeValidator(_as_list)]


class KeywordsReply(LenientModel):
    """The keyword model's reply (eq. 3.3). Asked for both lists and nothing else; read from the
    first key naming "high" and the first naming "low" (``high_level_keywords`` too)."""

    model_config = ConfigDict(json_schema_extra={"required": ["high_level", "low_level"],
                                                 "additionalProperties": False})

    high_level: KeywordList | None = None
    low_level: KeywordList | None = None

    @model_validator(mode="before")
    @classmethod
    def _named_levels(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        levels: dict[str, Any] = {}
        for key, value in data.items():
            k = str(key).lower()
            if "high" in k and "high_level" not in levels:
                levels["high_level"] = value
            elif "low" in k and "low_level" not in levels:
                levels["low_level"] = value
        return levels


KEYWORDS_SCHEMA: dict[str, Any] = output_schema(KeywordsReply)

_WORDISH = re.compile(r"\w")


@dataclass
class Clue:
    id: str
    text: str
    score: float


@dataclass
class Keywords:
    high_level: list[str]
    low_level: list[str]
    clues: list[Clue] = field(default_factory=list)
    source: str = "offline"  # "llm" | "offline"
    notes: list[str] = field(default_factory=list)
    usage: dict[str, Usage] = field(default_factory=dict)
    llm_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "high_level": self.high_level,
            "low_level": self.low_level,
            "clues": [{"text": c.text, "score": round(c.score, 4)} for c in self.clues],
            "source": self.source,
        }


# -- clues (eq. 3.2) ------------------------------------------------------------------------


def find_clues(store: GraphSearch, query_vec: np.ndarray, threshold: float, limit: int = 20, dim: int | None = None) -> list[Clue]:
    """Content keywords with cosine >= ``threshold`` to the question, best first, deduplicated by text."""
    if limit <= 0:
        return []
    index = store.vector_index("keyword", dim)
    if not index:  # (not len(): on PostgreSQL a count of every row)
        return []
    hits = index.above(query_vec, threshold, limit * 2)
    texts = store.keywords_text([i for i, _ in hits])
    out, seen = [], set()
    for kid, score in hits:
        text = texts.get(kid)
        if not text:
            continue
        key = " ".join(text.casefold().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(Clue(kid, text, float(score)))
        if len(out) >= limit:
            break
    return out


# -- offline keywords -----------------------------------------------------------------------


def query_terms(question: str, max_words: int = 4) -> list[str]:
    """The question's own content phrases: maximal runs of words that are neither stopwords nor
    question grammar, cut at punctuation; acronyms inside longer runs are also kept alone."""
    runs: list[list[str]] = []
    current: list[str] = []
    for tok in tokenize_with_offsets(question):
        word = tok.text
        low = word.lower()
        content = (_WORDISH.search(word) is not None and low not in STOPWORDS and low not in QUESTION_WORDS
                   and not (len(word) < 2 and not word.isdigit()))
        if content:
            current.append(word)
        else:
            if current:
                runs.append(current)
            current = []
    if current:
        runs.append(current)
    out: list[str] = []
    singles: list[str] = []
    for run in runs:
        for i in range(0, len(run), max_words):
            out.append(" ".join(run[i : i + max_words]))
        if len(run) > 1:
            out.extend(w for w in run if is_acronym(w))
        if len(run) > 2:  # long runs often glue terms with a verb ("aspirin reduce inflammation")
            singles.extend(w for w in run if len(w) > 3 and not is_acronym(w))
    singles = sorted(dict.fromkeys(singles), key=lambda w: -len(w))[:4]  # the longest words are the most specific
    return _clean(out + singles, MAX_LOW)


def question_keyword(question: str) -> str:
    """The question as a high-level keyword (offline keywords use it as the broadest theme)."""
    cleaned = _clean([" ".join(question.split())], 1, max_chars=400)
    return cleaned[0] if cleaned else ""


def offline_keywords(question: str, clues: list[Clue]) -> tuple[list[str], list[str]]:
    """(high_level, low_level) without an LLM: themes are the best clues plus the question itself;
    specific terms are the question's phrases plus the three best clues."""
    terms = query_terms(question)
    clue_texts = [c.text for c in clues]
    high = _clean(clue_texts[:MAX_HIGH - 1] + [question_keyword(question)], MAX_HIGH, max_chars=400)
    low = _clean(terms + clue_texts[:3], MAX_LOW)
    return high, low


def _clean(items, limit: int, max_chars: int = MAX_KEYWORD_CHARS) -> list[str]:
    out, seen = [], set()
    for item in items:
        if not isinstance(item, str):
            continue
        text = " ".join(item.split()).strip(" \t.,;:!?\"'")[:max_chars]
        key = " ".join(fold_plural(w) for w in text.casefold().split())
        if not text or key in seen:
            continue
        seen.add(key)
        out.append(text)
        if len(out) >= limit:
            break
    return out


# -- LLM keywords (eq. 3.3) -----------------------------------------------------------------


def parse_keywords(raw: str) -> tuple[list[str], list[str]]:
    """(high_level, low_level) from the model's reply; ModelOutputError when nothing usable; a
    reply cut inside its JSON gives what it holds through ``CutReply`` (used, never cached)."""
    parsed = parse_json_result(raw)
    data = parsed.value
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict):
        raise ModelOutputError(f"keyword reply is a JSON {type(data).__name__}, not an object", raw)
    reply = validate(data, KeywordsReply)
    high = _clean(reply.high_level or [], MAX_HIGH)
    low = _clean(reply.low_level or [], MAX_LOW)
    if not high and not low:
        raise ModelOutputError("keyword reply has no high_level or low_level keywords", raw)
    if parsed.truncated:
        raise CutReply((high or [], low or []), "the keyword reply ends inside its JSON")
    return high or [], low or []


async def make_keywords(question: str, clues: list[Clue], llm=None) -> Keywords:
    """Dual-level keywords: one LLM call when ``llm`` is given, else (or on failure) offline."""
    off_high, off_low = offline_keywords(question, clues)
    if llm is None:
        return Keywords(off_high, off_low, clues, "offline")
    prompt = load_prompt("keywords")
    messages = prompt.messages(question=" ".join(question.split()),
                               clues="; ".join(c.text for c in clues) if clues else "(none)")
    before = llm.usage_snapshot()
    started = time.perf_counter()
    notes: list[str] = []
    try:
        result = await llm.chat(messages, purpose="keywords", schema=KEYWORDS_SCHEMA, schema_name="keywords",
                                parse=parse_keywords)  # an unusable reply is not cached
        if result.error is not None:
            raise result.error
        high, low = result.parsed
        source = "llm"
        if not high:
            high = off_high
            notes.append("the keyword model gave no high-level keywords; using offline ones")
        if not low:
            low = off_low
            notes.append("the keyword model gave no low-level keywords; using offline ones")
    except (ModelOutputError, ValueError) as exc:
        high, low, source = off_high, off_low, "offline"
        notes.append(f"keyword model output unusable ({exc}); using offline keywords from the clues and the question")
    except (LLMError, ScholarGraphError) as exc:
        high, low, source = off_high, off_low, "offline"
        notes.append(f"keyword LLM call failed ({exc}); using offline keywords from the clues and the question")
    elapsed = time.perf_counter() - started
    return Keywords(high, low, clues, source, notes, llm.usage_since(before), elapsed)
