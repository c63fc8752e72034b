"""Graph retrieval modes on the hand-built graph of conftest.py (known paths, known relevance)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from query_workspace import DIM, BagOfWordsEmbedder, names

from scholargraph.errors import ConfigError
from scholargraph.graph.memory import load_graph
from scholargraph.query.graph_modes import (
    GraphParams,
    QueryVectors,
    global_retrieve,
    local_retrieve,
    match_nodes,
    subgraph_retrieve,
)
from scholargraph.query.modes import CORE_MODES

MODES = [m.name for m in CORE_MODES]
Q3 = "What links aspirin, inflammation and kinase?"  # low-level: aspirin, inflammation, kinase
Q2 = "What links aspirin and inflammation?"  # the clue "prostaglandin synthesis aspirin" is close to it


def retrieve(engine, question, mode, **kw):
    return asyncio.run(engine.retrieve(question, mode, **kw))


def entity_names(retrieval) -> list[str]:
    return [s.text.split(" (")[0] for s in retrieval.sources if s.kind == "entity"]


def relation_pairs(retrieval) -> list[str]:
    return [s.text.split(":")[0].split(" [")[0] for s in retrieval.sources if s.kind == "relation"]


def vectors(low, high, question="q") -> QueryVectors:
    emb = BagOfWordsEmbedder()
    q = asyncio.run(emb.embed([question]))[0]
    lv = asyncio.run(emb.embed(low)) if low else np.zeros((0, DIM), np.float32)
    hv = asyncio.run(emb.embed(high)) if high else np.zeros((0, DIM), np.float32)
    return QueryVectors(q, list(low), lv, list(high), hv)


PARAMS = GraphParams(top_k=5, node_threshold=0.4, nodes_per_keyword=3, edge_threshold=0.4, max_path_length=4)


# -- the pure functions ------------------------------------------------------------------


def test_node_matching_by_similarity_and_exact_name(store):
    matched = match_nodes(store, vectors(["aspirin", "inflammation", "kinase", "unrelated zeppelin"], []), PARAMS, DIM)
    assert names(store, matched) == {"aspirin", "inflammation", "kinase"}
    assert all(score == 1.0 for score in matched.values())  # exact (normalised) name matches


def test_subgraph_is_the_pruned_union_of_shortest_paths(store):
    graph = load_graph(store)
    part = subgraph_retrieve(store, graph, vectors(["aspirin", "inflammation", "kinase"], [], Q3), PARAMS, DIM)
    d = part.details
    assert names(store, d["matched"]) == {"aspirin", "inflammation", "kinase"}
    # step 2: the shortest path aspirin - cyclooxygenase - inflammation is found ...
    assert ["A", "B", "C"] in d["paths"] or ["C", "B", "A"] in d["paths"]
    # ... and so is aspirin - gardening - kinase, whose edges are irrelevant to the query
    assert ["A", "G", "K"] in d["paths"] or ["K", "G", "A"] in d["paths"]
    # step 3: irrelevant edges pruned, the node left isolated (gardening) dropped
    assert {"r_ag", "r_gk"} <= set(d["pruned"])
    assert set(d["subgraph_relations"]) == {"r_ab", "r_bc"}
    assert "G" not in d["subgraph_nodes"] and "B" in d["subgraph_nodes"]
    # step 5: one-hop expansion through relevant edges only (swelling yes, headache no)
    assert d["expansion"] == ["r_ce"]
    ents = [e for e, _ in part.entities]
    assert set(ents) == {"A", "C", "K", "B", "E"}
    assert set(ents[:3]) == {"A", "C", "K"}  # matched nodes first
    assert [r for r, _ in part.relations][-1] == "r_ce"  # expansion edges after the subgraph's
    # step 4: text units of the subgraph, ranked by relevance to the question weighted by how much of
    # the subgraph they state (c1: aspirin, cyclooxygenase and their edge, and the question's "aspirin")
    chunks = [c for c, _ in part.chunks]
    assert chunks[0] == "c1" and {"c1", "c2", "c3"} <= set(chunks) and "c5" not in chunks


def test_local_mode_returns_the_whole_one_hop_neighbourhood(store):
    graph = load_graph(store)
    part = local_retrieve(store, graph, vectors(["aspirin", "inflammation", "kinase"], [], Q3), PARAMS, DIM)
    assert set(e for e, _ in part.entities) == {"A", "C", "K", "B", "D", "E", "G"}  # headache, gardening too
    assert set(r for r, _ in part.relations) == {"r_ab", "r_bc", "r_ad", "r_ag", "r_ce", "r_gk"}
    assert "W" not in {e for e, _ in part.entities}


def test_global_ranks_edges_matching_a_high_level_keyword_first(store):
    graph = load_graph(store)
    params = GraphParams(**{**PARAMS.__dict__, "edge_threshold": 0.1})
    part = global_retrieve(store, graph, vectors([], ["enzyme inhibition"]), params, DIM)
    rels = [r for r, _ in part.relations]
    assert rels[0] == "r_ab"  # keywords "enzyme inhibition"
    assert "r_bc" in rels  # "enzyme pathway": related, ranked lower
    assert [r for r, _ in part.relations] == sorted(rels, key=lambda r: -dict(part.relations)[r])
    ents = [e for e, _ in part.entities]
    assert {"A", "B", "C"} <= set(ents)  # the nodes of the retrieved edges, by degree
    degrees = [graph.degree(e) for e in ents]
    assert degrees == sorted(degrees, reverse=True)
    assert part.chunks[0][0] == "c1"  # text units by the relevance of their edges


def test_global_with_nothing_relevant_is_empty(store):
    graph = load_graph(store)
    part = global_retrieve(store, graph, vectors([], ["zeppelin aviation"]), PARAMS, DIM)
    assert part.relations == [] and part.chunks == []


# -- through the engine (offline keywords) -------------------------------------------------


def test_every_mode_is_available_and_unknown_modes_are_refused(make_engine):
    assert set(MODES) == {"naive", "local", "subgraph", "global", "hybrid", "ppr"}
    with pytest.raises(ConfigError, match="not available"):
        retrieve(make_engine(), Q3, "community")


@pytest.mark.parametrize("mode", ["local", "subgraph", "global", "hybrid", "naive"])
def test_every_source_points_at_a_paper_and_numbers_are_continuous(make_engine, mode):
    r = retrieve(make_engine(), Q2, mode)
    assert r.sources
    assert [s.number for s in r.sources] == list(range(1, len(r.sources) + 1))
    for s in r.sources:
        assert s.document_id and s.chunk_id and s.title and s.page_start, s
    for s in r.sources:
        assert f"[{s.number}] " in r.context
    if mode != "naive":
        assert r.keywords is not None and r.keywords["source"] == "offline"


def test_context_has_three_numbered_sections(make_engine):
    r = retrieve(make_engine(), Q3, "subgraph")
    kinds = [s.kind for s in r.sources]
    assert kinds == sorted(kinds, key=["chunk", "entity", "relation"].index)  # text units (the results) first
    assert r.context.index("### Text units") < r.context.index("### Entities") < r.context.index("### Relations")
    aspirin = next(s for s in r.sources if s.kind == "entity" and s.text.startswith("aspirin"))
    assert aspirin.chunk_id == "c1" and aspirin.page_start == 2 and aspirin.title == "Aspirin pharmacology"
    rel = next(s for s in r.sources if s.kind == "relation" and "cyclooxygenase -- inflammation" in s.text)
    assert rel.chunk_id == "c2" and rel.page_start == 3
    assert rel.authors == ["Smith", "Jones"] and rel.year == 2020


def test_subgraph_mode_keeps_the_path_and_leaves_out_unrelated_nodes(make_engine):
    r = retrieve(make_engine(), Q3, "subgraph")
    ents = entity_names(r)
    assert {"aspirin", "cyclooxygenase", "inflammation"} <= set(ents)
    assert not {"headache", "gardening", "warbler", "vole"} & set(ents)
    assert {"aspirin -- cyclooxygenase", "cyclooxygenase -- inflammation"} <= set(relation_pairs(r))


def test_local_mode_includes_irrelevant_neighbours(make_engine):
    ents = entity_names(retrieve(make_engine(), Q3, "local"))
    assert {"headache", "gardening", "cyclooxygenase"} <= set(ents)


def test_hybrid_includes_both_parts(make_engine):
    engine = make_engine(top_k=10)
    sub = retrieve(engine, Q2, "subgraph")
    glob = retrieve(engine, Q2, "global")
    hyb = retrieve(engine, Q2, "hybrid")
    assert set(relation_pairs(sub)) | set(relation_pairs(glob)) == set(relation_pairs(hyb))
    assert set(entity_names(sub)) | set(entity_names(glob)) == set(entity_names(hyb))
    assert "local" in hyb.details and "global" in hyb.details


def test_no_subgraph_ablation_uses_one_hop_neighbours(make_engine):
    engine = make_engine()
    with_sub = retrieve(engine, Q3, "hybrid")
    without = retrieve(engine, Q3, "hybrid", subgraph=False)
    assert "headache" not in entity_names(with_sub)
    assert {"headache", "gardening"} <= set(entity_names(without))
    assert any("-subgraph" in n for n in without.notes)
    assert "paths" in with_sub.details["local"] and "paths" not in without.details["local"]


def test_no_clues_ablation_changes_keywords_and_retrieved_set(make_engine):
    engine = make_engine()
    with_clues = retrieve(engine, Q2, "subgraph")
    without = retrieve(engine, Q2, "subgraph", clues=False)
    assert [c["text"] for c in with_clues.keywords["clues"]] == ["prostaglandin synthesis aspirin"]
    assert without.keywords["clues"] == []
    assert "prostaglandin synthesis aspirin" in with_clues.keywords["low_level"]
    assert "prostaglandin" in entity_names(with_clues)  # reached only through the clue
    assert "prostaglandin" not in entity_names(without)
    assert any("-clues" in n for n in without.notes)


def test_clue_threshold_is_configurable(make_engine):
    strict = retrieve(make_engine(clue_threshold=0.9), Q2, "hybrid")
    assert strict.keywords["clues"] == []


def test_token_budgets_per_part(make_engine):
    full = retrieve(make_engine(), Q3, "subgraph")
    small = retrieve(make_engine(entity_tokens=5, relation_tokens=5), Q3, "subgraph")
    # budgets bound the prompt context, never the results: every source is still returned ...
    assert [(s.kind, s.chunk_id) for s in small.sources] == [(s.kind, s.chunk_id) for s in full.sources]
    in_context = [s for s in small.sources if s.number not in small.cut]
    kinds = [s.kind for s in in_context]
    assert kinds.count("entity") == 1 and kinds.count("relation") == 1  # the first item always fits
    assert [s.kind for s in full.sources].count("entity") > 1 and not full.cut
    # ... and what was left out of the context is named
    assert small.cut and all(f"[{n}] " not in small.context for n in small.cut)
    assert all(f"[{s.number}] " in small.context for s in in_context)
    tight = retrieve(make_engine(max_context_tokens=100), Q3, "subgraph")
    kept = [s for s in tight.sources if s.number not in tight.cut]
    used = sum(len(s.text.split()) for s in kept)
    assert used <= 100 + 3 * max(len(s.text.split()) for s in kept)
    assert tight.context_tokens["budget"] == 100


def test_nothing_matches_falls_back_to_passages_with_a_note(make_engine):
    r = retrieve(make_engine(), "zeppelin aviation history", "subgraph")
    assert r.sources and all(s.kind == "chunk" for s in r.sources)
    assert any("no entity or relation" in n for n in r.notes)


def test_timings_and_keywords_are_reported(make_engine):
    r = retrieve(make_engine(), Q3, "hybrid")
    for key in ("keywords_s", "keywords_llm_s", "graph_s", "search_s", "context_s", "retrieval_s"):
        assert key in r.timings
    assert r.timings["keywords_llm_s"] == 0.0 and r.usage == {}
    assert r.keywords["low_level"][:3] == ["aspirin", "inflammation", "kinase"]


def test_empty_workspace_returns_nothing(tmp_path):
    from query_workspace import WordTokenizer

    from scholargraph.config import Settings
    from scholargraph.query.engine import QueryEngine
    from scholargraph.store import open_store

    store = open_store(tmp_path / "empty")
    store.set_meta("embedding_dim", str(DIM))
    engine = QueryEngine(store, Settings(workdir=tmp_path / "empty"), BagOfWordsEmbedder(), WordTokenizer())
    r = retrieve(engine, "anything at all", "hybrid")
    assert r.sources == [] and r.context == ""
    answer = asyncio.run(engine.answer("anything at all"))
    assert "Nothing is indexed" in answer.text
    store.close()


def test_extractive_answer_cites_passages(make_engine):
    answer = asyncio.run(make_engine().answer(Q2, "hybrid"))
    assert answer.extractive and answer.cited
    by_number = {s.number: s for s in answer.sources}  # passages, then the graph evidence (relations)
    assert by_number[answer.cited[0]].kind == "chunk"
    assert all(by_number[n].kind in ("chunk", "relation") for n in answer.cited)
    assert "generation_s" in answer.timings and "retrieval_s" in answer.timings


@pytest.mark.parametrize("mode", ["local", "subgraph", "global", "hybrid", "ppr"])
def test_above_max_graph_relations_a_mode_answers_from_the_part_the_question_touches(make_engine, mode):
    question = "What causes swelling of tissue?"
    whole = asyncio.run(make_engine().retrieve(question, mode, top_k=3))
    part = asyncio.run(make_engine(max_graph_relations=0).retrieve(question, mode, top_k=3))
    assert [s.chunk_id for s in part.sources if s.kind == "chunk"]
    if mode == "ppr":  # the walk stays within plugins.ppr.local_hops of its seeds
        loaded = part.details["passage_graph_loaded"]
        assert loaded["partial"]
        engine = make_engine(max_graph_relations=0, plugins={"ppr": {"seed_passages": 1, "local_hops": 1}})
        near = asyncio.run(engine.retrieve(question, mode, top_k=3))
        assert near.details["passage_graph_loaded"]["entities"] < 10, "one hop from c3 is not the whole graph"
        assert [s.chunk_id for s in part.sources][:1] == [s.chunk_id for s in whole.sources][:1]
    else:
        assert part.details["graph_loaded"]["partial"] and part.details["graph_loaded"]["nodes_fetched"] < 10
        assert [(s.kind, s.chunk_id) for s in part.sources] == [(s.kind, s.chunk_id) for s in whole.sources]


def test_a_question_checks_its_cached_graph_without_counting_the_knowledge_base(store, monkeypatch):
    """With the graph cached, a question still asks whether it is stale and whether there are
    passages. Those checks must cost the same on 10M abstracts as on ten: no count or sum over the
    relations or the chunks (each grows with the knowledge base)."""
    import re

    from query_workspace import QUERY_DEFAULTS, WordTokenizer

    from scholargraph.config import QuerySettings, Settings
    from scholargraph.models import RelationRecord
    from scholargraph.query.engine import QueryEngine
    from scholargraph.store import open_store
    from scholargraph.store.sqlite import writer

    sent: list[str] = []
    real = writer.connect

    def traced(path):
        conn = real(path)
        conn.set_trace_callback(sent.append)
        return conn

    monkeypatch.setattr(writer, "connect", traced)
    fresh = open_store(store.workdir)  # every connection it opens is traced
    try:
        settings = Settings(workdir=store.workdir, query=QuerySettings(**QUERY_DEFAULTS))
        engine = QueryEngine(fresh, settings, BagOfWordsEmbedder(), WordTokenizer(), None)
        whole = re.compile(r"(?is)\b(count|sum)\s*\(.*\bfrom\s+(relations|chunks)\s*(\)|;|$)")  # no WHERE
        version = fresh.graph_version()
        for mode in [*MODES, "ppr"]:
            retrieve(engine, Q3, mode)  # loads the graph (and the passage graph) once
            sent.clear()
            assert retrieve(engine, Q3, mode).sources
            assert [s for s in sent if whole.search(s)] == [], mode
        # a worker commits a relation: the next question reloads the graph, still counting nothing
        ends = [store.find_entity(n)[0] for n in ("aspirin", "kinase")]
        store.write_relations([RelationRecord("aspirin", "kinase", "", "c1", id="r-new", source_id=ends[0],
                                              target_id=ends[1], document_id="doc1")])
        sent.clear()
        assert retrieve(engine, Q3, "subgraph").sources
        assert engine.graphs.current.version == fresh.graph_version() != version
        assert [s for s in sent if whole.search(s)] == []
    finally:
        fresh.close()
