"""Sentences that are about a paper's people and money, not its research: acknowledgements,
funding statements, author lists and affiliations.

Community reports and the summary mode (seed 001 §III.D) use it so that thanked colleagues and
grant agencies never name a research theme; KG-RAG's summariser drops persons, organisations and
locations for the same reason. Regexes only, no model.
"""

from __future__ import annotations

import re

__all__ = ["NON_THEMATIC_TYPES", "is_boilerplate", "non_thematic_type"]

_ACKNOWLEDGEMENT = re.compile(
    r"\b(?:we (?:would (?:also )?like to |wish to |also |further |gratefully |sincerely )?(?:thank|acknowledge)"
    r"|(?:our|special|many|sincere) thanks|(?:are|is|am) (?:very |deeply )?(?:grateful|indebted|thankful)|gratitude"
    r"|acknowledge?ments?|helpful (?:discussions?|comments|feedback|suggestions)"
    r"|(?:was|is|were|are|been) (?:partially |partly |also |generously |financially )?(?:supported|funded|sponsored)"
    r"|funding|funded by|grant (?:agreement|no\.?|number|nos?\.)|under grants?\b|fellowship|scholarship"
    r"|conflicts? of interest|competing interests?|author contributions?)",
    re.IGNORECASE)
# "thank the reviewers", "thank Nina Mishra" (not "thanks to its sparsity")
_THANK = re.compile(r"\b[Tt]hank(?:s|ed)?\s+(?:the|our|all|him|her|them|you|[A-Z])")
_AFFILIATION = re.compile(
    r"\b(?:university|universit[àäé]t?|institute|department|dept\.|laborator(?:y|ies)|college|school of"
    r"|faculty of|cent(?:re|er) for|inc\.|corporation|gmbh)\b", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_WORD = re.compile(r"[A-Za-zÀ-ÿ][\w'’-]*")
_SMALL = frozenset("of and the for in at de la von van der di du".split())

# entity types that name people, institutions, places and money (seed 001 §III.D drops persons,
# organisations and locations before summarising; the kgrag preset's Co-author/Affiliation/Funding)
NON_THEMATIC_TYPES = frozenset(
    "person people author co-author coauthor researcher organization organisation affiliation institution "
    "university company funding funder grant agency location place country city".split())


def non_thematic_type(entity_type: str) -> bool:
    return entity_type.strip().lower().replace("_", "-") in NON_THEMATIC_TYPES


def _capitalised_share(sentence: str) -> float:
    words = [w for w in _WORD.findall(sentence) if w.lower() not in _SMALL]
    return sum(1 for w in words if w[0].isupper()) / len(words) if words else 0.0


def _name_list(sentence: str) -> bool:
    """"Alice Smith1, Bob Jones2 and Carol White": a short run of capitalised words with commas."""
    words = _WORD.findall(sentence)
    return (4 <= len(words) <= 24 and ("," in sentence or " and " in sentence)
            and not sentence.rstrip().endswith((".", "?", "!")) and _capitalised_share(sentence) >= 0.95)


def is_boilerplate(sentence: str) -> bool:
    """An acknowledgement or funding sentence, an e-mail line, an author/affiliation line (names and
    institutions, nearly every word capitalised) or a bare list of names."""
    if _ACKNOWLEDGEMENT.search(sentence) or _THANK.search(sentence) or _EMAIL.search(sentence):
        return True
    return (bool(_AFFILIATION.search(sentence)) and _capitalised_share(sentence) >= 0.7) or _name_list(sentence)
