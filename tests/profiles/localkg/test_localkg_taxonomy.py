"""Stage 5: skos:broader from potential types (to an entity described like the type, or named by
it, else to a new general concept), and near-synonymous predicates under one canonical label."""

from __future__ import annotations

from fixtures.localkg_papers import bad_answer
from support.canned_localkg import PREDICATE_MARK

from scholargraph.profiles.localkg.linking import LinkingStage
from scholargraph.profiles.localkg.local_relations import LocalTriple
from scholargraph.profiles.localkg.mentions import MentionStage
from scholargraph.profiles.localkg.taxonomy import PredicateStage, TaxonomyStage


async def _entities(ctx, paper):
    return await LinkingStage(ctx, paper).run(await MentionStage(ctx, paper).run())


def test_broader_links_reach_entities_and_new_general_concepts(lkg_server, run_stage, paper):
    server = lkg_server()

    async def go(ctx):
        entities = await _entities(ctx, paper)
        before = len(entities)
        return entities, before, await TaxonomyStage(ctx, paper, entities).run()

    (entities, before, broader), ctx = run_stage(server, go)
    assert ctx.failures == [] and broader
    label = {e.index: e.label for e in entities}
    pairs = {(label[b.narrower], label[b.broader].casefold()) for b in broader}
    # "ANU Scholarly Knowledge Graph" has the type "knowledge graph", an entity of the paper
    assert ("ANU Scholarly Knowledge Graph", "knowledge graph") in pairs
    new = entities[before:]
    assert {e.label for e in new} >= {"software tool"} and all(e.category == "general" for e in new)
    assert ("MEL", "software tool") in pairs or ("Metadata Extractor and Loader", "software tool") in pairs
    for b in broader:  # evidence: a sentence where the narrower entity was typed so
        assert b.sentence in {m.sentence for m in entities[b.narrower].mentions}
        assert b.narrower != b.broader
    assert len({(b.narrower, b.broader) for b in broader}) == len(broader)
    # one description per distinct type the paper's entities do not already name
    assert server.stats.by_kind["lkg_types"]["calls"] == 1


def test_near_synonymous_predicates_get_one_label(lkg_server, run_stage, paper):
    server = lkg_server()
    triples = [LocalTriple(0, "uses", 1, 0, "sentence"), LocalTriple(1, "employs", 2, 1, "sentence"),
               LocalTriple(2, "makes use of", 0, 2, "sentence"), LocalTriple(0, "uses", 2, 3, "sentence"),
               LocalTriple(1, "is part of", 0, 3, "sentence")]

    async def go(ctx):
        entities = await _entities(ctx, paper)
        await PredicateStage(ctx, paper, entities).run(triples)
        return triples

    _, ctx = run_stage(server, go)
    assert [t.canonical for t in triples] == ["uses", "uses", "uses", "uses", "is part of"]
    assert [t.predicate for t in triples][:3] == ["uses", "employs", "makes use of"]  # as written, kept
    assert server.stats.by_kind["lkg_predicates"]["calls"] == 1


def test_without_predicate_descriptions_each_predicate_stays_its_own(lkg_server, run_stage, paper):
    server = lkg_server(bad_answer(PREDICATE_MARK, "."))
    triples = [LocalTriple(0, "Uses", 1, 0, "sentence"), LocalTriple(1, "employs", 2, 1, "sentence")]

    async def go(ctx):
        entities = await _entities(ctx, paper)
        await PredicateStage(ctx, paper, entities).run(triples)

    _, ctx = run_stage(server, go)
    assert [t.canonical for t in triples] == ["uses", "employs"]
    assert len(ctx.failures) == 1 and "stage 5" in ctx.failures[0].reason
