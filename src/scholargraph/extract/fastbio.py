"""fastbio profile (seed 003 §2.4, §3.1): a biomedical graph in two stages per paper.

1. **Draft** -- one LLM call per paper on its abstract (purpose ``extract``): typed entities
   (``extraction.entity_types``; the default "paper" preset becomes "biomedical") and directed
   relations typed by ``extraction.relation_types`` (default ``BIO_RELATION_TYPES``), each with a
   one-sentence description and a confidence. Genes are named by HGNC symbol and diseases by MeSH
   heading, the surface form kept as alias; an optional dictionary (``extract.bio_normalise``)
   is applied first.
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
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LLMError, LLMUnavailableError, ModelOutputError
from ..ingest.chunking import layout
from ..models import Chunk, ChunkFailure, Document, EntityRecord, Extraction, RelationRecord, Usage
from ..prompts import load_prompt
from .bio_normalise import BioDictionary, dictionary_from_settings, match_key, normalise_extraction
from .json_repair import parse_json, strip_reasoning
from .parse import parse_extraction
from .text_utils import sentence_spans
from .types import BIO_RELATION_TYPES, PRESETS
from .types import entity_types as resolve_entity_types

Embed = Callable[[Sequence[str]], Awaitable[np.ndarray]]

REPAIR_NOTE = "Your previous reply was not valid JSON in the required format. Reply with the JSON object only."
DEFAULT_REFINE_THRESHOLD = 0.6
DEFAULT_REFINE_PARAGRAPHS = 3
NON_MAIN_KINDS = {"abstract", "front", "references"}
MIN_PASSAGE_CHARS = 40
MAX_PASSAGE_CHARS = 1500  # longer paragraphs are cut at sentence ends: bounds every refine prompt
MAX_DESCRIPTION_CHARS = 1200
OTHER_TYPE = "Other"

_S = {"type": "string"}
DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {"type": "object", "properties": {
            "name": _S, "type": _S, "alias": _S}, "required": ["name"]}},
        "relations": {"type": "array", "items": {"type": "object", "properties": {
            "source": _S, "target": _S, "type": _S, "description": _S,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["source", "target"]}},
    },
    "required": ["entities", "relations"],
}

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_STOP = frozenset(
    "a an the of in on for to and or is are was were be been by with as at from that this these those which what who "
    "how why when where does do did can could should would may might it its their there than then into about over "
    "under between among also not no such other any all some more less very relationship relation interaction role "
    "effect effects associated association study studies patients patient".split())
_NO_EVIDENCE = re.compile(
    r"\b(?:does not|do not|doesn't|don't)\s+(?:mention|provide|contain|describe|report|discuss|specify|state)\b"
    r"|\bno (?:information|mention|evidence)\b|\bnot (?:mentioned|described|reported|discussed)\b"
    r"|\b(?:cannot|can't|unable to)\s+(?:determine|find|answer|provide)\b", re.I)
_LABEL_PREFIX = re.compile(r"^(?:refined\s+|updated\s+|new\s+)?(?:description|answer|summary)\s*:\s*", re.I)

# key variants of the extra fields read from the draft JSON (aliases, relation type, confidence)
_NAME_KEYS = ("name", "entity", "entity_name")
_ALIAS_KEYS = ("alias", "aliases", "surface", "surface_form", "mention", "synonyms", "text_form", "original")
_SRC_KEYS = ("source", "source_entity", "src", "src_id", "head", "subject", "from")
_TGT_KEYS = ("target", "target_entity", "tgt", "tgt_id", "tail", "object", "to")
_RTYPE_KEYS = ("type", "relation_type", "relationship_type", "relation", "relationship", "label", "predicate")
_CONF_KEYS = ("confidence", "probability", "certainty", "score", "strength")

# words that name a relation type without being it ("up-regulates" is a Regulation link)
RELATION_TYPE_HINTS: dict[str, tuple[str, ...]] = {
    "Causal": ("cause", "causes", "causal", "leads to", "induces", "drives", "mechanism"),
    "Risk Factor": ("risk", "risk factor", "predisposes", "susceptibility"),
    "Protective Factor": ("protective", "protects", "protection", "reduces risk"),
    "Biomarker": ("biomarker", "marker", "diagnostic", "prognostic", "predictive"),
    "Target": ("target", "targets", "therapeutic target", "treats", "treatment", "inhibits", "drug target"),
    "Modifier": ("modifier", "modifies", "modulates", "modulator"),
    "Regulation": ("regulation", "regulates", "upregulates", "downregulates", "activates", "represses", "up-regulated",
                   "down-regulated", "upregulated", "downregulated", "regulated"),
    "Expression": ("expression", "expressed", "overexpressed", "overexpression", "underexpressed", "levels"),
}


def bio_entity_types(spec: str | list[str]) -> list[str]:
    """The entity types of the profile: the biomedical preset unless the settings name other types."""
    if spec == "paper":  # the workspace default is for CS papers; fastbio means biomedical
        return list(PRESETS["biomedical"])
    return resolve_entity_types(spec)


def _type_key(text: str) -> str:
    return match_key(text)


def map_relation_type(raw: str, relation_types: Sequence[str]) -> str | None:
    """The configured relation type ``raw`` names (exact, contained, or a hint word), else None."""
    key = _type_key(raw)
    if not key:
        return None
    for t in relation_types:
        if _type_key(t) == key:
            return t
    for t in relation_types:
        tk = _type_key(t)
        if len(key) >= 4 and (key in tk or tk in key):
            return t
    low = " ".join(re.split(r"[\s_\-/]+", raw.casefold()))
    for t in relation_types:
        hints = RELATION_TYPE_HINTS.get(t, ())
        if any(re.search(rf"\b{re.escape(h)}\b", low) for h in hints):
            return t
    return None


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


def _chunk_at(chunks: Sequence[Chunk], offset: int, default: str) -> str:
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
            begin = p.start + m.start()
            if begin < skip_before:
                continue
            para = " ".join(m.group(0).split())
            if len(para) < MIN_PASSAGE_CHARS:
                continue
            for piece, offset in _split_long(m.group(0), begin):
                piece = " ".join(piece.split())
                if len(piece) >= MIN_PASSAGE_CHARS:
                    out.append(Passage(piece, offset, _chunk_at(chunks, offset, default)))
    return out


def _pick(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        v = d.get(k)
        if v not in (None, "", []):
            return v
    return None


def _as_names(value: Any) -> list[str]:
    if value is None or isinstance(value, (dict, bool)):
        return []
    if isinstance(value, list):
        return [n for v in value for n in _as_names(v)]
    return [p.strip() for p in re.split(r"\s*[|;]\s*", str(value)) if p.strip()]


def _confidence(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    if x != x or x < 0:  # NaN or negative
        return None
    if x > 1:
        x = x / 10 if x <= 10 else x / 100 if x <= 100 else 1.0
    return round(min(x, 1.0), 4)


class _Extras:
    """Fields of the draft JSON that the shared parser does not keep: aliases, relation type, confidence."""

    def __init__(self, raw: str):
        self.aliases: dict[str, list[str]] = {}
        self.relations: dict[tuple[str, str], tuple[str | None, float | None]] = {}
        try:
            value = parse_json(strip_reasoning(raw))
        except ModelOutputError:
            return
        self._walk(value, 0)

    def _walk(self, value: Any, depth: int) -> None:
        if depth > 5:
            return
        if isinstance(value, list):
            for v in value:
                self._walk(v, depth + 1)
            return
        if not isinstance(value, dict):
            return
        d = {re.sub(r"[\s\-]+", "_", str(k).strip().lower()): v for k, v in value.items()}
        src, tgt = _pick(d, _SRC_KEYS), _pick(d, _TGT_KEYS)
        if isinstance(src, str) and isinstance(tgt, str):
            rtype = _pick(d, _RTYPE_KEYS)
            self.relations.setdefault((match_key(src), match_key(tgt)), (
                rtype if isinstance(rtype, str) else None, _confidence(_pick(d, _CONF_KEYS))))
            return
        name = _pick(d, _NAME_KEYS)
        if isinstance(name, str):
            aliases = _as_names(_pick(d, _ALIAS_KEYS))
            if aliases:
                self.aliases.setdefault(match_key(name), []).extend(aliases)
            return
        for v in d.values():
            if isinstance(v, (list, dict)):
                self._walk(v, depth + 1)


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
            value = _pick({str(k).lower(): v for k, v in value.items()},
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


class FastBioExtractor:
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
        self.threshold = float(getattr(ext, "refine_threshold", DEFAULT_REFINE_THRESHOLD))
        self.max_paragraphs = max(1, int(getattr(ext, "refine_paragraphs", DEFAULT_REFINE_PARAGRAPHS)))
        self.max_concurrency = int(getattr(ext, "max_chunk_concurrency", 0) or 0)
        self.dictionary = dictionary if dictionary is not None else dictionary_from_settings(ext)
        self.embed = embed
        self.similarity = "embedding" if embed is not None else "lexical"
        self.draft_prompt = load_prompt("fastbio_draft")
        self.refine_prompt = load_prompt("fastbio_refine")
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
            return text, _chunk_at(chunks, sections[0].start, default), 0
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

    async def _draft(self, doc: Document, abstract: str, chunk_id: str) -> Extraction:
        user = self.draft_prompt.user.format(title=doc.title or "", abstract=abstract)
        messages = [{"role": "system", "content": self._draft_system}, {"role": "user", "content": user}]
        result = await self._chat(messages, "extract", doc.id, DRAFT_SCHEMA)
        try:
            return self._parse_draft(result.text, chunk_id)
        except ModelOutputError as first:
            retry = messages + [{"role": "assistant", "content": result.text[:4000]},
                                {"role": "user", "content": REPAIR_NOTE}]
            again = await self._chat(retry, "extract", doc.id, DRAFT_SCHEMA)
            try:
                return self._parse_draft(again.text, chunk_id)
            except ModelOutputError:
                return Extraction(failures=[ChunkFailure(chunk_id, f"draft (abstract): {first.reason}", result.text)])

    async def _chat(self, messages: list[dict], purpose: str, doc_id: str, schema: dict | None = None):
        kwargs: dict[str, Any] = {"purpose": purpose, "document_id": doc_id}
        if schema is not None:
            kwargs.update(schema=schema, schema_name="biomedical_graph")
        return await self.llm.chat(messages, **kwargs)

    def _parse_draft(self, raw: str, chunk_id: str) -> Extraction:
        parsed = parse_extraction(raw, chunk_id, self.parse_types, default_type=OTHER_TYPE)
        extras = _Extras(raw)
        out = Extraction(failures=parsed.failures)
        for e in parsed.entities:
            aliases = extras.aliases.get(match_key(e.name), [])
            out.entities.append(EntityRecord(e.name, e.type, e.description, chunk_id, aliases=list(dict.fromkeys(aliases))))
        for r in parsed.relations:
            label, confidence = extras.relations.get((match_key(r.source), match_key(r.target)), (None, None))
            labels = [label] if label else []
            labels += [k for k in r.keywords if k not in labels]
            types = list(dict.fromkeys(t for t in (map_relation_type(x, self.relation_types) for x in labels) if t))
            out.relations.append(RelationRecord(
                r.source, r.target, r.description, chunk_id, keywords=types or labels[:2], strength=1.0,
                types=types, directed=True, confidence=confidence))
        return out

    # -- stage 2 ------------------------------------------------------------------------------

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
            result = await self._chat(messages, "refine", doc.id)
        else:
            async with limit:
                result = await self._chat(messages, "refine", doc.id)
        return clean_refined(result.text)


__all__ = ["DRAFT_SCHEMA", "FastBioExtractor", "Passage", "bio_entity_types", "clean_refined", "main_passages",
           "map_relation_type", "terms"]
