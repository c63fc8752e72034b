"""Stage 1: three targets narrow-to-broad, set subtraction into named / general / other, mentions
found in their sentences, the widest context deciding a disagreement; cheap batching; a bad answer
costs only its unit."""

from __future__ import annotations

from fixtures.localkg_papers import bad_answer
from support.canned_localkg import MENTIONS_SENTENCES_MARK

from scholargraph.profiles.localkg.mentions import FoundMention, MentionStage, classify, locate
from scholargraph.profiles.localkg.outputs import Mention


def test_classes_come_from_subtracting_the_three_answers():
    found = classify({
        "named": [Mention(text="ANU", types=["University"])],
        "general": [Mention(text="anu"), Mention(text="knowledge graph", types=["Data Structure"])],
        "all": [Mention(text="ANU", types=["Organisation"]), Mention(text="knowledge graph"), Mention(text="it")],
    })
    assert {k: v.category for k, v in found.items()} == {"anu": "named", "knowledge graph": "general", "it": "other"}
    assert found["anu"].types == ["University", "Organisation"]  # the union, in order


def test_mentions_are_found_in_their_sentence_by_string_matching():
    sentences = [(0, "The ANU builds a Knowledge  Graph."), (1, "Canusia is not ANU-related.")]
    got = locate({"anu": "ANU", "knowledge graph": "knowledge graph", "missing": "missing"}, sentences)
    assert got == [("anu", 0, 4, 7), ("anu", 1, 15, 18), ("knowledge graph", 0, 17, 33)]


def test_the_widest_context_decides_the_class():
    merged = MentionStage._merge({
        "sentence": [FoundMention(0, 4, 7, "ANU", "anu", "other", ["Thing"], "sentence")],
        "section": [FoundMention(0, 4, 7, "ANU", "anu", "named", ["University"], "section")],
    })
    assert [(m.category, m.types, m.level) for m in merged] == [("named", ["University", "Thing"], "section")]


def test_stage_one_against_the_scripted_server(lkg_server, run_stage, paper):
    server = lkg_server()
    stage = None

    async def go(ctx):
        nonlocal stage
        stage = MentionStage(ctx, paper)
        return await stage.run()

    mentions, ctx = run_stage(server, go)
    # 3 targets x (3 sections + 2 paragraphs of Methods + 3 paragraphs with several sentences, one call each)
    assert server.stats.by_kind["lkg_mentions"]["calls"] == 3 * (3 + 2 + 3)
    assert ctx.failures == []
    by_surface = {m.surface: m for m in mentions}
    assert by_surface["MEL"].category == "named" and by_surface["MEL"].types == ["software tool"]
    assert by_surface["document store"].category == "general"
    assert by_surface["It"].category == "other"
    for m in mentions:  # every mention points into its sentence
        assert paper.sentences[m.sentence].text[m.start:m.end] == m.surface
    assert {m.level for m in mentions} >= {"section"}


def test_a_malformed_answer_fails_its_unit_only(lkg_server, run_stage, paper):
    server = lkg_server(bad_answer(MENTIONS_SENTENCES_MARK, "Apache Tika"))
    mentions, ctx = run_stage(server, lambda ctx: MentionStage(ctx, paper).run())
    reasons = [f.reason for f in ctx.failures]
    assert len(reasons) == 3 and all("stage 1" in r and "§2 ¶1 (sentences" in r for r in reasons)  # one per target
    assert all(f.raw == "this is not JSON {" and f.chunk_id == "p1-c1" for f in ctx.failures)
    # the section and paragraph levels still found that paragraph's mentions; the rest of the paper is intact
    assert "Apache Tika" in {m.surface for m in mentions} and "ASKG" in {m.surface for m in mentions}
    assert server.stats.by_kind["bad"]["calls"] == 6  # each failed once more after the re-ask
