"""fastbio stage 2, the **refine** step (``.extractor``): the main-text paragraphs of a paper
(``main_passages``), their similarity to each drafted relation (embeddings, else lexical overlap),
the selection of the best ones, one short call per relation that rewrites its description, and
the clean-up of that answer (``clean_refined``).

``RefineStage`` is a mixin of ``FastBioExtractor``; it uses the extractor's ``embed``,
``threshold``, ``max_paragraphs``, ``max_concurrency``, ``refine_prompt``, ``_refine_system``
and ``_chat``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import LLMError, LLMUnavailableError, ModelOutputError
from ...ingest.chunking import layout
from ...llm.output import first_of
from ...llm.repair import parse_json, strip_reasoning
from ...models import Chunk, ChunkFailure, Document, Extraction, RelationRecord
from ...prompts import Prompt
from ...text.sentences import sentence_spans
from ...text.stopwords import STOPWORDS
from .normalise import match_key

DEFAULT_REFINE_THRESHOLD = 0.6
DEFAULT_REFINE_PARAGRAPHS = 3
NON_MAIN_KINDS = {"abstract", "front", "references"}
MIN_PASSAGE_CHARS = 40
MAX_PASSAGE_CHARS = 1500  # longer paragraphs are cut at sentence ends: bounds every refine prompt
MAX_DESCRIPTION_CHARS = 1200

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
# words too common in biomedical relation descriptions to tell passages apart
_GENERIC_BIO_WORDS = frozenset(
    "relationship relation interaction role effect effects associated association study studies patients patient".split())
_STOP = STOPWORDS | _GENERIC_BIO_WORDS
_NO_EVIDENCE = re.compile(
    r"\b(?:does not|do not|doesn't|don't)\s+(?:mention|provide|contain|describe|report|discuss|specify|state)\b"
    r"|\bno (?:information|mention|evidence)\b|\bnot (?:mentioned|described|reported|discussed)\b"
    r"|\b(?:cannot|can't|unable to)\s+(?:determine|find|answer|provide)\b", re.I)
_LABEL_PREFIX = re.compile(r"^(?:refined\s+|updated\s+|new\s+)?(?:description|answer|summary)\s*:\s*", re.I)


def terms(text: str) -> set[str]:
    """Content words, lowercased and crudely stemmed (lexical similarity)."""
    out = set()
    for w in _WORD.findall(text.casefold()):
        if w in _STOP or len(w) < 2:
            continue
        for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


@dataclass
class Passage:
    """A main-text paragraph (long ones cut at sentence ends) and the chunk it starts in."""

    text: str
    start: int  # offset in the document's full text
    chunk_id: str


@dataclass
class RefineTarget:
    relation: RelationRecord
    source_names: list[str]  # name + aliases, for the query and lexical matching
    target_names: list[str]


def chunk_at(chunks: Sequence[Chunk], offset: int, default: str) -> str:
    for c in chunks:
        if c.char_start is not None and c.char_end is not None and c.char_start <= offset < c.char_end:
            return c.id
    return default


def _split_long(text: str, start: int) -> list[tuple[str, int]]:
    if len(text) <= MAX_PASSAGE_CHARS:
        return [(text, start)]
    out: list[tuple[str, int]] = []
    piece_start = piece_end = None
    for s, e in sentence_spans(text) or [(0, len(text))]:
        if piece_start is None:
            piece_start, piece_end = s, e
        elif e - piece_start > MAX_PASSAGE_CHARS:
            out.append((text[piece_start:piece_end], start + piece_start))
            piece_start, piece_end = s, e
        else:
            piece_end = e
    if piece_start is not None:
        out.append((text[piece_start:piece_end], start + piece_start))
    return [piece for t, o in out for piece in _hard_split(t, o)]


def _hard_split(text: str, start: int) -> list[tuple[str, int]]:
    """A "sentence" longer than the limit (tables, missed sentence ends) in windows cut at spaces."""
    out = []
    pos = 0
    while len(text) - pos > MAX_PASSAGE_CHARS:
        cut = text.rfind(" ", pos, pos + MAX_PASSAGE_CHARS)
        cut = cut if cut > pos + MAX_PASSAGE_CHARS // 2 else pos + MAX_PASSAGE_CHARS
        out.append((text[pos:cut], start + pos))
        pos = cut
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if pos < len(text):
        out.append((text[pos:], start + pos))
    return out


def main_passages(doc: Document, chunks: Sequence[Chunk], skip_before: int = 0) -> list[Passage]:
    """Paragraphs of the main text (every section but abstract/front/references), in order."""
    _, placed = layout(doc)
    default = chunks[0].id if chunks else ""
    out: list[Passage] = []
    for p in placed:
        if p.section.kind in NON_MAIN_KINDS or not p.section.text.strip():
            continue
        text = p.section.text
        for m in re.finditer(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", text, flags=re.S):
            begin = p.text_start + m.start()
            if begin < skip_before:
                continue
            para = " ".join(m.group(0).split())
            if len(para) < MIN_PASSAGE_CHARS:
                continue
            for piece, offset in _split_long(m.group(0), begin):
                piece = " ".join(piece.split())
                if len(piece) >= MIN_PASSAGE_CHARS:
                    out.append(Passage(piece, offset, chunk_at(chunks, offset, default)))
    return out


def clean_refined(raw: str) -> str | None:
    """The description in a refine answer; None when the text reports nothing about the pair.

    Raises ModelOutputError for output that is not a usable description (empty, reasoning only,
    structured data, no words).
    """
    if not isinstance(raw, str) or not raw.strip():
        raise ModelOutputError("empty refine output", raw if isinstance(raw, str) else repr(raw))
    text = strip_reasoning(raw).strip()
    text = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", text).strip()
    if text[:1] in "{[":
        try:
            value = parse_json(text)
        except ModelOutputError:
            value = None
        if isinstance(value, dict):
            value = first_of({str(k).lower(): v for k, v in value.items()},
                             ("description", "updated_description", "relationship_description", "text", "answer"))
        if not isinstance(value, str):
            raise ModelOutputError("refine output is structured data, not a description", raw)
        text = value
    text = _LABEL_PREFIX.sub("", " ".join(text.split())).strip(" \"'\u201c\u201d")
    if len(text) < 15 or len(re.findall(r"[^\W\d_]{3,}", text)) < 2:
        raise ModelOutputError("refine output too short to be a description", raw)
    if _NO_EVIDENCE.search(text) and len(text) < 400:
        return None
    if len(text) > MAX_DESCRIPTION_CHARS:
        cut = text[:MAX_DESCRIPTION_CHARS]
        end = max(cut.rfind(". "), cut.rfind("; "))
        text = cut[: end + 1] if end > MAX_DESCRIPTION_CHARS // 3 else cut
    return text


class RefineStage:
    """Stage 2 of ``FastBioExtractor``: paragraph selection per relation and the refine calls."""

    # set by FastBioExtractor
    refine_prompt: Prompt
    _refine_system: str
    embed: Callable[[Sequence[str]], Awaitable[np.ndarray]] | None
    threshold: float
    max_paragraphs: int
    max_concurrency: int
    _chat: Callable[..., Awaitable[Any]]

    def _targets(self, found: Extraction) -> list[RefineTarget]:
        names: dict[str, list[str]] = {}
        for e in found.entities:
            names.setdefault(match_key(e.name), []).extend([e.name, *e.aliases])
        return [RefineTarget(r, list(dict.fromkeys(names.get(match_key(r.source), [r.source]))),
                             list(dict.fromkeys(names.get(match_key(r.target), [r.target]))))
                for r in found.relations]

    @staticmethod
    def query_text(t: RefineTarget) -> str:
        def named(ns: list[str]) -> str:
            return ns[0] + (f" ({', '.join(ns[1:3])})" if len(ns) > 1 else "")

        return (f"What is the relationship between {named(t.source_names)} and {named(t.target_names)}? "
                f"{t.relation.description}").strip()

    async def _similarities(self, targets: list[RefineTarget], passages: list[Passage]) -> np.ndarray:
        """(relations x passages) similarity, in [-1, 1] for embeddings, [0, 1] lexically."""
        if self.embed is not None:
            pvec = np.asarray(await self.embed([p.text for p in passages]), dtype=np.float32)
            qvec = np.asarray(await self.embed([self.query_text(t) for t in targets]), dtype=np.float32)
            pvec /= np.maximum(np.linalg.norm(pvec, axis=1, keepdims=True), 1e-12)
            qvec /= np.maximum(np.linalg.norm(qvec, axis=1, keepdims=True), 1e-12)
            return qvec @ pvec.T
        pterms = [terms(p.text) for p in passages]
        out = np.zeros((len(targets), len(passages)), dtype=np.float32)
        for i, t in enumerate(targets):
            name_terms = terms(" ".join(t.source_names + t.target_names))
            desc_terms = terms(t.relation.description) - name_terms
            for j, pt in enumerate(pterms):
                name_part = len(name_terms & pt) / len(name_terms) if name_terms else 0.0
                desc_part = len(desc_terms & pt) / len(desc_terms) if desc_terms else name_part
                out[i, j] = 0.6 * name_part + 0.4 * desc_part
        return out

    def select(self, sims: np.ndarray, passages: list[Passage]) -> list[Passage]:
        """Paragraphs at or above the threshold, best first, at most ``max_paragraphs``; else the best one."""
        order = np.argsort(-sims, kind="stable")
        above = [passages[i] for i in order if sims[i] >= self.threshold][: self.max_paragraphs]
        return above or [passages[int(order[0])]]

    async def _refine_all(self, doc: Document, found: Extraction, passages: list[Passage]) -> list[ChunkFailure]:
        targets = self._targets(found)
        sims = await self._similarities(targets, passages)
        limit = asyncio.Semaphore(self.max_concurrency) if self.max_concurrency > 0 else None
        # one call per distinct (source, target, draft)
        pending: dict[tuple[str, str, str], asyncio.Task] = {}

        async def one(i: int, t: RefineTarget) -> ChunkFailure | None:
            r = t.relation
            picked = self.select(sims[i], passages)
            key = (match_key(r.source), match_key(r.target), r.description)
            if key not in pending:
                pending[key] = asyncio.ensure_future(self._refine_call(doc, t, picked, limit))
            try:
                text = await pending[key]
            except ModelOutputError as exc:
                return ChunkFailure(r.chunk_id, f"refine {r.source} -> {r.target}: {exc.reason}; draft kept", exc.raw)
            except LLMUnavailableError:
                raise
            except LLMError as exc:
                return ChunkFailure(r.chunk_id, f"refine {r.source} -> {r.target}: {exc}; draft kept")
            if text:
                r.description = text
                r.chunk_id = picked[0].chunk_id
            return None

        results = await asyncio.gather(*(one(i, t) for i, t in enumerate(targets)), return_exceptions=True)
        failures: list[ChunkFailure] = []
        for res in results:
            if isinstance(res, BaseException):
                raise res
            if res is not None:
                failures.append(res)
        return failures

    async def _refine_call(self, doc: Document, t: RefineTarget, picked: list[Passage],
                           limit: asyncio.Semaphore | None) -> str | None:
        r = t.relation
        user = self.refine_prompt.user.format(source=r.source, target=r.target, draft=r.description or "(none)",
                                              text="\n\n".join(p.text for p in picked))
        messages = [{"role": "system", "content": self._refine_system}, {"role": "user", "content": user}]
        if limit is None:
            result = await self._chat(messages, "refine", doc.id, parse=clean_refined)
        else:
            async with limit:
                result = await self._chat(messages, "refine", doc.id, parse=clean_refined)
        if result.error is not None:
            raise result.error
        return result.parsed


__all__ = ["DEFAULT_REFINE_PARAGRAPHS", "DEFAULT_REFINE_THRESHOLD", "MAX_DESCRIPTION_CHARS", "MAX_PASSAGE_CHARS",
           "MIN_PASSAGE_CHARS", "NON_MAIN_KINDS", "Passage", "RefineStage", "RefineTarget", "clean_refined",
           "main_passages", "terms"]
