"""Extraction records of one document -> the same records resolved (entity, relation and keyword ids).

Pure: the only input from storage is ``known``, the ids that existing entities are already
known by (name key -> entity id), so this can be tested without a database.

Within the document, names that a record declares as aliases (an acronym and its
definition) are the same entity; across documents, a name key that an existing entity is
known by resolves to it — so "RAG" in a second paper joins the entity that the first paper
defined as "Retrieval-Augmented Generation (RAG)".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

from ..models import EntityRecord, Extraction, GraphWrites, KeywordRecord, RelationRecord

KeyFn = Callable[[str], str]


def short_hash(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()[:20]


def entity_id_for(key: str) -> str:
    return f"e_{short_hash(key)}"


def relation_id_for(source_id: str, target_id: str, directed: bool) -> str:
    a, b = (source_id, target_id) if directed else tuple(sorted((source_id, target_id)))
    return f"r_{short_hash(f'{a}|{b}|{int(directed)}')}"


def keyword_id_for(key: str) -> str:
    return f"k_{short_hash(key)}"


class _KeyGroups:
    """Union-find over name keys of one document."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def entity_keys(extraction: Extraction, key_fn: KeyFn) -> list[str]:
    keys = []
    for e in extraction.entities:
        keys.append(key_fn(e.name))
        keys += [key_fn(a) for a in e.aliases]
    for r in extraction.relations:
        keys += [key_fn(r.source), key_fn(r.target)]
    return [k for k in dict.fromkeys(keys) if k]


def plan_writes(doc_id: str, extraction: Extraction, key_fn: KeyFn, known: Mapping[str, str]) -> GraphWrites:
    groups = _KeyGroups()
    for e in extraction.entities:
        base = key_fn(e.name)
        for alias in e.aliases:
            if key_fn(alias):
                groups.union(base, key_fn(alias))
    ids = _resolve_ids(groups, entity_keys(extraction, key_fn), known)
    out = GraphWrites()
    seen: set[str] = set()
    for e in extraction.entities:
        key = key_fn(e.name)
        if not key:
            continue
        aliases = [(a, key_fn(a)) for a in e.aliases if key_fn(a) and key_fn(a) != key]
        out.entities.append(EntityRecord(e.name.strip(), e.type, e.description.strip(), e.chunk_id, [a for a, _ in aliases],
                                         id=ids[key], key=key, alias_keys=[k for _, k in aliases], document_id=doc_id))
        seen.add(ids[key])
    for r in extraction.relations:
        src_key, tgt_key = key_fn(r.source), key_fn(r.target)
        if not src_key or not tgt_key or src_key == tgt_key:
            continue
        for name, key in ((r.source, src_key), (r.target, tgt_key)):
            if ids[key] not in seen:  # named only in a relation: still a node, typed later if ever
                out.entities.append(EntityRecord(name.strip(), "", "", r.chunk_id, id=ids[key], key=key, document_id=doc_id))
                seen.add(ids[key])
        src, tgt = ids[src_key], ids[tgt_key]
        if not r.directed:  # ends in id order: the stored edge does not depend on which paper wrote the pair first
            src, tgt = min(src, tgt), max(src, tgt)
        out.relations.append(RelationRecord(  # two names of one entity: kept apart (no id) for a later split
            r.source, r.target, r.description.strip(), r.chunk_id, list(r.keywords), r.strength, list(r.types), r.directed,
            r.confidence, id=relation_id_for(src, tgt, r.directed) if src != tgt else "", source_id=src, target_id=tgt,
            document_id=doc_id, sentence=r.sentence, level=r.level, source_key=src_key, target_key=tgt_key))
    for k in extraction.keywords:
        key = key_fn(k.text)
        if key:
            out.keywords.append(KeywordRecord(k.text.strip(), k.chunk_id, id=keyword_id_for(key), document_id=doc_id))
    return out


def _resolve_ids(groups: _KeyGroups, keys: list[str], known: Mapping[str, str]) -> dict[str, str]:
    members: dict[str, list[str]] = {}
    for key in keys:
        members.setdefault(groups.find(key), []).append(key)
    ids: dict[str, str] = {}
    for root, group in members.items():
        existing = [known[k] for k in group if k in known]
        entity_id = existing[0] if existing else entity_id_for(root)
        ids.update({k: entity_id for k in group})
    return ids
