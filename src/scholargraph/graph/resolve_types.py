"""Entity-type classes for resolution (rule a of :mod:`scholargraph.graph.resolve`).

Types are mapped to classes (Method = Model = Tool ..., Gene = Protein, ...); two entities may be
one thing only when their classes agree or either type is a catch-all ("Concept", "Other", ...).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["type_class", "types_compatible"]

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
