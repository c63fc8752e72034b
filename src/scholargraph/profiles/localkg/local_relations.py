"""Stage 3, local relation extraction (seed 004 §4.3, Algorithm 3, Prompt 3).

At each level (section, paragraph, sentence) the model gets a unit's text and the entities
mentioned in it, and returns (subject, predicate, object) triples between them. Subjects and
objects are matched back to the listed entities by name or alias (case-insensitive) or by list
number; anything else is dropped. Each triple keeps the sentence it comes from: its own sentence
at the sentence level, else the first sentence of the unit that mentions both ends (else the
subject). A triple stated at several levels is kept once, with its narrowest evidence.

Cost: units with fewer than two entities are not asked; the sentences of a paragraph share one
call; levels that repeat the level above are skipped (:mod:`.document`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .calls import StageContext, numbered
from .document import LEVELS, Paper, Unit, by_paragraph
from .linking import LocalEntity
from .mentions import mention_key
from .outputs import SentenceTripleList, Triple, TripleList

PURPOSE = "lkg_relations"
_NUMBER = re.compile(r"^\[?(\d+)\]?\.?\s*")


@dataclass
class LocalTriple:
    subject: int  # LocalEntity.index
    predicate: str
    object: int
    sentence: int  # evidence: sentence ordinal
    level: str  # sentence | paragraph | section | paper
    canonical: str = ""  # the resolved predicate (stage 5)


def predicate_key(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .,;:")


class EntityIndex:
    """Which entities each sentence mentions, and names -> entity within a list given to the model."""

    def __init__(self, entities: Sequence[LocalEntity]):
        self.entities = list(entities)
        self.by_sentence: dict[int, list[int]] = {}
        for e in entities:
            for m in e.mentions:
                listed = self.by_sentence.setdefault(m.sentence, [])
                if e.index not in listed:
                    listed.append(e.index)

    def in_sentences(self, ordinals: Sequence[int]) -> list[int]:
        found: list[int] = []
        for o in ordinals:
            found += [i for i in self.by_sentence.get(o, []) if i not in found]
        return found

    def resolver(self, listed: Sequence[int]):
        names: dict[str, int | None] = {}
        for i in listed:
            e = self.entities[i]
            for name in [e.label, *e.aliases, *(m.surface for m in e.mentions)]:
                key = mention_key(name)
                names[key] = i if names.get(key, i) == i else None  # a name two entities share is ambiguous

        def resolve(name: str) -> int | None:
            key = mention_key(name)
            if key in names:
                return names[key]
            m = _NUMBER.match(name.strip())
            if not m:
                return None
            rest = name.strip()[m.end():]
            if rest:  # "[2] BERT"
                return names.get(mention_key(rest))
            n = int(m.group(1))  # "2" or "[2]": the list number
            return listed[n - 1] if 1 <= n <= len(listed) else None

        return resolve

    def evidence(self, subject: int, obj: int, ordinals: Sequence[int]) -> int:
        both = [o for o in ordinals if subject in self.by_sentence.get(o, []) and obj in self.by_sentence.get(o, [])]
        if both:
            return both[0]
        with_subject = [o for o in ordinals if subject in self.by_sentence.get(o, [])]
        return with_subject[0] if with_subject else ordinals[0]


class RelationStage:
    def __init__(self, ctx: StageContext, paper: Paper, entities: Sequence[LocalEntity]):
        self.ctx = ctx
        self.paper = paper
        self.index = EntityIndex(entities)

    async def run(self) -> list[LocalTriple]:
        levels = [lv for lv in LEVELS if lv in self.ctx.settings.levels]
        found = await asyncio.gather(*(self._level(lv) for lv in levels))
        return keep_narrowest([t for part in found for t in part])

    async def _level(self, level: str) -> list[LocalTriple]:
        units = [u for u in self.paper.units(level, self.ctx.settings.unit_tokens)
                 if len(self.index.in_sentences(u.ordinals)) >= 2]
        if level == "sentence" and self.ctx.settings.batch_sentences:
            found = await asyncio.gather(*(self._sentences(g) for g in by_paragraph(units)))
        else:
            found = await asyncio.gather(*(self._unit(u) for u in units))
        return [t for part in found for t in part]

    async def _unit(self, unit: Unit) -> list[LocalTriple]:
        listed = self.index.in_sentences(unit.ordinals)
        answer = await self.ctx.ask("relations", TripleList, PURPOSE, f"{unit.label} ({unit.level})", unit.chunk_id,
                                    level=unit.level, title=self.paper.title, text=unit.text,
                                    entities=numbered([self.index.entities[i].label for i in listed]))
        return self._triples(answer.triples if answer else [], listed, unit.ordinals, unit.level)

    async def _sentences(self, units: list[Unit]) -> list[LocalTriple]:
        blocks = []
        for n, u in enumerate(units, 1):
            names = "; ".join(self.index.entities[i].label for i in self.index.in_sentences(u.ordinals))
            blocks.append(f"[{n}] {u.text}\n    entities: {names}")
        label = units[0].label.rsplit(" s", 1)[0]
        answer = await self.ctx.ask("relations_sentences", SentenceTripleList, PURPOSE, f"{label} (sentences)",
                                    units[0].chunk_id, title=self.paper.title, sentences="\n".join(blocks))
        out: list[LocalTriple] = []
        for n, u in enumerate(units, 1):
            triples = [t for s in (answer.sentences if answer else []) if s.sentence == n for t in s.triples]
            out += self._triples(triples, self.index.in_sentences(u.ordinals), u.ordinals, "sentence")
        return out

    def _triples(self, triples: Sequence[Triple], listed: list[int], ordinals: list[int], level: str) -> list[LocalTriple]:
        resolve = self.index.resolver(listed)
        out = []
        for t in triples:
            s, o = resolve(t.subject), resolve(t.object)
            if s is None or o is None or s == o:
                continue
            out.append(LocalTriple(s, t.predicate, o, self.index.evidence(s, o, ordinals), level))
        return out


def keep_narrowest(triples: Sequence[LocalTriple]) -> list[LocalTriple]:
    """One triple per (subject, predicate, object): the one read at the narrowest level."""
    rank = {lv: i for i, lv in enumerate(("sentence", "paragraph", "section", "paper"))}
    best: dict[tuple[int, str, int], LocalTriple] = {}
    for t in triples:
        key = (t.subject, predicate_key(t.predicate), t.object)
        if key not in best or rank.get(t.level, 9) < rank.get(best[key].level, 9):
            best[key] = t
    return sorted(best.values(), key=lambda t: (t.sentence, t.subject, t.object, predicate_key(t.predicate)))
