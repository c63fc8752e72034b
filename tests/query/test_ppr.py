"""Personalised PageRank: the pure algorithm on small known graphs, and the ``ppr`` mode."""

from __future__ import annotations

import asyncio

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from query_workspace import BagOfWordsEmbedder, WordTokenizer

from scholargraph.config import QuerySettings, Settings
from scholargraph.models import Chunk, DocStatus, Document, EntityRecord, Section
from scholargraph.query.engine import QueryEngine
from scholargraph.query.ppr import PassageGraph, name_links, named_in, personalized_pagerank, question_seeds
from scholargraph.store import open_store
from scholargraph.store.base import SourceLimit
from scholargraph.text.names import normalise_name


def _matrix(n, edges):
    rows, cols, vals = [], [], []
    for a, b, w in edges:
        rows += [a, b]
        cols += [b, a]
        vals += [w, w]
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def test_a_path_from_one_seed_decays_with_distance():
    # 0 - 1 - 2 - 3, seed 0: scores fall along the path
    scores = personalized_pagerank(_matrix(4, [(0, 1, 1), (1, 2, 1), (2, 3, 1)]), np.array([1.0, 0, 0, 0]), 0.5)
    assert scores.sum() == pytest.approx(1.0)
    assert scores[0] > scores[1] > scores[2] > scores[3] > 0


def test_matches_networkx_on_a_weighted_graph_with_a_dangling_node():
    edges = [(0, 1, 2.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 0.5), (3, 4, 1.0)]
    n = 6  # node 5 has no edge at all
    seeds = np.array([0.7, 0, 0, 0.3, 0, 0])
    ours = personalized_pagerank(_matrix(n, edges), seeds, damping=0.5, tol=1e-12)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(edges)
    theirs = nx.pagerank(g, alpha=0.5, personalization={i: float(s) for i, s in enumerate(seeds)},
                         dangling={i: float(s) for i, s in enumerate(seeds)}, tol=1e-14, weight="weight")
    assert ours == pytest.approx(np.array([theirs[i] for i in range(n)]), abs=1e-9)
    assert ours[5] == 0.0  # unreachable from the seeds


def test_no_seed_no_score():
    assert not personalized_pagerank(_matrix(3, [(0, 1, 1)]), np.zeros(3)).any()


def test_passage_graph_walks_from_an_entity_to_the_passages_that_state_its_neighbours(store):
    pg = PassageGraph.build(store)
    assert pg.n_entities == 10 and len(pg.nodes) == 15  # 10 entities + 5 chunks
    # seed "swelling" (E): its own passage c3 first, then c2 (inflammation, one hop away) before c1
    passages, entities = pg.rank({"E": 1.0}, {}, damping=0.5, limit=5)
    order = [c for c, _ in passages]
    assert order[0] == "c3" and order.index("c2") < order.index("c1")
    assert "c5" not in order  # warbler/vole: not connected
    assert entities[0][0] == "E"
    # a passage seed alone also walks (question with no matched entity)
    passages, _ = pg.rank({}, {"c5": 1.0}, damping=0.5, limit=5)
    assert [c for c, _ in passages][:1] == ["c5"]


def test_ppr_mode_through_the_engine(make_engine):
    r = asyncio.run(make_engine().retrieve("What causes swelling of tissue?", "ppr", top_k=3))
    chunks = [s for s in r.sources if s.kind == "chunk"]
    assert len(chunks) == 3 and chunks[0].chunk_id == "c3"
    assert "seeds" in r.details and r.details["graph_text_units"][0] == "c3"


def test_ppr_ranking_is_fused_with_the_passages_only_when_ppr_graph_weight_is_set(make_engine):
    from scholargraph.query.rank import rrf

    question = "What causes swelling of tissue?"
    plain = asyncio.run(make_engine().retrieve(question, "ppr", top_k=5))
    units = plain.details["graph_text_units"]
    assert [s.chunk_id for s in plain.sources if s.kind == "chunk"] == units[:5]  # default: not fused

    fused = asyncio.run(make_engine(plugins={"ppr": {"graph_weight": 0.5}}).retrieve(question, "ppr", top_k=5))
    lists = [[(c, 0.0) for c in fused.details["graph_text_units"]],
             *([(c, 0.0) for c in fused.details["passages"][key]] for key in ("dense", "lexical"))]
    q = QuerySettings()
    expected = rrf(lists, [0.5, q.dense_weight, q.graph_lexical_weight], q.rrf_k, 5)
    assert [s.chunk_id for s in fused.sources if s.kind == "chunk"] == [c for c, _ in expected]


# A two-hop question: the first passage names the director; only the director's own passage says
# where he was born, and it shares no word with the question but his name. Four distractor
# passages about other directors' births share the common "film director" entity with the first.
BRIDGE_DOCS = {
    "p0": ("Blood Street is a 1988 action film directed by Leo Fong.", ["Blood Street", "Leo Fong", "film director"]),
    "pb": ("Leo Fong is a martial artist raised in Canton.", ["Leo Fong"]),
    **{f"d{i}": (f"{n} was a film director born in {c}; the director of films.", [n, "film director"])
       for i, (n, c) in enumerate([("Ann Lee", "Oslo"), ("Bo Ek", "Riga"), ("Cy Tam", "Lima"), ("Di Fox", "Kiev")])},
}


def _bridge_store(tmp_path, docs=BRIDGE_DOCS):
    embedder = BagOfWordsEmbedder()
    store = open_store(tmp_path / "bridge")
    store.set_meta("embedding_model", embedder.name)
    store.set_meta("embedding_dim", str(embedder.dim))
    for cid, (text, _) in docs.items():
        store.add_pending(Document(id=f"doc-{cid}", title=cid, sections=[Section("Text", text)]), "full", "test")
        store.insert_chunks([Chunk(cid, f"doc-{cid}", 0, text, len(text.split()), section="Text")])
        store.put_vectors("chunk", [cid], asyncio.run(embedder.embed([text])))
        store.set_status(f"doc-{cid}", DocStatus.PROCESSED)
    store.write(lambda: store.write_entities([
        EntityRecord(name, "Thing", "", cid, id=f"e-{normalise_name(name)}", key=normalise_name(name),
                     document_id=f"doc-{cid}")
        for cid, (_, names) in docs.items() for name in names]))
    return store


def test_a_passage_walks_to_its_rare_entities_passages_before_a_hubs(tmp_path):
    # passage -> entity edges are weighted by the entity's specificity (1 / passages stating it), so
    # the walk from p0 reaches the bridge passage of "Leo Fong" (2 passages) before the passages of
    # the hub "film director" (5 passages), although the hub joins p0 to four of them
    store = _bridge_store(tmp_path)
    try:
        passages, _ = PassageGraph.build(store).rank({}, {"p0": 1.0}, damping=0.5, limit=6)
        order = [c for c, _ in passages]
        assert order[:2] == ["p0", "pb"], order
    finally:
        store.close()


def test_ppr_finds_the_second_hop_passage_that_passage_retrieval_misses(tmp_path):
    store = _bridge_store(tmp_path)
    try:
        engine = QueryEngine(store, Settings(workdir=store.workdir, query=QuerySettings(node_threshold=0.9)),
                             BagOfWordsEmbedder(), WordTokenizer(), None)
        question = "Where was the director of Blood Street born?"

        def top4(mode):
            r = asyncio.run(engine.retrieve(question, mode, top_k=4))
            return [s.chunk_id for s in r.sources if s.kind == "chunk"]

        assert "pb" not in top4("naive")  # the premise: the question's own passages miss the second hop
        assert {"p0", "pb"} <= set(top4("ppr"))  # the walk from p0 through "Leo Fong" finds it
        # a graph above query.max_graph_relations: the walk on the seeds' neighbourhood finds it too
        engine = QueryEngine(store, Settings(workdir=store.workdir, query=QuerySettings(
            node_threshold=0.9, max_graph_relations=0)), BagOfWordsEmbedder(), WordTokenizer(), None)
        assert {"p0", "pb"} <= set(top4("ppr"))
    finally:
        store.close()


# --- names split by the offline graph: name links ---------------------------------------------


def test_a_name_links_to_the_longer_names_containing_it_weighted_by_its_specificity():
    names = ["Nicki Minaj", "singer Nicki Minaj", "Frank Lloyd", "Frank William George Lloyd",
             "film", "film director", "British film", "Gaby film", "Frank Sinatra's album", "Frank Sinatra",
             "Olof Palme", "Nicki"]
    links = {(names[i], names[j]): w for i, j, w in name_links(names)}
    assert links[("Nicki Minaj", "singer Nicki Minaj")] == 1.0  # a role word kept with the name
    assert links[("Frank Lloyd", "Frank William George Lloyd")] == 1.0  # middle names left out
    assert links[("Frank Sinatra's album", "Frank Sinatra")] == 1.0  # possessive dropped
    # a generic word is contained in many names: each of its links is weak (1 / the names holding it)
    assert links[("film", "film director")] == pytest.approx(1 / 3)
    assert links[("Nicki Minaj", "Nicki")] == pytest.approx(1 / 2)
    assert ("Olof Palme", "Frank Lloyd") not in links and ("Nicki Minaj", "Olof Palme") not in links
    assert ("film director", "British film") not in links  # overlapping, neither contains the other


def test_named_in_looks_for_the_names_words_in_a_row():
    question = "What is the place of birth of the director of film Gaby: A True Story?"
    assert named_in(question, "True Story") and named_in(question, "directors")
    assert not named_in(question, "born American film director") and not named_in(question, "film director")
    assert not named_in(question, "") and named_in("Where was Frank Sinatra's wife born?", "Frank Sinatra")


def test_exact_matches_seed_the_walk_only_when_the_question_names_them():
    question = "Where was the director of film Gaby born?"
    matched = {"gaby": 1.0, "clue": 1.0, "near": 0.7}  # "clue": a graph phrase the offline keywords added
    names = {"gaby": "Gaby", "clue": "born American film director"}
    assert question_seeds(matched, names, question, 1.0, 2.0) == {"gaby": 2.0}
    assert question_seeds(matched, names, question, 0.6, 1.0) == {"gaby": 1.0, "near": 0.7}
    assert question_seeds(matched, names, question, 0.6, 0.0) == {}


# "singer Nicki Minaj" in the song's passage and "Nicki Minaj" in her own are two entities of the
# offline graph; "singer" is a generic word also held by the passages of three other singers.
SPLIT_DOCS = {
    "song": ("Changed It is a song by singer Nicki Minaj.", ["Changed It", "singer Nicki Minaj"]),
    "minaj": ("Nicki Minaj was born in Port of Spain.", ["Nicki Minaj", "Port of Spain"]),
    **{f"s{i}": (f"{n} is a singer.", [n, "singer"]) for i, n in
       enumerate(["singer Ann Lee", "singer Bo Ek", "singer Cy Tam"])},
}


def test_the_walk_crosses_a_name_split_in_two_entities_when_names_are_linked(tmp_path):
    store = _bridge_store(tmp_path, SPLIT_DOCS)
    try:
        without, _ = PassageGraph.build(store).rank({}, {"song": 1.0}, damping=0.5, limit=6)
        assert "minaj" not in [c for c, _ in without]  # no entity joins the two passages
        linked, _ = PassageGraph.build(store, name_link_weight=1.0).rank({}, {"song": 1.0}, damping=0.5, limit=6)
        order = [c for c, _ in linked]
        assert order[:2] == ["song", "minaj"], order
    finally:
        store.close()


def test_a_generic_word_inside_a_name_does_not_carry_the_walk(tmp_path):
    # "singer" is contained in "singer Nicki Minaj" as much as "Nicki Minaj" is, but also in three
    # other names and stated by three passages: the walk from the song reaches the singers' passages
    # far less than Nicki Minaj's
    store = _bridge_store(tmp_path, SPLIT_DOCS)
    try:
        linked, _ = PassageGraph.build(store, name_link_weight=1.0).rank({}, {"song": 1.0}, damping=0.5, limit=6)
        scores = dict(linked)
        assert all(scores.get(f"s{i}", 0.0) < scores["minaj"] / 5 for i in range(3)), scores
    finally:
        store.close()


def test_ppr_mode_crosses_the_split_name_unless_ppr_name_links_is_0(tmp_path):
    store = _bridge_store(tmp_path, SPLIT_DOCS)
    try:
        def top2(**ppr):
            query = QuerySettings(node_threshold=0.9)
            plugins = {"ppr": {"seed_passages": 1, **ppr}}  # the walk starts at the song
            engine = QueryEngine(store, Settings(workdir=store.workdir, query=query, plugins=plugins),
                                 BagOfWordsEmbedder(), WordTokenizer(), None)
            r = asyncio.run(engine.retrieve("Which city is the hometown of the performer of Changed It?", "ppr", top_k=2))
            return [s.chunk_id for s in r.sources if s.kind == "chunk"]

        assert top2() == ["song", "minaj"]  # default: linked names
        assert "minaj" not in top2(name_links=0)
    finally:
        store.close()


def test_a_neighbourhood_reads_a_few_of_a_hubs_passages_and_the_hub_keeps_its_weight(tmp_path):
    """Above query.max_graph_relations ppr builds a question's matrix: a hub stated in 45 passages joins
    it with at most ``local_passages`` of them (the question's first), weighted as in the whole matrix,
    and the walk from p0 still reaches the rare name's passage before the hub's."""
    docs = {**BRIDGE_DOCS, **{f"h{i:02d}": (f"Director number {i}.", ["film director"]) for i in range(40)}}
    store = _bridge_store(tmp_path, docs)
    try:
        whole = PassageGraph.build(store)
        part = PassageGraph.assemble(store, store.all_entity_ids(), store.all_edges(), passages=SourceLimit(3, ("p0",)))
        hub = whole.index["e-film director"]
        assert whole.passages_of[hub] == part.passages_of[hub] == 45  # its specificity counts every passage
        assert len(whole.nodes) - whole.n_entities == 46 and len(part.nodes) - part.n_entities == 6
        assert [c for c, _ in part.rank({}, {"p0": 1.0}, damping=0.5, limit=2)[0]] == ["p0", "pb"]
        assert [c for c, _ in whole.rank({}, {"p0": 1.0}, damping=0.5, limit=2)[0]] == ["p0", "pb"]
    finally:
        store.close()
