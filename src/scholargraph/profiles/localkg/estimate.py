"""What a paper would cost in the localkg profile (``scholargraph index --dry-run``), per stage.

Calls of stages 1 and 3 and the prompt tokens of every call are counted from the paper's own
structure (sections, paragraphs, sentences; the same units the stages read). What depends on the
model's answers is assumed, from the ASKG papers: ``MENTIONS_PER_SENTENCE`` mentions per sentence
(distinct terms ~60% of them, half of those known to the model), entities ~half the mentions,
``TRIPLES_PER_SENTENCE`` triples per sentence, two potential types per entity.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ...models import Usage
from .calls import prompt
from .document import LEVELS, Paper, Unit, by_paragraph
from .global_relations import pair_count
from .settings import LocalKGSettings

MENTIONS_PER_SENTENCE = 4.0
TRIPLES_PER_SENTENCE = 1.2
TOKENS_PER_MENTION = 14  # {"text": "...", "types": ["..."]} in an answer
TOKENS_PER_DESCRIPTION = 30
TOKENS_PER_TRIPLE = 22


def _calls(n: int, prompt_tokens: int, completion_tokens: int) -> Usage:
    return Usage(n, 0, prompt_tokens, completion_tokens, n)


def _units(paper: Paper, settings: LocalKGSettings) -> list[list[Unit]]:
    """The units of one call each, per level (a paragraph's sentences are one call when batched)."""
    calls: list[list[Unit]] = []
    for level in (lv for lv in LEVELS if lv in settings.levels):
        units = paper.units(level, settings.unit_tokens)
        if level == "sentence" and settings.batch_sentences:
            calls += by_paragraph(units)
        else:
            calls += [[u] for u in units]
    return calls


def estimate_paper(paper: Paper, settings: LocalKGSettings, count: Callable[[str], int]) -> dict[str, Usage]:
    out: dict[str, Usage] = {}
    if not paper.sentences:
        return out
    system = {name: count(prompt(name).system) + 40 for name in (
        "mentions", "relations", "familiarity", "describe_term", "describe_context", "shrink", "paper_relations",
        "describe_type", "describe_predicate")}
    title = count(paper.title)
    mentions_total = MENTIONS_PER_SENTENCE * len(paper.sentences)

    stage1, stage3 = Usage(), Usage()
    for group in _units(paper, settings):
        text = sum(count(u.text) for u in group)
        found = MENTIONS_PER_SENTENCE * sum(len(u.sentences) for u in group)
        for share in (0.3, 0.7, 1.0):  # named, + general, all
            stage1.add(_calls(1, system["mentions"] + title + text, int(found * share * TOKENS_PER_MENTION) + 10))
        listed = int(found * 0.5 * 6)
        triples = TRIPLES_PER_SENTENCE * sum(len(u.sentences) for u in group)
        stage3.add(_calls(1, system["relations"] + title + text + listed, int(triples * TOKENS_PER_TRIPLE) + 10))
    out["lkg_mentions"], out["lkg_relations"] = stage1, stage3

    batch = settings.batch_size
    distinct = 0.6 * mentions_total
    unknown_mentions = mentions_total / 2  # half the terms known; their mentions half of all
    calls = math.ceil(distinct / (2 * batch))
    linking = _calls(calls, calls * system["familiarity"] + int(distinct * 8), int(distinct * 6))
    known_mentions = mentions_total - unknown_mentions  # Algorithm 2: every mention is described
    n = math.ceil(known_mentions / batch)
    linking.add(_calls(n, n * system["describe_term"] + int(known_mentions * 40),
                       int(known_mentions * TOKENS_PER_DESCRIPTION)))
    abstract = count(paper.abstract[:3000])
    for section in paper.sections:
        share = len(section.sentences) / len(paper.sentences)
        m = unknown_mentions * share
        calls = math.ceil(m / batch) if m >= 0.5 else 0
        linking.add(_calls(calls, calls * (system["describe_context"] + title + abstract + count(section.text))
                           + int(m * 40), int(m * TOKENS_PER_DESCRIPTION)))
    out["lkg_linking"] = linking

    entities = int(mentions_total / 2)
    paper_tokens = sum(count(s.text) for s in paper.sections)
    stage4 = Usage()
    if paper_tokens > settings.context_tokens:
        stage4.add(_calls(len(paper.sections), paper_tokens + len(paper.sections) * system["shrink"],
                          settings.context_tokens))
    k = pair_count(entities, settings)
    pairs = k * (k - 1) // 2
    calls = math.ceil(pairs / settings.pairs_per_call) if pairs else 0
    context = min(paper_tokens, settings.context_tokens)
    stage4.add(_calls(calls, calls * (system["paper_relations"] + context) + pairs * 60, pairs * 18))
    out["lkg_global"] = stage4

    types = entities  # two potential types each, half of them shared
    predicates = int(0.7 * TRIPLES_PER_SENTENCE * len(paper.sentences)) + pairs // 3
    stage5 = Usage()
    for items, name, per in ((types, "describe_type", 6), (predicates, "describe_predicate", 16)):
        c = math.ceil(items / batch) if items else 0
        stage5.add(_calls(c, c * system[name] + items * per, items * TOKENS_PER_DESCRIPTION))
    out["lkg_taxonomy"] = stage5
    return out
