"""The data of entity resolution (:class:`Candidate`, :class:`ResolutionSettings`) and entity-type
classes (rule a of :mod:`scholargraph.graph.resolve`).

Types are mapped to classes (Method = Model = Tool ..., Gene = Protein, ...); two entities may be
one thing only when their classes agree or either type is a catch-all ("Concept", "Other", ...).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Candidate", "ResolutionSettings", "type_class", "types_compatible"]

_WILDCARD_TYPES = frozenset(
    {"", "concept", "knowledgeconcept", "otherscientificterm", "other", "generic", "term", "entity", "unknown",
     "topic", "misc", "thing", "none"}
)
_TYPE_CLASSES: dict[str, str] = {}
for _cls, _names in {
    "method": "method model tool algorithm software system technique framework architecture approach library "
              "toolkit program platform pipeline",
    "task": "task problem application researchproblem",
    "dataset": "dataset material corpus data benchmark database resource",
    "metric": "metric measure evaluationmetric",
    "gene": "gene protein geneprotein geneorgeneproduct geneproduct proteinorgene enzyme",
    "variant": "geneticvariation sequencevariant variant mutation snp variation",
    "disease": "disease diseaseorphenotypicfeature phenotype disorder condition symptom",
    "chemical": "chemical chemicalentity drug compound drugcompound chemicalcompound molecule",
    "organism": "organism organismtaxon species taxon",
    "cell": "cellline celltype cell",
    "anatomy": "anatomy tissue organ",
    "pathway": "pathway",
    "person": "person author teacher researcher",
    "organization": "organization organisation institution university company",
    "paper": "paper publication literature article",
}.items():
    for _n in _names.split():
        _TYPE_CLASSES[_n] = _cls
# Distinct classes that still merge with each other (kept small on purpose).
_COMPATIBLE_CLASSES: frozenset[frozenset[str]] = frozenset()


@functools.lru_cache(maxsize=4096)
def type_class(type_name: str) -> str:
    """Class of a type name: "*" for catch-alls, a known class, or the squashed name itself."""
    squashed = re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKC", type_name or "").casefold())
    if squashed in _WILDCARD_TYPES:
        return "*"
    if squashed in _TYPE_CLASSES:
        return _TYPE_CLASSES[squashed]
    if squashed.endswith("s") and squashed[:-1] in _TYPE_CLASSES:
        return _TYPE_CLASSES[squashed[:-1]]
    return squashed


def types_compatible(a: str, b: str) -> bool:
    """Rule a: may entities of these two types be the same thing?"""
    ca, cb = type_class(a), type_class(b)
    return ca == "*" or cb == "*" or ca == cb or frozenset((ca, cb)) in _COMPATIBLE_CLASSES


@dataclass
class Candidate:
    """One entity (or mention) to resolve. ``vector``: the caller's embedding of
    "name: description" (normalised here); ``None`` = no vector evidence."""

    id: str
    name: str
    type: str = ""
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None  # unit vector of "name: description" (or similar)


@dataclass
class ResolutionSettings:
    """Tunable thresholds (see "Thresholds" in the module docstring) and search sizes."""

    threshold: float = 0.9  # cosine for rule f (similar names) and spread-out containment
    name_threshold: float = 0.5  # character-trigram Jaccard of compact names for rule f
    alias_threshold: float = 0.3  # cosine for acronyms, code/proper-name prefixes, typos, same-key acronyms
    inside_acronym_threshold: float = 0.5  # cosine for an acronym spelt by letters from inside words
    max_group: int = 50  # largest group returned; a bigger clique is cut
    k: int = 10  # vector neighbours per candidate
    acronym_range: int = 200  # rule d pairs per acronym-like candidate (same first letter, cosine >= alias_threshold)
    exact_limit: int = 10000  # above this many vectors, neighbours come from an inverted-file index
    nprobe: int = 2  # cells each vector is filed under (inverted-file index)
    block_limit: int = 64  # name blocks larger than this are only paired through their short names
