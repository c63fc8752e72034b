"""Content keywords of the offline extractor (see :mod:`.offline`).

Per chunk, a TF-IDF style keyphrase score over the candidate phrases: term frequency in the
chunk x inverse chunk frequency in the document x word-frequency support x length/position/
technicality boosts. Short chunks get fewer keyphrases (one per ``WORDS_PER_KEYWORD`` words, at
least two); sub-phrases of a chosen phrase are skipped.
"""

from __future__ import annotations

import math
from collections import Counter

from ...models import KeywordRecord
from ...text.stopwords import STOPWORDS
from .terms import IGNORED, PUNCT, ChunkAnalysis, Mention
from .words import GENERIC_WORDS

WORDS_PER_KEYWORD = 12


def keywords(a: ChunkAnalysis, mentions: list[Mention], doc: dict, per_chunk: int) -> list[KeywordRecord]:
    """At most ``per_chunk`` keyphrases of one chunk from its kept ``mentions``."""
    if per_chunk <= 0 or not mentions:
        return []
    # Short chunks get fewer keyphrases: one per WORDS_PER_KEYWORD words, at least two.
    n_words = sum(1 for s in a.sentences for c in s.classes if c not in (PUNCT, IGNORED))
    limit = min(per_chunk, max(2, n_words // WORDS_PER_KEYWORD))
    tf: Counter = Counter()
    first: dict[str, int] = {}
    for m in mentions:
        tf[m.key] += 1
        first.setdefault(m.key, m.sent)
    n = doc["n_chunks"]
    n_sent = max(1, len(a.sentences))
    scored = []
    for key, count in tf.items():
        words = key.split()
        content = [w for w in words if w not in STOPWORDS]
        support = sum(math.log1p(a.word_tf.get(w, 0)) for w in content) / max(1, len(content))
        idf = math.log(1.0 + n / doc["df"][key])
        length = 1.0 + 0.5 * min(len(words) - 1, 3)
        position = 1.0 + 0.3 * (1.0 - first[key] / n_sent)
        tech = 1.2 if doc["technical"].get(key) else 1.0
        generic_penalty = 0.5 if any(w in GENERIC_WORDS for w in words[-1:]) else 1.0
        value = (1.0 + math.log(count)) * (0.5 + support) * idf * length * position * tech * generic_penalty
        scored.append((-value, first[key], key))
    scored.sort()
    chosen: list[tuple[str, set[str]]] = []
    for _neg, _first, key in scored:
        words = set(key.split())
        if any(words <= c for _k, c in chosen):
            continue
        chosen.append((key, words))
        if len(chosen) >= limit:
            break
    return [KeywordRecord(text=doc["names"][k], chunk_id=a.chunk_id) for k, _w in chosen]
