"""Stage 5: skos:broader from potential types (to an entity described like the type, or named by
it, else to a new general concept), and near-synonymous predicates under one canonical label."""

from __future__ import annotations

from fixtures.localkg_papers import bad_answer
from support.canned_localkg import PREDICATE_MARK

from scholargraph.profiles.localkg.linking import LinkingStage, LocalEntity
from scholargraph.profiles.localkg.local_relations import LocalTriple
from scholargraph.profiles.localkg.mentions import FoundMention, MentionStage
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


def _typed(index: int, label: str, types: list[str]) -> LocalEntity:
    mention = FoundMention(index % 7, 0, 1, label, label.casefold(), "general", list(types))
    return LocalEntity(index, label, "general", list(types), f"{label} is a notion.", [mention])


def test_the_taxonomy_uses_every_potential_type_and_never_forms_a_cycle(lkg_server, run_stage, paper):
    """Algorithm 5 over all candidate types; back-edges (a scripted cycle of types) are broken
    deterministically, so skos:broader stays acyclic."""
    server = lkg_server()

    def entities() -> list[LocalEntity]:
        return [_typed(0, "graph model", ["data model"]),
                _typed(1, "data model", ["knowledge representation"]),
                _typed(2, "knowledge representation", ["graph model"]),  # closes the cycle: a back-edge
                _typed(3, "ASKG", ["a", "b", "c", "graph model", "data model"])]  # 4th and 5th types count

    async def go(ctx):
        stage = TaxonomyStage(ctx, paper, entities())
        return await stage.run(), stage.cycles_broken

    (first, broken), _ = run_stage(server, go)
    (again, _), _ = run_stage(server, go)
    edges = [(b.narrower, b.broader) for b in first]
    assert edges == [(b.narrower, b.broader) for b in again]  # deterministic
    assert (0, 1) in edges and (1, 2) in edges and (2, 0) not in edges and broken == 1
    assert (3, 0) in edges and (3, 1) in edges  # the entity's 4th and 5th potential types
    up: dict[int, set[int]] = {}
    for a, b in edges:
        up.setdefault(a, set()).add(b)

    def above(node: int, seen: frozenset = frozenset()) -> bool:  # True when a cycle is reachable
        return any(n in seen or above(n, seen | {node}) for n in up.get(node, ()))

    assert not any(above(n, frozenset({n})) for n in up)
