"""Stage 2: familiarity decides the context of a description, descriptions embed, linked pairs are
partitioned into cliques (never merged just because they are connected), labels come first."""

from __future__ import annotations

import re

import numpy as np
from fixtures.localkg_papers import bad_answer
from support.canned_localkg import DESCRIBE_CONTEXT_MARK

from scholargraph.models import Chunk, Document, Section
from scholargraph.profiles.localkg.calls import StageContext
from scholargraph.profiles.localkg.document import read_paper
from scholargraph.profiles.localkg.linking import LinkingStage, is_referential
from scholargraph.profiles.localkg.mentions import FoundMention, MentionStage
from scholargraph.profiles.localkg.settings import LocalKGSettings


def _m(n: int, surface: str, category: str = "named") -> FoundMention:
    return FoundMention(n, 0, len(surface), surface, surface.casefold(), category, [f"type {n}"], "sentence", f"d{n}")


def test_only_mentions_alike_in_every_pair_become_one_entity():
    ctx = StageContext(None, None, LocalKGSettings(link_threshold=0.9), "p")
    a = np.array([1.0, 0.0, 0.0])
    b = np.array([0.95, 0.31, 0.0]) / np.linalg.norm([0.95, 0.31, 0.0])
    c = np.array([0.81, 0.59, 0.0]) / np.linalg.norm([0.81, 0.59, 0.0])  # a~b, b~c, but not a~c
    d = np.array([0.0, 0.0, 1.0])
    mentions = [_m(0, "It", "other"), _m(1, "MEL"), _m(2, "the tool", "general"), _m(3, "Tika")]
    entities = LinkingStage(ctx, None)._entities(mentions, np.stack([a, b, c, d]).astype(np.float32))
    assert [[m.surface for m in e.mentions] for e in entities] == [["It", "MEL"], ["the tool"], ["Tika"]]
    first = entities[0]
    assert first.label == "MEL"  # the first mention that is not a pronoun
    assert first.category == "named" and first.aliases == [] and first.types == ["type 0", "type 1"]
    assert is_referential("It") and is_referential("they") and not is_referential("this approach")


def test_stage_two_links_an_acronym_and_a_pronoun_to_their_entity(lkg_server, run_stage, paper):
    server = lkg_server()

    async def go(ctx):
        mentions = await MentionStage(ctx, paper).run()
        return await LinkingStage(ctx, paper).run(mentions)

    entities, ctx = run_stage(server, go)
    assert ctx.failures == []
    by_label = {e.label: e for e in entities}
    mel = by_label["Metadata Extractor and Loader"]
    assert "MEL" in mel.aliases and mel.category == "named"
    askg = next(e for e in entities if "ASKG" in [m.surface for m in e.mentions])
    assert "It" in [m.surface for m in askg.mentions]  # the pronoun of the abstract
    assert all(m.description for e in entities for m in e.mentions)
    # Algorithm 2: every mention is described, each with its own sentence -- a known term's mentions
    # with Prompt 2.2.2 (one line per mention, not once per term), unknown ones with their context
    calls = [r for r in server.stats.requests if "describes what the term means" in r["messages"][0]["content"]]
    lines = [line for r in calls for line in re.findall(r"^\[\d+\] .*$", r["messages"][1]["content"], re.M)]
    first = {}
    for m in sorted((m for e in entities for m in e.mentions), key=lambda m: (m.sentence, m.start)):
        first.setdefault(m.key, m.surface)
    known = [m for e in entities for m in e.mentions if first[m.key].islower()]  # canned: lower case = known
    assert len(lines) == len(known) > 0
    texts = {s.ordinal: s.text for s in paper.sentences}
    assert all(any(texts[m.sentence] in line for line in lines) for m in known)


def test_every_mention_of_a_known_term_is_described_with_its_own_sentence(lkg_server, run_stage):
    """Algorithm 2 (seed 004 §4.2): descriptions per mention, not once per term."""
    text = "MEL keeps the metadata store small. The ASKG team queries the metadata store daily."
    doc = Document("p2", "Stores", [Section("Methods", text)])
    chunk = Chunk("p2-c0", "p2", 0, text, len(text.split()), section="Methods", char_start=0, char_end=len(text))
    paper = read_paper(doc, [chunk])
    server = lkg_server()

    async def go(ctx):
        return await LinkingStage(ctx, paper).run(await MentionStage(ctx, paper).run())

    entities, _ = run_stage(server, go)
    store = [m for e in entities for m in e.mentions if m.key == "metadata store"]
    assert len(store) == 2 and {m.sentence for m in store} == {0, 1}
    calls = [r for r in server.stats.requests if "describes what the term means" in r["messages"][0]["content"]]
    lines = [line for r in calls for line in re.findall(r"^\[\d+\] metadata store.*$", r["messages"][1]["content"],
                                                        re.M | re.I)]
    assert len(lines) == 2 and all(any(s.text in line for line in lines) for s in paper.sentences)
    assert all(m.description for m in store)


def test_a_failed_description_batch_keeps_its_mentions_as_entities(lkg_server, run_stage, paper):
    server = lkg_server(bad_answer(DESCRIBE_CONTEXT_MARK, "Section:\\nMethods"))

    async def go(ctx):
        mentions = await MentionStage(ctx, paper).run()
        return await LinkingStage(ctx, paper).run(mentions)

    entities, ctx = run_stage(server, go)
    assert ctx.failures and all("stage 2" in f.reason and "§2" in f.reason for f in ctx.failures)
    labels = {e.label for e in entities}
    assert "Apache Tika" in labels and "ASKG" in labels  # undescribed mentions stay, the other sections are linked
