"""Stages 3 and 4: local triples per level with their evidence sentence; paper-level relations over
the shrunken paper, for the most relevant pairs only, at most one per pair."""

from __future__ import annotations

from collections import Counter

from fixtures.localkg_papers import bad_answer
from support.canned_localkg import PAIRS_MARK, RELATIONS_MARK

from scholargraph.profiles.localkg.global_relations import GlobalStage, pair_count, shrink_order
from scholargraph.profiles.localkg.linking import LinkingStage
from scholargraph.profiles.localkg.local_relations import LocalTriple, RelationStage, keep_narrowest
from scholargraph.profiles.localkg.mentions import MentionStage


async def _entities(ctx, paper):
    return await LinkingStage(ctx, paper).run(await MentionStage(ctx, paper).run())


def test_a_triple_stated_at_several_levels_keeps_its_narrowest_evidence():
    triples = [LocalTriple(0, "Uses", 1, 3, "section"), LocalTriple(0, "uses ", 1, 2, "sentence"),
               LocalTriple(0, "uses", 1, 2, "paragraph"), LocalTriple(1, "uses", 0, 2, "paragraph")]
    kept = keep_narrowest(triples)
    assert [(t.subject, t.object, t.level, t.sentence) for t in kept] == [(0, 1, "sentence", 2), (1, 0, "paragraph", 2)]


def test_local_triples_name_listed_entities_and_cite_their_sentence(lkg_server, run_stage, paper):
    server = lkg_server()

    async def go(ctx):
        entities = await _entities(ctx, paper)
        return entities, await RelationStage(ctx, paper, entities).run()

    (entities, triples), ctx = run_stage(server, go)
    assert triples and ctx.failures == []
    assert {t.level for t in triples} == {"section", "paragraph", "sentence"}
    for t in triples:
        mentioned = {m.sentence for m in entities[t.subject].mentions} | {m.sentence for m in entities[t.object].mentions}
        assert t.sentence in mentioned and t.subject != t.object
        if t.level == "sentence":  # stated in that very sentence
            assert t.sentence in {m.sentence for m in entities[t.subject].mentions}
            assert t.sentence in {m.sentence for m in entities[t.object].mentions}


def test_names_aliases_and_list_numbers_resolve_and_strangers_are_dropped(lkg_server, run_stage, paper):
    reply = ('{"triples": [{"subject": "MEL", "predicate": "runs on", "object": "[2]"}, '
             '{"subject": "Someone Else", "predicate": "knows", "object": "MEL"}, '
             '{"subject": "MEL", "predicate": "is", "object": "MEL"}]}')
    server = lkg_server(bad_answer(RELATIONS_MARK, "section:\\n", reply))

    async def go(ctx):
        entities = await _entities(ctx, paper)
        return entities, await RelationStage(ctx, paper, entities).run()

    (entities, triples), _ = run_stage(server, go, levels=["section"])
    labels = [(entities[t.subject].label, t.predicate, entities[t.object].label) for t in triples]
    assert labels and all(s == "Metadata Extractor and Loader" and p == "runs on" for s, p, _ in labels)


def test_a_malformed_relation_answer_fails_its_unit_only(lkg_server, run_stage, paper):
    server = lkg_server(bad_answer(RELATIONS_MARK, "paragraph:\\nThe MEL pipeline"))

    async def go(ctx):
        entities = await _entities(ctx, paper)
        return await RelationStage(ctx, paper, entities).run()

    triples, ctx = run_stage(server, go)
    assert [f.reason.split(": ")[0] for f in ctx.failures] == ["localkg stage 3 (local relation extraction), §2 ¶2 (paragraph)"]
    assert {t.level for t in triples} == {"section", "paragraph", "sentence"}


def test_the_paper_is_shrunk_innermost_sections_first():
    assert shrink_order(5) == [2, 3, 1, 4, 0]
    assert shrink_order(2) == [1, 0]


def test_paper_level_pairs_are_the_most_relevant_entities(lkg_server, run_stage, paper):
    server = lkg_server()

    async def go(ctx):
        entities = await _entities(ctx, paper)
        local = await RelationStage(ctx, paper, entities).run()
        stage = GlobalStage(ctx, paper, entities, local)
        return entities, local, stage, await stage.run()

    (entities, local, stage, triples), ctx = run_stage(server, go, context_tokens=500, global_entities=4,
                                                      pairs_per_call=2)
    assert "lkg_shrink" not in server.stats.by_kind  # the paper fits in 500 tokens
    k = pair_count(len(entities), ctx.settings)
    assert k == 2 or k == 4
    top = sorted(entities, key=lambda e: (-stage.relevance[e.index], e.index))[:k]
    related = {frozenset((t.subject, t.object)) for t in local}
    asked = [p for p in ((a.index, b.index) for n, a in enumerate(top) for b in top[n + 1:])
             if frozenset(p) not in related]
    assert server.stats.by_kind["lkg_pairs"]["calls"] == -(-len(asked) // 2)
    assert all(t.level == "paper" and {t.subject, t.object} <= {e.index for e in top} for t in triples)
    assert len({frozenset((t.subject, t.object)) for t in triples}) == len(triples)  # at most one per pair


def test_a_long_paper_is_shrunk_and_a_second_relation_per_pair_is_ignored(lkg_server, run_stage, paper):
    two = ('{"pairs": [{"pair": 1, "subject": "x", "predicate": "extends", "object": "y"}, '
           '{"pair": 1, "subject": "x", "predicate": "cites", "object": "y"}, {"pair": 2, "predicate": null}]}')
    server = lkg_server(bad_answer(PAIRS_MARK, ".", two))

    async def go(ctx):
        entities = await _entities(ctx, paper)
        return await GlobalStage(ctx, paper, entities, []).run()

    triples, ctx = run_stage(server, go, context_tokens=60, global_entities=3)
    assert server.stats.by_kind["lkg_shrink"]["calls"] >= 1
    shrunk = [r for r in server.stats.requests if "Summarise the given section" in r["messages"][0]["content"]]
    shrunk_sections = Counter(r["messages"][1]["content"].split("\n")[1] for r in shrunk)
    # the inner section goes first: every round that shrinks an outer section shrinks Methods too
    # (a round's summaries are asked concurrently, so the order of the requests says nothing)
    assert shrunk_sections["Section: Methods"] == max(shrunk_sections.values())
    assert [t.predicate for t in triples] == ["extends"]
