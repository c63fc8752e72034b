"""bio query mode (seed 003 §2.5, §3.1): question -> gene/disease names and wanted types -> filters on
the graph -> every relation description above a similarity threshold -> one answer per batch of
evidence -> one merged answer citing papers.

1. Parse (purpose ``parse``): the LLM names the genes (HGNC symbols), diseases (MeSH headings),
   other named entities, and the entity/relation types the question asks for; names go through
   the same dictionary as indexing. Without an LLM (or when its output is unusable), names are
   found by matching the question's word n-grams against the graph's entity names and aliases,
   types by type words ("genes", "pathways", "biomarker", "up-regulated", ...).
2. Filter: a relation must touch a named gene/other entity (when any was found) and a named
   disease (when any), have an end of a wanted entity type, and one of the wanted relation types;
   optionally an edge weight (``graph.weights``) at or above ``weight_threshold``. Type filters
   that leave nothing are relaxed, with a note.
3. Search: every relation whose vector is at least ``query.bio_threshold`` similar to the
   question (``VectorIndex.above`` -- no fixed cap, seed 003 §2.5); when none is, the
   ``query.top_k`` most similar that pass the filters, with a note.
4. Evidence is grouped per paper: each numbered source is one paper (id, title, journal, year)
   with the descriptions of its matched relations (per-paper descriptions, from
   ``relation_sources``). Papers are ordered by best similarity, then paper weight.
5. Answer (purpose ``answer``): one call per batch of papers that fits
   ``query.max_context_tokens`` (concurrently), then one merge call when there was more than one
   batch; ``[n]`` citations are verified against the papers. A failed batch only loses its own
   papers. Without an LLM the answer is extractive.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from ..errors import ConfigError, LLMError, LLMUnavailableError, ModelOutputError
from ..extract.bio_normalise import BioDictionary, dictionary_from_settings, match_key
from ..extract.fastbio import RELATION_TYPE_HINTS, bio_entity_types, map_relation_type
from ..extract.json_repair import coerce, parse_json
from ..extract.text_utils import fold_plural, normalise_name
from ..extract.types import BIO_RELATION_TYPES
from ..graph.weights import combine, node_weights, paper_weight
from ..llm.wire import estimate_tokens
from ..models import Answer, Source
from ..prompts import load_prompt
from .citations import verify_citations
from .engine import Retrieval, merge_usage
from .extractive import extractive_answer

DEFAULT_THRESHOLD = 0.3
MAX_NGRAM = 5
_BATCH = 400

_S = {"type": "string"}
_LIST = {"type": "array", "items": _S}
PARSE_SCHEMA = {
    "type": "object",
    "properties": {"genes": _LIST, "diseases": _LIST, "other": _LIST, "entity_types": _LIST, "relation_types": _LIST},
}

# question words that ask for an entity type (after plural folding), beyond the type names themselves
ENTITY_TYPE_HINTS = {
    "gene": "Gene/Protein", "protein": "Gene/Protein", "mutation": "Genetic Variation", "variant": "Genetic Variation",
    "variation": "Genetic Variation", "snp": "Genetic Variation", "polymorphism": "Genetic Variation",
    "allele": "Genetic Variation", "drug": "Drug/Compound", "compound": "Drug/Compound", "medication": "Drug/Compound",
    "treatment": "Drug/Compound", "pathway": "Pathway", "disease": "Disease", "disorder": "Disease",
    "comorbidity": "Disease", "cell": "Cell Type", "tissue": "Anatomy", "organ": "Anatomy", "symptom": "Phenotype",
    "phenotype": "Phenotype",
}
_QWORD = re.compile(r"[^\W_]+(?:[-'’/.][^\W_]+)*", re.UNICODE)
_STOP = frozenset(
    "a an the of in on for to and or is are was were be been by with as at from that this these those which what who whom "
    "how why when where does do did can could should would may might it its their there than then into about over under "
    "between among also not no yes such other any all some most more less very role roles effect effects associated "
    "association related relationship relationships involved contribute contributes cause causes known list "
    "tell me please give find show up down".split())


@dataclass
class BioQuery:
    genes: list[str] = field(default_factory=list)
    diseases: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    entity_types: list[str] = field(default_factory=list)
    relation_types: list[str] = field(default_factory=list)
    parsed_by: str = "vocabulary"  # llm | vocabulary

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Evidence:
    relation_id: str
    source: str
    target: str
    types: list[str]
    description: str
    document_id: str
    chunk_id: str
    similarity: float
    edge_weight: float | None = None
    confidence: float | None = None

    def line(self) -> str:
        kind = f" ({', '.join(self.types)})" if self.types else ""
        return f"{self.source} -> {self.target}{kind}: {self.description}"


# --------------------------------------------------------------------------------------------
# settings (read with defaults, so the module works before the fields exist)
# --------------------------------------------------------------------------------------------


def _threshold(settings, given: float | None) -> float:
    return float(given if given is not None else getattr(settings.query, "bio_threshold", DEFAULT_THRESHOLD))


def _edge_combine(settings) -> str:
    return str(getattr(settings.query, "bio_edge_weight", "min"))


def _weight_threshold(settings, given: float | None) -> float | None:
    return given if given is not None else getattr(settings.query, "bio_min_edge_weight", None)


def _relation_types(settings) -> list[str]:
    return list(settings.extraction.relation_types or BIO_RELATION_TYPES)


def _entity_types(settings) -> list[str]:
    return bio_entity_types(settings.extraction.entity_types)


# --------------------------------------------------------------------------------------------
# 1. parsing the question
# --------------------------------------------------------------------------------------------


def _map_entity_type(raw: str, types: Sequence[str]) -> str | None:
    key = match_key(raw)
    if not key:
        return None
    for t in types:
        if match_key(t) == key or any(match_key(p) == key for p in t.split("/")):
            return t
    word = fold_plural(raw.strip().split()[-1].casefold()) if raw.strip() else ""
    hinted = ENTITY_TYPE_HINTS.get(word)
    if hinted in types:
        return hinted
    for t in types:
        if any(fold_plural(p.strip().casefold()) == word for p in re.split(r"[/\s]+", t)):
            return t
    return None


def _words(question: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _QWORD.finditer(question)]


def vocabulary_parse(store, question: str, settings, dictionary: BioDictionary | None = None) -> tuple[BioQuery, dict[str, list[str]]]:
    """Names by matching word n-grams of the question against entity names/aliases (and the
    dictionary); types by type words. Returns the query and name -> entity ids."""
    words = _words(question)
    spans: list[tuple[int, int, str]] = []  # (first word, end word, text)
    for n in range(min(MAX_NGRAM, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            text = question[words[i][1] : words[i + n - 1][2]]
            if n == 1 and (text.casefold() in _STOP or len(text) < 2):
                continue
            spans.append((i, i + n, text))
    keys: dict[str, list[int]] = {}
    for idx, (_, _, text) in enumerate(spans):
        variants = [text]
        if dictionary is not None and (hit := dictionary.lookup(text)) is not None:
            variants.append(hit.name)
        for v in variants:
            k = normalise_name(v)
            if k:
                keys.setdefault(k, []).append(idx)
    known = store.entities_by_keys(list(keys)) if keys else {}
    matched: dict[int, str] = {}
    for k, ids in keys.items():
        if k in known:
            for idx in ids:
                matched.setdefault(idx, known[k])
    taken: set[int] = set()
    found: list[tuple[int, str, str]] = []  # (first word, text, entity id)
    for idx, (a, b, text) in enumerate(spans):  # longest first: spans are ordered by length
        if idx not in matched or any(w in taken for w in range(a, b)):
            continue
        taken.update(range(a, b))
        found.append((a, text, matched[idx]))
    resolved: dict[str, list[str]] = {}
    for _, text, entity_id in sorted(found):  # in question order
        resolved.setdefault(text, []).append(entity_id)
    ents = store.get_entities({e for ids in resolved.values() for e in ids})
    q = BioQuery(parsed_by="vocabulary")
    for name, ids in resolved.items():
        types = {ents[i].type for i in ids if i in ents}
        (q.diseases if "Disease" in types else q.genes if types & {"Gene/Protein"} else q.other).append(name)
    etypes = _entity_types(settings)
    for i, (w, _, _) in enumerate(words):
        if i in taken:
            continue
        t = _map_entity_type(w, etypes)
        asks = fold_plural(w.casefold()) != w.casefold() or (i > 0 and words[i - 1][0].casefold() in {"which", "what"})
        if t and t not in q.entity_types and asks:
            q.entity_types.append(t)  # "which genes", "what pathway": the question asks for that type
    low = " ".join(w.casefold() for i, (w, _, _) in enumerate(words) if i not in taken)
    for t in _relation_types(settings):
        hints = (t.casefold(), *RELATION_TYPE_HINTS.get(t, ()))
        if any(re.search(rf"\b{re.escape(h)}\b", low) for h in hints):
            q.relation_types.append(t)
    return q, resolved


async def llm_parse(llm, question: str, settings) -> BioQuery:
    prompt = load_prompt("bio_parse")
    messages = prompt.messages(types=", ".join(_entity_types(settings)),
                               relation_types=", ".join(_relation_types(settings)), question=question)
    result = await llm.chat(messages, purpose="parse", schema=PARSE_SCHEMA, schema_name="bio_query")
    value = parse_json(result.text)
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, dict)), None)
    if not isinstance(value, dict):
        raise ModelOutputError("question parse: expected a JSON object", result.text)
    value = {re.sub(r"[\s\-]+", "_", str(k).lower()): v for k, v in value.items()}
    for alias, key in (("gene", "genes"), ("disease", "diseases"), ("types", "entity_types"),
                       ("output_types", "entity_types"), ("relationship_types", "relation_types")):
        if alias in value and key not in value:
            value[key] = value[alias]
    data, _ = coerce({k: v for k, v in value.items() if k in PARSE_SCHEMA["properties"]}, PARSE_SCHEMA)
    etypes, rtypes = _entity_types(settings), _relation_types(settings)

    def clean(items) -> list[str]:
        return list(dict.fromkeys(" ".join(str(x).split()) for x in items or [] if str(x).strip()))

    return BioQuery(
        genes=clean(data.get("genes")), diseases=clean(data.get("diseases")), other=clean(data.get("other")),
        entity_types=list(dict.fromkeys(t for t in (_map_entity_type(x, etypes) for x in clean(data.get("entity_types"))) if t)),
        relation_types=list(dict.fromkeys(t for t in (map_relation_type(x, rtypes) for x in clean(data.get("relation_types"))) if t)),
        parsed_by="llm")


def resolve_names(store, names: Sequence[str], dictionary: BioDictionary | None) -> dict[str, list[str]]:
    """name -> entity ids, normalised the same way as indexing (dictionary, then the graph's name keys)."""
    out: dict[str, list[str]] = {}
    for name in names:
        variants = [name]
        if dictionary is not None and (hit := dictionary.lookup(name)) is not None:
            variants.append(hit.name)
        known = store.entities_by_keys([k for k in (normalise_name(v) for v in variants) if k])  # indexed
        ids = list(known.values())
        if ids:
            out[name] = list(dict.fromkeys(ids))
    return out


# --------------------------------------------------------------------------------------------
# 2.-4. filters, search, evidence
# --------------------------------------------------------------------------------------------


def _relation_rows(store, ids: Sequence[str]) -> dict[str, tuple[str, str, list[str], str, str, str, str]]:
    """id -> (source id, target id, types, source name, source type, target name, target type)."""
    out = {}
    for i in range(0, len(ids), _BATCH):
        part = list(ids[i : i + _BATCH])
        rows = store.conn.execute(
            f"""SELECT r.id, r.source_id, r.target_id, r.types, s.name, s.type, t.name, t.type
                FROM relations r JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id
                WHERE r.id IN ({','.join('?' * len(part))})""", part)
        for r in rows:
            out[r[0]] = (r[1], r[2], json.loads(r[3] or "[]"), r[4], r[5], r[6], r[7])
    return out


def _sources_of(store, ids: Sequence[str]) -> list[tuple[str, str, str, str, str, float | None]]:
    """(relation id, document id, chunk id, description, types json, confidence) per relation source."""
    out = []
    for i in range(0, len(ids), _BATCH):
        part = list(ids[i : i + _BATCH])
        out += [tuple(r) for r in store.conn.execute(
            f"""SELECT relation_id, document_id, chunk_id, description, types, confidence FROM relation_sources
                WHERE relation_id IN ({','.join('?' * len(part))}) ORDER BY document_id, rowid""", part)]
    return out


@dataclass
class _Filters:
    named: set[str]  # gene / other entity ids
    diseases: set[str]
    entity_types: set[str]
    relation_types: set[str]

    def names_ok(self, row) -> bool:
        ends = {row[0], row[1]}
        return (not self.named or bool(ends & self.named)) and (not self.diseases or bool(ends & self.diseases))

    def types_ok(self, row, use_entity: bool, use_relation: bool) -> bool:
        if use_entity and self.entity_types and not ({row[4], row[6]} & self.entity_types):
            return False
        return not (use_relation and self.relation_types and not (set(row[2]) & self.relation_types))


async def bio_retrieve(store, settings, embedder, llm, question: str, weight_threshold: float | None = None, *,
                       dictionary: BioDictionary | None = None, threshold: float | None = None) -> Retrieval:
    """Numbered paper sources for ``question`` (see the module doc); no answer is generated."""
    if not question.strip():
        raise ConfigError("the question is empty")
    t0 = time.perf_counter()
    retrieval = Retrieval(question, "bio", [], "", {})
    if dictionary is None:
        dictionary = dictionary_from_settings(settings.extraction)
    before = llm.usage_snapshot() if llm is not None else {}
    query, resolved = None, {}
    if llm is not None:
        try:
            query = await llm_parse(llm, question, settings)
        except LLMUnavailableError:
            raise
        except (ModelOutputError, LLMError) as exc:
            retrieval.notes.append(f"question parse by the LLM failed ({exc}); names matched against the graph instead")
    if query is None:
        query, resolved = vocabulary_parse(store, question, settings, dictionary)
    else:
        resolved = resolve_names(store, query.genes + query.diseases + query.other, dictionary)
        missing = [n for n in query.genes + query.diseases + query.other if n not in resolved]
        if missing:
            retrieval.notes.append(f"not in the graph: {', '.join(missing)} (no filter on them)")
    retrieval.timings["parse_s"] = time.perf_counter() - t0
    filters = _Filters(
        named={i for n in query.genes + query.other for i in resolved.get(n, [])},
        diseases={i for n in query.diseases for i in resolved.get(n, [])},
        entity_types=set(query.entity_types), relation_types=set(query.relation_types))
    retrieval.details["parsed"] = query.to_json()
    retrieval.details["matched_entities"] = resolved

    t = time.perf_counter()
    cutoff = _threshold(settings, threshold)
    min_weight = _weight_threshold(settings, weight_threshold)
    how = _edge_combine(settings)
    evidence = await _search(store, settings, embedder, question, filters, cutoff, min_weight, how, retrieval)
    retrieval.timings["search_s"] = time.perf_counter() - t

    t = time.perf_counter()
    retrieval.sources = _paper_sources(store, evidence)
    retrieval.context = format_papers(retrieval.sources)
    retrieval.details.update({"threshold": cutoff, "edge_weight": how, "weight_threshold": min_weight,
                              "relations": len({e.relation_id for e in evidence}), "papers": len(retrieval.sources)})
    retrieval.timings["context_s"] = time.perf_counter() - t
    retrieval.timings["retrieval_s"] = time.perf_counter() - t0
    if llm is not None:
        retrieval.usage = merge_usage(llm.usage_since(before))
    return retrieval


async def _search(store, settings, embedder, question, filters: _Filters, cutoff: float, min_weight: float | None,
                  how: str, retrieval: Retrieval) -> list[Evidence]:
    if store.count("relations") == 0:
        retrieval.notes.append("the graph has no relations (index with --profile fastbio)")
        return []
    qvec = await embedder.embed_one(question)
    index = store.vector_index("relation", embedder.dim)
    hits = dict(index.above(qvec, cutoff))
    rows = _relation_rows(store, list(hits))
    rows = {rid: row for rid, row in rows.items() if filters.names_ok(row)}
    fallback = False
    if not rows:  # nothing above the threshold: the most similar relations that pass the filters
        top_k = settings.query.top_k
        allowed = _named_candidates(store, filters)
        near = index.search(qvec, top_k * 5 if allowed is None else top_k, allowed=allowed)
        near_rows = _relation_rows(store, [i for i, _ in near])
        rows = {i: near_rows[i] for i, _ in near if i in near_rows and filters.names_ok(near_rows[i])}
        hits = {i: s for i, s in near if i in rows}
        fallback = bool(rows)
    kept = _apply_type_filters(rows, filters, retrieval)
    if fallback:
        kept = dict(sorted(kept.items(), key=lambda kv: -hits[kv[0]])[: settings.query.top_k])
        if kept:
            retrieval.notes.append(f"no relation is {cutoff:.2f} similar to the question; showing the {len(kept)} "
                                   "most similar that pass the filters")
    weights: dict[str, float] = {}
    if kept:
        nodes = node_weights(store, {e for row in kept.values() for e in row[:2]})
        weights = {rid: combine(nodes[row[0]], nodes[row[1]], how) for rid, row in kept.items()}
    if min_weight is not None:
        dropped = [rid for rid in kept if weights[rid] < min_weight]
        for rid in dropped:
            del kept[rid]
        if dropped:
            retrieval.notes.append(f"{len(dropped)} relation(s) below the edge-weight threshold {min_weight:g} left out")
    out = []
    for rid, doc_id, chunk_id, desc, types_json, confidence in _sources_of(store, list(kept)):
        row = kept[rid]
        types = list(dict.fromkeys(json.loads(types_json or "[]") or row[2]))
        out.append(Evidence(rid, row[3], row[5], types, desc, doc_id, chunk_id, float(hits[rid]), weights.get(rid),
                            confidence))
    return out


def _named_candidates(store, filters: _Filters) -> set[str] | None:
    ids = list(filters.named or filters.diseases)
    if not ids:
        return None
    out: set[str] = set()
    for i in range(0, len(ids), _BATCH):
        part = ids[i : i + _BATCH]
        marks = ",".join("?" * len(part))
        out.update(r[0] for r in store.conn.execute(
            f"SELECT id FROM relations WHERE source_id IN ({marks}) OR target_id IN ({marks})", part + part))
    return out


def _apply_type_filters(rows: dict, filters: _Filters, retrieval: Retrieval) -> dict:
    """Entity- and relation-type filters; a filter that would leave nothing is dropped, with a note."""
    if not rows:
        return {}
    steps = [(True, True, "")]
    if filters.relation_types:
        steps.append((True, False, "no matching relation has the asked relation type(s) "
                                   f"({', '.join(sorted(filters.relation_types))}); relation types not used as a filter"))
    if filters.entity_types:
        steps.append((False, False, "no matching relation has an end of the asked entity type(s) "
                                    f"({', '.join(sorted(filters.entity_types))}); entity types not used as a filter"))
    for use_entity, use_relation, note in steps:
        kept = {rid: row for rid, row in rows.items() if filters.types_ok(row, use_entity, use_relation)}
        if kept:
            if note:
                retrieval.notes.append(note)
            return kept
    return {}


def _paper_sources(store, evidence: list[Evidence]) -> list[Source]:
    by_doc: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_doc.setdefault(e.document_id, []).append(e)
    docs = store.documents_by_id(by_doc)
    weights = {d: paper_weight(docs[d].metadata) if d in docs else None for d in by_doc}

    def rank(d: str) -> tuple:
        return (-max(e.similarity for e in by_doc[d]), -(weights[d] if weights[d] is not None else float("-inf")), d)

    sources = []
    for n, doc_id in enumerate(sorted(by_doc, key=rank), start=1):
        items = sorted(by_doc[doc_id], key=lambda e: -e.similarity)
        lines = list(dict.fromkeys(e.line() for e in items if e.description))
        doc = docs.get(doc_id)
        sources.append(Source(
            number=n, kind="relation", chunk_id=items[0].chunk_id, document_id=doc_id,
            title=doc.title if doc else None, section=None, page_start=None, page_end=None, text="\n".join(lines),
            score=items[0].similarity, authors=doc.authors if doc else [], year=doc.year if doc else None,
            venue=doc.venue if doc else None))
    return sources


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


# --------------------------------------------------------------------------------------------
# 5. answers
# --------------------------------------------------------------------------------------------


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


async def bio_answer(store, settings, embedder, llm, question: str, weight_threshold: float | None = None, *,
                     dictionary: BioDictionary | None = None, threshold: float | None = None,
                     on_text: Callable[[str], None] | None = None, batch_tokens: int | None = None) -> Answer:
    """The bio-mode answer: per-batch answers merged into one, citing numbered papers.

    ``batch_tokens`` (default ``query.max_context_tokens``) is the evidence per answer call."""
    retrieval = await bio_retrieve(store, settings, embedder, llm, question, weight_threshold, dictionary=dictionary,
                                   threshold=threshold)
    answer = Answer(question, "", "bio", retrieval.sources, usage=merge_usage(retrieval.usage),
                    timings=dict(retrieval.timings), context=retrieval.context, notes=list(retrieval.notes))
    if not retrieval.sources:
        answer.text = "No relation in the graph matches the question (is the workspace indexed with --profile fastbio?)."
        if on_text:
            on_text(answer.text)
        return answer
    t0 = time.perf_counter()
    if llm is None:
        answer.text, answer.cited = extractive_answer(question, retrieval.sources)
        answer.extractive = True
    else:
        before = llm.usage_snapshot()
        budget = batch_tokens or settings.query.max_context_tokens
        raw = await _generate(llm, settings, question, retrieval.sources, answer.notes, budget)
        check = verify_citations(raw, {s.number for s in retrieval.sources})
        answer.text, answer.cited, answer.removed_citations = check.text.strip(), check.cited, check.removed
        if check.removed:
            answer.notes.append(f"removed citation(s) {check.removed}: not among the {len(retrieval.sources)} papers")
        answer.usage = merge_usage(answer.usage, llm.usage_since(before))
    answer.timings["generation_s"] = time.perf_counter() - t0
    if on_text:
        on_text(answer.text)
    return answer


async def _generate(llm, settings, question: str, sources: list[Source], notes: list[str], budget: int) -> str:
    count = getattr(llm, "count_tokens", None) or estimate_tokens
    groups = batches(sources, budget, count)
    prompt = load_prompt("bio_answer")
    language = _language(settings)

    async def one(group: list[Source]) -> str:
        messages = prompt.messages(context=format_papers(group), question=question, language=language)
        result = await llm.chat(messages, purpose="answer")
        # numbers outside this batch are invented: drop them before the merge sees them
        return verify_citations(result.text, {s.number for s in group}).text.strip()

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
    merge = load_prompt("bio_merge")
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


__all__ = ["BioQuery", "Evidence", "batches", "bio_answer", "bio_retrieve", "format_papers", "format_references",
           "llm_parse", "resolve_names", "vocabulary_parse"]
