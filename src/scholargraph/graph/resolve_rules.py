"""Link rules for one pair of candidates (rules a–f of :mod:`scholargraph.graph.resolve`).

:func:`_pair_requirement` gives the lowest cosine at which two surfaces link (``_NEVER`` when no
rule applies); :func:`linked` applies it to two candidates, after the type check; :func:`explain_pair`
reports the verdict and its parts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..text.stopwords import STOPWORDS
from .resolve_acronyms import AT_STARTS, INSIDE
from .resolve_names import Surface, acronym_pair, jaccard, surfaces_of
from .resolve_types import Candidate, ResolutionSettings, types_compatible

# Head nouns that add nothing to a proper name: "JAVELIN system" = "JAVELIN".
_GENERIC_HEADS = frozenset(
    "system method model approach technique algorithm framework tool toolkit library package software "
    "architecture measure metric score dataset corpus benchmark database formalism paradigm scheme procedure "
    "program platform pipeline project module gene protein language ontology network task problem service "
    "api engine parser classifier tagger index course".split()
)
# Words after a code that make it something else: "IL-6 receptor" is not "IL-6".
_HEAD_CHANGERS = frozenset(
    "receptor antagonist agonist inhibitor antibody ligand mutation mutant variant deficiency pathway signaling "
    "signalling expression level activity knockout domain family subunit binding promoter allele polymorphism "
    "loss gain haplotype transcript isoform score error rate".split()
)

_NEVER = 2.0  # a cosine no pair reaches


def _requirement(sa: list[Surface], sb: list[Surface], settings: ResolutionSettings) -> float:
    """Lowest cosine at which two candidates of these surfaces link (``_NEVER`` when no rule applies)."""
    da, db = _defined(sa), _defined(sb)
    return min((_pair_requirement(x, y, settings, x.compact in da or y.compact in db) for x in sa for y in sb),
               default=_NEVER)


def _defined(surfaces: list[Surface]) -> set[str]:
    """Compact keys of the acronyms a candidate defines: one of its other names spells them with
    letters at word starts ("Actuation-Actuator-Effect (AAE)")."""
    return {x.compact for x in surfaces if x.has_acronym
            and any(y is not x and acronym_pair(x, y) == AT_STARTS for y in surfaces)}


def _pair_requirement(a: Surface, b: Surface, settings: ResolutionSettings, defined: bool = False) -> float:
    """Lowest cosine at which surfaces ``a`` and ``b`` link (``_NEVER`` when no rule applies).
    ``defined``: the acronym of the pair is defined by another name of its candidate, so it stands
    for that name: it spells no other by letters from inside words ("AAE" of
    "Actuation-Actuator-Effect (AAE)" is not "actuation effect", cosine 0.54 on ASKG)."""
    if a.namespace != b.namespace:  # rule b: "bci:Aspect" / "sosa:Aspect" / "Aspect" are three terms
        return _NEVER
    if a.compact == b.compact:  # rule c
        return settings.alias_threshold if (a.acronym and b.acronym) else -1.0
    # Rule d: acronyms (numbers only: its letters are spelt out).
    spelt = max(acronym_pair(a, b) if a.has_acronym and not b.acronym else 0,
                acronym_pair(b, a) if b.has_acronym and not a.acronym else 0)
    if spelt == AT_STARTS:
        return settings.alias_threshold
    need = _name_requirement(a, b, settings)
    return min(need, settings.inside_acronym_threshold) if spelt == INSIDE and not defined else need


def _name_requirement(a: Surface, b: Surface, settings: ResolutionSettings) -> float:
    """Rules b, e and f for two surfaces that are not the same key nor an acronym pair."""
    if a.signature != b.signature:  # rule b
        return _NEVER
    ta, tb = a.tokens, b.tokens
    if not ta or not tb:
        return _NEVER
    content_a, content_b = set(ta) - STOPWORDS, set(tb) - STOPWORDS
    if content_a == content_b and len(content_a) >= 2:  # word order: "X of Y" = "Y X"
        return settings.alias_threshold
    short, long = (a, b) if len(ta) <= len(tb) else (b, a)
    ts, tl = short.tokens, long.tokens
    if set(ts) <= set(tl):
        return _containment_requirement(short, long, settings)
    if set(tl) <= set(ts):
        return _NEVER
    if _typo_pair(ta, tb):  # rule f: one slip of the pen in one long word
        return settings.alias_threshold
    if jaccard(a.trigrams, b.trigrams) >= settings.name_threshold:  # rule f
        return settings.threshold
    return _NEVER


def _containment_requirement(short: Surface, long: Surface, settings: ResolutionSettings) -> float:
    """Rule e: the words of ``short`` all occur in ``long`` (a prefix, a suffix or spread out)."""
    ts, tl = short.tokens, long.tokens
    if tl[: len(ts)] == ts:  # rule e: prefix
        rest = tl[len(ts):]
        if short.code and not any(t in _HEAD_CHANGERS for t in rest):
            return settings.alias_threshold
        if short.proper and rest and all(t in _GENERIC_HEADS for t in rest):
            return settings.alias_threshold
        return _NEVER
    if tl[-len(ts):] == ts:  # modifiers in front: a narrower thing
        return _NEVER
    return settings.threshold  # words spread through the longer name


TYPO_MIN_LEN = 9


def _typo_pair(ta: Sequence[str], tb: Sequence[str]) -> bool:
    """Same words but one, which differs by a single edit away from its last two letters.

    "von Willebrand factor" / "von Willerand factor", "spironolactone" / "spiranolactone". The
    word must have >= 9 letters and no digits: short words one letter apart are often different
    things ("cytosine" / "cytokine"), and so are different endings ("cortisol" / "cortisone").
    """
    if len(ta) != len(tb):
        return False
    diff = [(x, y) for x, y in zip(ta, tb, strict=True) if x != y]
    if len(diff) != 1:
        return False
    x, y = diff[0]
    if min(len(x), len(y)) < TYPO_MIN_LEN or not (x.isalpha() and y.isalpha()):
        return False
    if len(x) > len(y):
        x, y = y, x
    i = 0
    while i < len(x) and x[i] == y[i]:
        i += 1
    if i >= len(y) - 2:
        return False
    if len(x) == len(y):
        if x[i + 1 :] == y[i + 1 :]:  # substitution
            return True
        return i + 1 < len(x) and x[i] == y[i + 1] and x[i + 1] == y[i] and x[i + 2 :] == y[i + 2 :]  # transposition
    return len(y) == len(x) + 1 and x[i:] == y[i + 1 :]  # insertion


def _cosine(a: Candidate, b: Candidate) -> float | None:
    if a.vector is None or b.vector is None:
        return None
    va, vb = np.asarray(a.vector, dtype=np.float32).ravel(), np.asarray(b.vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(np.dot(va, vb)) / norm if norm > 0 else 0.0


def linked(ca: Candidate, cb: Candidate, sa: list[Surface], sb: list[Surface], settings: ResolutionSettings,
            cos: float | None) -> bool:
    if not types_compatible(ca.type, cb.type):
        return False
    need = _requirement(sa, sb, settings)
    if need >= _NEVER:
        return False
    if cos is None:  # no vector evidence: agreement for rules c-e (an acronym and its long form in one sentence)
        return need <= max(settings.alias_threshold, settings.inside_acronym_threshold)
    return cos >= need


def same_context(a: Candidate, b: Candidate) -> bool:
    """Both described by the same text (two names in one sentence): the vectors then differ
    only by the names and say nothing about whether the two are one thing."""
    da, db = (a.description or "").split(), (b.description or "").split()
    return bool(da) and da == db


def explain_pair(a: Candidate, b: Candidate, settings: ResolutionSettings) -> dict:
    """:func:`scholargraph.graph.resolve.explain` with the settings given."""
    sa, sb = surfaces_of(a), surfaces_of(b)
    need = _requirement(sa, sb, settings)
    cos = _cosine(a, b)
    same = same_context(a, b)
    return {
        "types_compatible": types_compatible(a.type, b.type),
        "cosine": cos,
        "same_description": same,
        "required_cosine": None if need >= _NEVER else need,
        "name_similarity": max((jaccard(x.trigrams, y.trigrams) for x in sa for y in sb), default=0.0),
        "linked": linked(a, b, sa, sb, settings, None if same else cos),
    }
