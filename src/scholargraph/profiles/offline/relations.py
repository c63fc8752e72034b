"""Co-occurrence relations of the offline extractor (see :mod:`.offline`).

Two entities mentioned in one sentence are related (undirected). Source and target follow the
order of first appearance in the chunk; the description is the sentence, the strength the number
of sentences of the chunk where they co-occur, the keywords up to three content words between
them (verbs first). At most ``limit`` pairs, preferring frequent pairs, technical terms and
short distances.
"""

from __future__ import annotations

from ...models import RelationRecord
from .terms import VERB, WORD, ChunkAnalysis, Mention, shorten
from .words import GENERIC_ADJECTIVES, LEADING_MODIFIERS

RELATION_DESCRIPTION_CHARS = 600
PAIR_WINDOW = 15


def _closest(first: list[Mention], second: list[Mention]) -> tuple[int, Mention, Mention] | None:
    """(distance in tokens, left mention, right mention) of the closest non-overlapping pair."""
    best = None
    for ma in first:
        for mb in second:
            if ma.tok_start < mb.tok_end and mb.tok_start < ma.tok_end:
                continue  # nested/overlapping: same phrase
            left, right = (ma, mb) if ma.tok_start < mb.tok_start else (mb, ma)
            dist = right.tok_start - left.tok_end
            if best is None or dist < best[0]:
                best = (dist, left, right)
    return best


def _pairs(mentions: list[Mention]) -> dict[tuple[str, str], dict]:
    """Co-occurring entity pairs: count, closest distance, first sentence, tokens between, positions."""
    first_pos: dict[str, tuple[int, int]] = {}
    by_sentence: dict[int, list[Mention]] = {}
    for m in mentions:
        first_pos.setdefault(m.key, (m.sent, m.tok_start))
        by_sentence.setdefault(m.sent, []).append(m)
    pairs: dict[tuple[str, str], dict] = {}
    for s_idx, ms in by_sentence.items():
        keys: dict[str, list[Mention]] = {}
        for m in ms:
            keys.setdefault(m.key, []).append(m)
        key_list = list(keys)
        for x in range(len(key_list)):
            # Each entity pairs with at most the next PAIR_WINDOW entities of the sentence, so a
            # run-on "sentence" (a table, a list) stays linear instead of quadratic.
            for y in range(x + 1, min(len(key_list), x + 1 + PAIR_WINDOW)):
                ka, kb = key_list[x], key_list[y]
                if first_pos[kb] < first_pos[ka]:
                    ka, kb = kb, ka
                best = _closest(keys[ka], keys[kb])
                if best is None:
                    continue
                stat = pairs.get((ka, kb))
                if stat is None:
                    pairs[(ka, kb)] = {
                        "count": 1,
                        "dist": best[0],
                        "sent": s_idx,
                        "between": (best[1].tok_end, best[2].tok_start),
                        "pos": (first_pos[ka], first_pos[kb]),
                    }
                else:
                    stat["count"] += 1
                    stat["dist"] = min(stat["dist"], best[0])
    return pairs


def _ranked(pairs: dict[tuple[str, str], dict], doc: dict, limit: int) -> list[tuple[tuple[str, str], dict]]:
    """The ``limit`` best pairs, in order of their sentence and position."""

    def score(item: tuple[tuple[str, str], dict]) -> tuple:
        (ka, kb), st = item
        tech = int(bool(doc["technical"].get(ka))) + int(bool(doc["technical"].get(kb)))
        multi = int(" " in ka) + int(" " in kb)
        value = st["count"] + 0.5 * tech + 0.25 * multi + 1.0 / (1.0 + st["dist"] / 3.0)
        return (-value, st["sent"], st["pos"])

    ranked = sorted(pairs.items(), key=score)[:limit]
    ranked.sort(key=lambda item: (item[1]["sent"], item[1]["pos"]))
    return ranked


def _between_words(a: ChunkAnalysis, st: dict, inside: set[int]) -> list[str]:
    """Up to three content words between the two mentions, verbs first."""
    sent = a.sentences[st["sent"]]
    lo, hi = st["between"]
    verbs: list[str] = []
    others: list[str] = []
    for k in range(lo, hi):
        cls = sent.classes[k]
        word = sent.tokens[k].text.lower()
        if len(word) < 3 or not word.isalpha():
            continue
        if cls == VERB and word not in verbs:
            verbs.append(word)
        elif (
            cls == WORD
            and k not in inside
            and word not in others
            and word not in LEADING_MODIFIERS
            and word not in GENERIC_ADJECTIVES
        ):
            others.append(word)
    return (verbs + others)[:3]


def relations(
    a: ChunkAnalysis, mentions: list[Mention], doc: dict, sentence_text: list[str], limit: int
) -> list[RelationRecord]:
    """Relation records of one chunk from its kept ``mentions`` (``doc``: document statistics)."""
    pairs = _pairs(mentions)
    if not pairs:
        return []
    ranked = _ranked(pairs, doc, limit)
    out = []
    mention_tokens: dict[int, set[int]] = {}
    for m in mentions:
        mention_tokens.setdefault(m.sent, set()).update(range(m.tok_start, m.tok_end))
    for (ka, kb), st in ranked:
        inside = mention_tokens.get(st["sent"], set())
        out.append(
            RelationRecord(
                source=doc["names"][ka],
                target=doc["names"][kb],
                description=shorten(sentence_text[st["sent"]], RELATION_DESCRIPTION_CHARS),
                chunk_id=a.chunk_id,
                keywords=_between_words(a, st, inside),
                strength=float(st["count"]),
                directed=False,
            )
        )
    return out
