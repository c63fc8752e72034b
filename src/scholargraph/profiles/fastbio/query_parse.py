"""bio query mode, step 1 (``.query``): the question parsed into gene/disease/other names and the
entity/relation types it asks for -- by the LLM (``llm_parse``, purpose ``parse``), or by matching
the question's word n-grams against the graph's entity names and aliases (``vocabulary_parse``) --
and the names resolved to entity ids (``resolve_names``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ...errors import ModelOutputError
from ...extract.types import BIO_RELATION_TYPES
from ...llm.output import Items, LenientModel, Text, output_schema, validate
from ...llm.repair import parse_json
from ...prompts import load_prompt
from ...text.names import fold_plural, normalise_name
from ...text.stopwords import QUESTION_WORDS, STOPWORDS
from .extractor import RELATION_TYPE_HINTS, bio_entity_types, map_relation_type
from .normalise import BioDictionary, match_key

MAX_NGRAM = 5



class BioQueryReply(LenientModel):
    """The LLM's parse of a question: the names it mentions and the types it asks for."""

    genes: Items[Text] | None = None
    diseases: Items[Text] | None = None
    other: Items[Text] | None = None
    entity_types: Items[Text] | None = None
    relation_types: Items[Text] | None = None


PARSE_SCHEMA = output_schema(BioQueryReply)

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
_STOP = STOPWORDS | QUESTION_WORDS


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


# settings (read with defaults, so the module works before the fields exist)
def _relation_types(settings) -> list[str]:
    return list(settings.extraction.relation_types or BIO_RELATION_TYPES)


def _entity_types(settings) -> list[str]:
    return bio_entity_types(settings.extraction.entity_types)


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


def _ngram_spans(question: str, words: list[tuple[str, int, int]]) -> list[tuple[int, int, str]]:
    """(first word, end word, text) of every n-gram up to MAX_NGRAM words, longest first; single
    stopwords and one-letter words left out."""
    spans: list[tuple[int, int, str]] = []
    for n in range(min(MAX_NGRAM, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            text = question[words[i][1] : words[i + n - 1][2]]
            if n == 1 and (text.casefold() in _STOP or len(text) < 2):
                continue
            spans.append((i, i + n, text))
    return spans


def _matched_spans(store, spans: list[tuple[int, int, str]], dictionary: BioDictionary | None) -> dict[int, str]:
    """span index -> entity id, for the spans whose name key (or their dictionary name's) the graph has."""
    keys: dict[str, list[int]] = {}
    for idx, (_, _, text) in enumerate(spans):
        variants = [text]
        if dictionary is not None and (hit := dictionary.lookup(text)) is not None:
            variants.append(hit.name)
        for k in filter(None, (normalise_name(v) for v in variants)):
            keys.setdefault(k, []).append(idx)
    known = store.entities_by_keys(list(keys)) if keys else {}
    matched: dict[int, str] = {}
    for k, ids in keys.items():
        if k in known:
            for idx in ids:
                matched.setdefault(idx, known[k])
    return matched


def _longest_matches(spans: list[tuple[int, int, str]], matched: dict[int, str]) -> tuple[dict[str, list[str]], set[int]]:
    """Matched spans, longest first, that overlap no longer one: name -> entity ids in question order,
    and the words they take."""
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
    return resolved, taken


def _sort_names(store, resolved: dict[str, list[str]], q: BioQuery) -> None:
    """Each name to diseases, genes or other, by the types of its entities."""
    ents = store.get_entities({e for ids in resolved.values() for e in ids}, sources=False)
    for name, entity_ids in resolved.items():
        types = {ents[i].type for i in entity_ids if i in ents}
        (q.diseases if "Disease" in types else q.genes if types & {"Gene/Protein"} else q.other).append(name)


def _asked_entity_types(words: list[tuple[str, int, int]], taken: set[int], etypes: Sequence[str]) -> list[str]:
    """Types the question asks for: a plural type word or one after which/what ("which genes",
    "what pathway"), among the words no name took."""
    asked: list[str] = []
    for i, (w, _, _) in enumerate(words):
        if i in taken:
            continue
        t = _map_entity_type(w, etypes)
        asks = fold_plural(w.casefold()) != w.casefold() or (i > 0 and words[i - 1][0].casefold() in {"which", "what"})
        if t and t not in asked and asks:
            asked.append(t)
    return asked


def _asked_relation_types(words: list[tuple[str, int, int]], taken: set[int], rtypes: Sequence[str]) -> list[str]:
    """Relation types whose name or a hint word appears among the words no name took."""
    low = " ".join(w.casefold() for i, (w, _, _) in enumerate(words) if i not in taken)
    return [t for t in rtypes
            if any(re.search(rf"\b{re.escape(h)}\b", low) for h in (t.casefold(), *RELATION_TYPE_HINTS.get(t, ())))]


def vocabulary_parse(store, question: str, settings, dictionary: BioDictionary | None = None) -> tuple[BioQuery, dict[str, list[str]]]:
    """Names by matching word n-grams of the question against entity names/aliases (and the
    dictionary); types by type words. Returns the query and name -> entity ids."""
    words = _words(question)
    spans = _ngram_spans(question, words)
    resolved, taken = _longest_matches(spans, _matched_spans(store, spans, dictionary))
    q = BioQuery(parsed_by="vocabulary")
    _sort_names(store, resolved, q)
    q.entity_types = _asked_entity_types(words, taken, _entity_types(settings))
    q.relation_types = _asked_relation_types(words, taken, _relation_types(settings))
    return q, resolved


async def llm_parse(llm, question: str, settings) -> BioQuery:
    prompt = load_prompt("bio_parse", __package__)
    messages = prompt.messages(types=", ".join(_entity_types(settings)),
                               relation_types=", ".join(_relation_types(settings)), question=question)
    result = await llm.chat(messages, purpose="parse", schema=PARSE_SCHEMA, schema_name="bio_query", parse=parse_json)
    if result.error is not None:
        raise ModelOutputError(f"question parse: {result.error}", result.text)
    value = result.parsed
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, dict)), None)
    if not isinstance(value, dict):
        raise ModelOutputError("question parse: expected a JSON object", result.text)
    value = {re.sub(r"[\s\-]+", "_", str(k).lower()): v for k, v in value.items()}
    for alias, key in (("gene", "genes"), ("disease", "diseases"), ("types", "entity_types"),
                       ("output_types", "entity_types"), ("relationship_types", "relation_types")):
        if alias in value and key not in value:
            value[key] = value[alias]
    data = validate(value, BioQueryReply)
    etypes, rtypes = _entity_types(settings), _relation_types(settings)

    def clean(items) -> list[str]:
        return list(dict.fromkeys(" ".join(str(x).split()) for x in items or [] if str(x).strip()))

    def names(items) -> list[str]:  # "Which", "genes": the question's grammar, not an entity
        return [n for n in clean(items) if n.casefold() not in _STOP]

    return BioQuery(
        genes=names(data.genes), diseases=names(data.diseases), other=names(data.other),
        entity_types=list(dict.fromkeys(t for t in (_map_entity_type(x, etypes) for x in clean(data.entity_types)) if t)),
        relation_types=list(dict.fromkeys(t for t in (map_relation_type(x, rtypes) for x in clean(data.relation_types)) if t)),
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


__all__ = ["ENTITY_TYPE_HINTS", "MAX_NGRAM", "PARSE_SCHEMA", "BioQuery", "BioQueryReply", "llm_parse", "resolve_names",
           "vocabulary_parse"]
