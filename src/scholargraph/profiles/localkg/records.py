"""A paper's local KG -> the records the pipeline commits (one unit of work per paper).

* sentences: the Deep Document Model's sentences (``sentences`` table);
* entities: one record per chunk an entity is mentioned in (the label, its category as type --
  Named Entity / General Concept / Other Entity --, the description on the first record, aliases
  that name no other entity of the paper), so the workspace's name resolution joins the local KG to
  the other papers' entities and citations resolve to paper, section and page;
* relations: one directed record per triple, with the canonical predicate as its type, the
  predicate as written as its keyword, and its evidence sentence and level; ``skos:broader`` links
  have the type ``skos:broader`` and the level "taxonomy";
* mentions: every mention with its sentence, span, section, page, category, types, description;
* content keywords: per chunk, the names of the named entities and general concepts it mentions;
* the local KG itself (``Extraction.local``): the paper's entities with their own descriptions,
  potential types, aliases, relevance and mentions, and its triples, stored apart from the workspace
  graph so that later papers never change it; each entity names the workspace entity it joins.

Entities that are only pronouns ("it") are left out, with their mentions and relations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ...models import (
    ChunkFailure,
    EntityRecord,
    Extraction,
    KeywordRecord,
    LocalGraph,
    LocalKGEntity,
    LocalKGRelation,
    MentionRecord,
    RelationRecord,
)
from ...text.names import normalise_name
from .document import Paper
from .linking import LocalEntity, is_referential
from .local_relations import LocalTriple
from .taxonomy import BROADER, Broader

CATEGORY_TYPE = {"named": "Named Entity", "general": "General Concept", "other": "Other Entity"}
TYPE_CATEGORY = {v: k for k, v in CATEGORY_TYPE.items()}
KEYWORDS_PER_CHUNK = 8


def to_extraction(paper: Paper, entities: Sequence[LocalEntity], triples: Sequence[LocalTriple],
                  broader: Sequence[Broader], failures: Sequence[ChunkFailure] = (),
                  relevance: dict[int, float] | None = None) -> Extraction:
    chunk_of = {s.ordinal: s.chunk_id for s in paper.sentences}
    kept = {e.index: e for e in entities if not is_referential(e.label)}
    evidence_chunk = {b.broader: chunk_of[b.sentence] for b in reversed(broader)}  # concepts without mentions
    out = Extraction(sentences=paper.records(), failures=list(failures))
    aliases = _safe_aliases(list(kept.values()))
    for e in kept.values():
        chunks = list(dict.fromkeys(chunk_of[m.sentence] for m in e.mentions)) or [evidence_chunk.get(e.index, "")]
        if not chunks[0]:
            continue
        kind = CATEGORY_TYPE.get(e.category, "Other Entity")
        out.entities.append(EntityRecord(e.label, kind, e.description, chunks[0], aliases[e.index]))
        out.entities += [EntityRecord(e.label, kind, "", c) for c in chunks[1:]]
        out.mentions += [_mention(paper, e, m) for m in e.mentions]
    for t in triples:
        if t.subject in kept and t.object in kept:
            s, o, p = kept[t.subject].label, kept[t.object].label, t.canonical or t.predicate
            out.relations.append(RelationRecord(s, o, f"{s} {p} {o}.", chunk_of[t.sentence], [t.predicate], 1.0, [p],
                                                True, sentence=t.sentence, level=t.level))
    for b in broader:
        if b.narrower in kept and b.broader in kept:
            n, g = kept[b.narrower].label, kept[b.broader].label
            out.relations.append(RelationRecord(n, g, f"{n} is a kind of {g}.", chunk_of[b.sentence], [b.type], 1.0,
                                                [BROADER], True, sentence=b.sentence, level="taxonomy"))
    out.keywords = _keywords(list(kept.values()), chunk_of)
    out.local = local_graph(paper, list(kept.values()), triples, broader, aliases, relevance or {})
    return out


def local_graph(paper: Paper, kept: Sequence[LocalEntity], triples: Sequence[LocalTriple], broader: Sequence[Broader],
                aliases: dict[int, list[str]], relevance: dict[int, float]) -> LocalGraph:
    """The paper's local KG as paper2lkg builds it (its own entities and triples, local ids)."""
    ids = {e.index for e in kept}
    entities = [LocalKGEntity(e.index, e.label, e.category, list(e.types), e.description, list(e.aliases),
                              relevance.get(e.index), [(m.sentence, m.start, m.end) for m in e.mentions],
                              entity=e.label) for e in kept]
    relations = [LocalKGRelation(t.subject, t.predicate, t.object, t.canonical or t.predicate, t.sentence, t.level)
                 for t in triples if t.subject in ids and t.object in ids]
    relations += [LocalKGRelation(b.narrower, b.type, b.broader, BROADER, b.sentence, "taxonomy")
                  for b in broader if b.narrower in ids and b.broader in ids]
    return LocalGraph(paper.doc.id, entities, relations)


def _safe_aliases(entities: list[LocalEntity]) -> dict[int, list[str]]:
    """Aliases that name exactly one entity of the paper (an alias two entities share, or another
    entity's label, would merge them when the workspace resolves names)."""
    labels = Counter(normalise_name(e.label) for e in entities)
    owners = Counter(k for e in entities for k in {normalise_name(a) for a in e.aliases})
    out = {}
    for e in entities:
        own = normalise_name(e.label)
        out[e.index] = [a for a in e.aliases if (k := normalise_name(a)) and k != own and owners[k] == 1
                        and k not in labels]
    return out


def _mention(paper: Paper, e: LocalEntity, m) -> MentionRecord:
    sentence = paper.sentences[m.sentence]
    heading = paper.section_of(sentence).heading or None
    return MentionRecord(m.surface, m.sentence, m.start, m.end, sentence.chunk_id, entity=e.label, category=m.category,
                         types=list(m.types), description=m.description, level=m.level, sentence=sentence.text,
                         section=heading, page=sentence.page)


def _keywords(entities: list[LocalEntity], chunk_of: dict[int, str]) -> list[KeywordRecord]:
    per_chunk: dict[str, Counter[str]] = {}
    for e in entities:
        if e.category not in ("named", "general"):
            continue
        for m in e.mentions:
            per_chunk.setdefault(chunk_of[m.sentence], Counter())[e.label] += 1
    return [KeywordRecord(label, chunk) for chunk, counts in per_chunk.items()
            for label, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:KEYWORDS_PER_CHUNK]]
