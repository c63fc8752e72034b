"""Stage 1, mention extraction (seed 004 §4.1, Algorithm 1, Prompt 1).

For each context level (section, paragraph, sentence) and each of three targets asked
narrow-to-broad -- Named Entities (S1), Named Entities + General Concepts (S2), all Entities (S3)
-- the model lists the mentions of a unit with their potential parent types. ``classify``
subtracts the sets: named = S1, general = S2 - S1, other = S3 - S2 - S1. Each mention is then
found in its sentence(s) by string matching (``get_reference``); one not found in the text it was
read from is dropped. When levels disagree on a mention's class, the widest context wins (§4.1:
"biased toward the result from a larger context"); its potential types are the union.

Cost: the sentences of a paragraph share one call per target (answers stay per sentence), and a
level whose text repeats the level above is skipped (see :mod:`.document`), so a paper costs
3 x (section units + paragraph units + paragraphs with several sentences) calls instead of 9L.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .calls import StageContext, numbered
from .document import LEVELS, Paper, Unit, by_paragraph
from .outputs import Mention, MentionList, SentenceMentionList

PURPOSE = "lkg_mentions"
# (key, target as the prompt names it, its definition): narrow to broad
TARGETS = (
    ("named", "Named Entities",
     "Named Entities are unique, specific real-world things with a proper name: a particular organisation, "
     "person, place, software, dataset, model, project, standard or publication."),
    ("general", "Named Entities and General Concepts",
     "Named Entities are unique, specific things with a proper name. General Concepts are fundamental or widely "
     "recognised concepts you would find in a dictionary or a textbook, such as 'university' or 'knowledge graph'."),
    ("all", "Entities",
     "Entities are anything the text talks about: named entities, general concepts, and everything else, such as "
     "composite or non-standard concepts ('a tool that maps JSON into RDF') and pronouns or referring expressions "
     "('it', 'this approach') that stand for something."),
)
CATEGORIES = ("named", "general", "other")


def mention_key(text: str) -> str:
    """What two mentions of the same surface share: case and spacing folded, edge punctuation gone."""
    return " ".join(text.casefold().split()).strip(" .,;:!?\"'`()[]")


@dataclass
class FoundMention:
    """A mention located in its sentence (``start``/``end`` index the sentence's text)."""

    sentence: int
    start: int
    end: int
    surface: str
    key: str
    category: str
    types: list[str] = field(default_factory=list)
    level: str = ""
    description: str = ""  # stage 2


@dataclass
class _Classified:
    category: str
    types: list[str]


def classify(answers: dict[str, list[Mention]]) -> dict[str, _Classified]:
    """Algorithm 1's classify_mentions: the three target answers of one unit -> key -> class and types."""
    sets = {target: {mention_key(m.text) for m in answers.get(target, [])} for target, _, _ in TARGETS}
    out: dict[str, _Classified] = {}
    for target, _, _ in TARGETS:
        for m in answers.get(target, []):
            key = mention_key(m.text)
            if not key:
                continue
            if key in sets["named"]:
                category = "named"
            elif key in sets["general"]:
                category = "general"
            else:
                category = "other"
            found = out.setdefault(key, _Classified(category, []))
            found.types += [t for t in m.types if t not in found.types]
    return out


def _pattern(surface: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in surface.split())
    left = r"(?<!\w)" if surface[:1].isalnum() else ""
    right = r"(?!\w)" if surface[-1:].isalnum() else ""
    return re.compile(left + body + right, re.IGNORECASE)


def locate(surfaces: dict[str, str], sentences: Sequence[tuple[int, str]]) -> list[tuple[str, int, int, int]]:
    """get_reference: (key, sentence ordinal, start, end) of the first occurrence of each surface in
    each sentence that contains it."""
    out = []
    for key, surface in surfaces.items():
        pattern = _pattern(surface)
        for ordinal, text in sentences:
            m = pattern.search(text)
            if m:
                out.append((key, ordinal, m.start(), m.end()))
    return out


class MentionStage:
    def __init__(self, ctx: StageContext, paper: Paper):
        self.ctx = ctx
        self.paper = paper
        self.unlocated = 0

    async def run(self) -> list[FoundMention]:
        levels = [lv for lv in LEVELS if lv in self.ctx.settings.levels]
        per_level = await asyncio.gather(*(self._level(lv) for lv in levels))
        return self._merge(dict(zip(levels, per_level, strict=True)))

    async def _level(self, level: str) -> list[FoundMention]:
        units = self.paper.units(level, self.ctx.settings.unit_tokens)
        if level == "sentence" and self.ctx.settings.batch_sentences:
            found = await asyncio.gather(*(self._sentences(g) for g in by_paragraph(units)))
        else:
            found = await asyncio.gather(*(self._unit(u) for u in units))
        return [m for part in found for m in part]

    async def _unit(self, unit: Unit) -> list[FoundMention]:
        answers = await asyncio.gather(*(
            self.ctx.ask("mentions", MentionList, PURPOSE, f"{unit.label} ({unit.level}, {name})", unit.chunk_id,
                         target=name, definition=definition, level=unit.level, title=self.paper.title, text=unit.text)
            for _, name, definition in TARGETS))
        by_target = {t: a.mentions for (t, _, _), a in zip(TARGETS, answers, strict=True) if a is not None}
        return self._found(classify(by_target), unit)

    async def _sentences(self, units: list[Unit]) -> list[FoundMention]:
        """The sentence level of one paragraph: one call per target, answers per sentence."""
        sentences = [u.sentences[0] for u in units]
        label = units[0].label.rsplit(" s", 1)[0]
        answers = await asyncio.gather(*(
            self.ctx.ask("mentions_sentences", SentenceMentionList, PURPOSE, f"{label} (sentences, {name})",
                         sentences[0].chunk_id, target=name, definition=definition, title=self.paper.title,
                         sentences=numbered([s.text for s in sentences]))
            for _, name, definition in TARGETS))
        out: list[FoundMention] = []
        for i, unit in enumerate(units, 1):
            by_target = {}
            for (target, _, _), answer in zip(TARGETS, answers, strict=True):
                if answer is not None:
                    by_target[target] = [m for s in answer.sentences if s.sentence == i for m in s.mentions]
            out += self._found(classify(by_target), unit)
        return out

    def _found(self, classified: dict[str, _Classified], unit: Unit) -> list[FoundMention]:
        surfaces = {key: key for key in classified}
        located = locate(surfaces, [(s.ordinal, s.text) for s in unit.sentences])
        self.unlocated += len(set(classified) - {k for k, *_ in located})
        texts = {s.ordinal: s.text for s in unit.sentences}
        return [FoundMention(ordinal, a, b, texts[ordinal][a:b], key, classified[key].category,
                             list(classified[key].types), unit.level) for key, ordinal, a, b in located]

    @staticmethod
    def _merge(per_level: dict[str, list[FoundMention]]) -> list[FoundMention]:
        """One mention per (sentence, key): the class from the widest level that found it, the
        union of the types, in reading order."""
        merged: dict[tuple[int, str], FoundMention] = {}
        for level in LEVELS:  # widest first: it decides the class
            for m in per_level.get(level, []):
                key = (m.sentence, m.key)
                if key not in merged:
                    merged[key] = m
                else:
                    merged[key].types += [t for t in m.types if t not in merged[key].types]
        return sorted(merged.values(), key=lambda m: (m.sentence, m.start, -m.end, m.key))
