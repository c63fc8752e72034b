"""Entity resolution runs after indexing and merges names of one thing across papers."""

import numpy as np

from scholargraph import KnowledgeBase
from scholargraph.graph.refresh import entity_text
from scholargraph.graph.resolution_pass import Pool, candidate_pool, regroup
from scholargraph.graph.resolve import Candidate, ResolutionSettings

DOC_A = "Large language models generate fluent text. Large language models are trained on web corpora."
DOC_B = "We evaluate LLMs on question answering. LLMs often hallucinate facts without retrieval."


def names(kb):
    return {e.name: e.aliases for e in kb.store.get_entities(kb.store.all_entity_ids(), sources=False).values()}


def test_acronym_in_one_paper_joins_long_form_in_another(workdir):
    with KnowledgeBase(workdir, extraction={"profile": "offline"}) as kb:
        report = kb.insert(texts=[DOC_A, DOC_B])
        rows = kb.entities(search="LLM")
    assert any("entity resolution merged" in n for n in report.notes)
    merged = [r for r in rows if r.name.lower().startswith("large language model")]
    assert len(merged) == 1 and any(a.lower().startswith("llm") for a in merged[0].aliases)
    assert len(merged[0].documents) == 2


def test_resolution_can_be_switched_off_and_split_undoes_a_merge(workdir):
    with KnowledgeBase(workdir, extraction={"profile": "offline", "resolve": False}) as kb:
        kb.insert(texts=[DOC_A, DOC_B])
        before = len(names(kb))
        assert any(n.lower().startswith("llm") for n in names(kb))
    with KnowledgeBase(workdir, extraction={"profile": "offline"}) as kb:
        kb.merge_entities("large language models", "LLMs")
        assert len(names(kb)) == before - 1
        ids = kb.split_entity("large language models")
        assert len(ids) == 2 and len(names(kb)) == before


PAGERANK = "PageRank ranks web pages by their links. PageRank is computed by power iteration over the link graph."
PASSAGES = ("Passage Ranking orders retrieved passages. Passage Ranking uses a cross-encoder. "
            "We study Passage Ranking on MS MARCO.")


def test_camel_case_names_are_not_acronyms_of_other_papers_terms(workdir):
    # "PageRank" is a compound word, not the initials P-R of "Passage Ranking"
    with KnowledgeBase(workdir, extraction={"profile": "offline"}) as kb:
        kb.insert(texts=[PAGERANK, PASSAGES])
        page = kb.entities(search="PageRank")
        passage = kb.entities(search="Passage Ranking")
    assert [e.name for e in page if e.name == "PageRank"] == ["PageRank"]
    assert not any("Passage Ranking" in e.aliases for e in page)
    assert any(e.name == "Passage Ranking" and not e.aliases for e in passage)


def test_split_gives_each_name_its_own_entity_and_aliases(workdir):
    # the kept entity's own name is the rarer one: the split must still give two distinct entities
    with KnowledgeBase(workdir, extraction={"profile": "offline", "resolve": False}) as kb:
        kb.insert(texts=[PAGERANK, PASSAGES])
        result = kb.merge_entities("PageRank", "Passage Ranking")
        assert names(kb)["PageRank"] or names(kb)["Passage Ranking"]
        ids = kb.split_entity(result.kept)
        after = names(kb)
    assert len(ids) == 2 and len(set(ids)) == 2 and result.kept in ids
    assert "Passage Ranking" not in after.get("PageRank", []) and "PageRank" not in after.get("Passage Ranking", [])
    assert "PageRank" in after and "Passage Ranking" in after


# the same papers indexed one by one and together give the same graph
ORDER_PAPERS = [
    "The AGRIF project tests the mapping on records. The AGRIF project uses AGRIF archives.",
    "Natural language processing (NLP) studies text. NLP tools parse sentences. We use NLP tools for parsing.",
    "Many NLP tasks need labelled data. NLP tasks include parsing and tagging.",
    "The Australian Government Records Interoperability Framework (AGRIF) maps records. AGRIF maps files.",
]


def _graph(kb) -> tuple[dict, dict]:
    entities = kb.store.get_entities(kb.store.all_entity_ids(), sources=False)
    relations = kb.store.get_relations([r for r, *_ in kb.store.all_edges()], sources=False)
    return ({e.id: (e.name, sorted(e.aliases)) for e in entities.values()},
            {r.id: (r.source_id, r.target_id) for r in relations.values()})


def _both_orders(tmp_path, runtime: str) -> tuple[tuple[dict, dict], tuple[dict, dict]]:
    settings = {"extraction": {"profile": "offline"}, "embeddings": {"runtime": runtime}}
    with KnowledgeBase(tmp_path / f"together-{runtime}", **settings) as kb:
        kb.insert(texts=ORDER_PAPERS)
        together = _graph(kb)
    with KnowledgeBase(tmp_path / f"one-by-one-{runtime}", **settings) as kb:
        for text in ORDER_PAPERS:
            kb.insert(texts=[text])
        one_by_one = _graph(kb)
    return together, one_by_one


def test_papers_indexed_one_by_one_give_the_graph_indexed_together(tmp_path):
    """Two order dependences: an entity merged earlier linked a newcomer through any of its names
    ("NLP tasks" joined "natural language processing" through its alias "NLP", which together they
    never do), and the kept id depended on merge history (aliases counted so far). With the torch
    runtime's vectors this corpus shows only those two."""
    together, one_by_one = _both_orders(tmp_path, "torch")
    assert any("AGRIF" in aliases for _, aliases in together[0].values())  # there were merges to agree on
    assert one_by_one[0] == together[0]
    assert one_by_one[1] == together[1]


def test_the_order_papers_arrive_in_does_not_change_the_ids_numpy_runtime(tmp_path):
    """The remaining order dependence: a name joined the entity that already held
    one of its keys, under that entity's id, so the id of "natural language processing (NLP)" was
    that of "NLP" when the paper naming "NLP" alone was committed first (as concurrent papers
    sometimes are), and its own otherwise. Ids now come from the names an entity holds, whatever
    came first: papers in reverse order, one by one, give the graph the other orders give."""
    together, one_by_one = _both_orders(tmp_path, "numpy")
    with KnowledgeBase(tmp_path / "reversed", extraction={"profile": "offline"}, embeddings={"runtime": "numpy"}) as kb:
        for text in reversed(ORDER_PAPERS):
            kb.insert(texts=[text])
        reverse = _graph(kb)
    assert one_by_one[0] == together[0] == reverse[0]
    assert one_by_one[1] == together[1] == reverse[1]


def test_the_merge_note_counts_the_entities_merged_and_what_they_became():
    """The note counts the entities of the merged groups and the groups (not "merged 22 entities into 22")."""
    from scholargraph.app.pipeline import resolution_note

    note = resolution_note([["a", "b"], ["c", "d"], ["e", "f", "g"]])
    assert note.startswith("entity resolution merged 7 entities into 3 (4 duplicates removed")


def _store_with_entities(workdir, total: int, new: int):
    import numpy as np

    from scholargraph.graph.merge import entity_id_for
    from scholargraph.models import EntityRecord
    from scholargraph.store import open_store

    store = open_store(workdir)
    store.set_meta("embedding_dim", "16")
    firsts, seconds = ["alpha", "beta", "gamma", "delta"], ["ring", "stone", "field", "wave", "lake"]
    names = [f"{firsts[i % 4]} {seconds[i % 5]} {i}" for i in range(total)]
    records = [EntityRecord(n, "Concept", f"entity {i}", f"c{i}", id=entity_id_for(n), key=n, document_id=f"d{i}")
               for i, n in enumerate(names)]
    store.write(lambda: store.write_entities(records))
    store.put_vectors("entity", [r.id for r in records], np.random.default_rng(0).standard_normal((total, 16)))
    store.finish_maintenance("resolve", store.pending_maintenance("resolve"))
    store.queue_maintenance("resolve", [r.id for r in records[-new:]])
    return store, {r.id for r in records[-new:]}


def test_the_end_of_run_pass_visits_the_runs_entities_and_their_neighbours_only(tmp_path, monkeypatch):
    """The end-of-run resolution of a 6,119-passage run once ran for more than 13 minutes over
    49,846 entities: one search over the whole vector index per entity the run touched. The pass now
    compares the run's entities with their neighbours found in ONE batched search, and gives
    canonical ids to the run's entities only."""
    from scholargraph.graph import resolution_pass
    from scholargraph.graph.resolve import ResolutionSettings
    from scholargraph.store.vectors import ExactVectorIndex

    store, touched = _store_with_entities(tmp_path / "ws", 300, 12)
    searches: list[int] = []
    compared: list[str] = []
    renamed_from: list[str] = []
    real_search, real_many, real_link = ExactVectorIndex.search, ExactVectorIndex.search_many, resolution_pass.link_pairs
    real_sources = store.entity_sources
    monkeypatch.setattr(ExactVectorIndex, "search", lambda self, q, k, allowed=None: searches.append(1) or
                        real_search(self, q, k, allowed))
    monkeypatch.setattr(ExactVectorIndex, "search_many", lambda self, q, k: searches.append(len(q)) or
                        real_many(self, q, k))
    monkeypatch.setattr(resolution_pass, "link_pairs", lambda cands, s: compared.extend(c.id for c in cands) or
                        real_link(cands, s))
    monkeypatch.setattr(store, "entity_sources", lambda ids: renamed_from.extend(ids) or real_sources(ids))
    settings = ResolutionSettings(k=3)
    try:
        resolution_pass.resolve_pending(store, settings)
    finally:
        store.close()
    assert searches == [len(touched)]  # one batched neighbour search, not one pass over the index per entity
    assert touched <= set(compared) and len(compared) <= len(touched) * (settings.k + 1)
    assert set(renamed_from) - set(compared) == set()  # what it reads back is what it compared, never the rest


def test_the_pass_reads_no_source_record_of_its_candidates_with_their_entities(tmp_path, monkeypatch):
    """Every block of the pass reads its candidates, hub entities among them (thousands of source
    records each at 20,000 abstracts): their names and descriptions, never their records' documents."""
    from scholargraph.graph import resolution_pass
    from scholargraph.graph.resolve import ResolutionSettings

    store, _ = _store_with_entities(tmp_path / "ws", 300, 12)
    with_sources: list[int] = []
    real = store.get_entities
    monkeypatch.setattr(store, "get_entities", lambda ids, sources=True: (with_sources.append(1) if sources else None)
                        or real(ids, sources))
    try:
        resolution_pass.resolve_pending(store, ResolutionSettings(k=3))
    finally:
        store.close()
    assert with_sources == []


def test_a_new_name_meets_the_stored_entity_of_the_same_name_beyond_its_vector_neighbours(tmp_path):
    """Issue 27 item 11, measured on the ASKG papers: "JSONObject" (paper 0) and "JSON objects"
    (paper 1) merged when the papers were indexed together (both in one pass) but not one by one:
    the later pass compared "JSON objects" with its nearest vectors only, and "JSONObject" was not
    among them. A pass now also compares each entity with the stored ones of the same compact name."""
    import numpy as np

    from scholargraph.graph import resolution_pass
    from scholargraph.graph.merge import entity_id_for
    from scholargraph.graph.resolve import ResolutionSettings
    from scholargraph.models import EntityRecord
    from scholargraph.store import open_store

    store = open_store(tmp_path / "ws")
    try:
        store.set_meta("embedding_dim", "8")
        names = ["JSONObject", *(f"alpha ring {i}" for i in range(20)), "JSON objects"]
        records = [EntityRecord(n, "Concept", f"entity {i}", f"c{i}", id=entity_id_for(n), key=n, document_id=f"d{i}")
                   for i, n in enumerate(names)]
        store.write(lambda: store.write_entities(records))
        vectors = np.zeros((len(names), 8), dtype=np.float32)
        vectors[0, 0] = 1.0  # "JSONObject": far from the rest
        vectors[1:, 1] = 1.0
        vectors[1:, 2] = np.linspace(0.0, 0.1, len(names) - 1)  # the decoys are nearer "JSON objects"
        store.put_vectors("entity", [r.id for r in records], vectors)
        store.finish_maintenance("resolve", store.pending_maintenance("resolve"))
        store.queue_maintenance("resolve", [records[-1].id])  # the later paper's entity
        groups = resolution_pass.resolve_pending(store, ResolutionSettings(k=3))
        entities = store.get_entities(store.all_entity_ids(), sources=False).values()
    finally:
        store.close()
    assert len(groups) == 1 and {records[0].id, records[-1].id} <= set(groups[0])
    assert len([e for e in entities if "JSON" in e.name]) == 1 and len(entities) == len(names) - 1  # one entity now


# greedy grouping (measured on the six ASKG papers: docs/reliability.md, issue 27 item 11)
OWL_PAPERS = [
    "We use an OWL2 ontology with Protege, Jena, SPARQL, RDF Schema, SHACL, JSON-LD, Apache Kafka, "
    "PostgreSQL, Neo4j, GraphDB, Stardog, Virtuoso, Blazegraph and Ontop to map JSON data.",
    "The BCI Ontology is the first OWL 2 ontology with Wikidata, DBpedia, YAGO, Freebase, schema.org, "
    "Dublin Core, FOAF, SKOS, PROV-O, Gene Ontology, MeSH, UMLS and SNOMED CT for brain signals.",
]


def test_a_later_paper_can_regroup_what_an_earlier_run_merged(tmp_path):
    """Paper 1 alone: "OWL2 ontology" and "OWL2" merge (a code and a generic head noun). Both papers
    at once: "OWL2 ontology" and "OWL 2 ontology" form the clique instead (same compact key), and
    "OWL2" stays apart. Indexed one by one, the second paper's "OWL 2 ontology" cannot join the
    merged entity (it does not link to its member "OWL2"), so the two orders gave two graphs. A pass
    now re-partitions the names of the groups it touches with the new ones, by the rule one pass
    over them all uses, and splits "OWL2" back off."""
    settings = {"extraction": {"profile": "offline"}, "embeddings": {"runtime": "numpy"}}

    def owl(kb) -> set:
        return {(name, tuple(aliases)) for name, aliases in _graph(kb)[0].values() if "OWL" in name}

    together, one_by_one = _built_both_ways(tmp_path, OWL_PAPERS, settings, owl)
    assert ("OWL2 ontology", ("OWL 2 ontology",)) in together
    assert one_by_one == together


def _built_both_ways(tmp_path, papers: list[str], settings: dict, read):
    """``read(kb)`` of the papers indexed in one run, and of them indexed one run each, in order."""
    with KnowledgeBase(tmp_path / "together", **settings) as kb:
        kb.insert(texts=papers)
        together = read(kb)
    with KnowledgeBase(tmp_path / "one-by-one", **settings) as kb:
        for text in papers:
            kb.insert(texts=[text])
        one_by_one = read(kb)
    return together, one_by_one


# rule d's pairs come from a range, not the nearest vectors (issue 27 item 11)
CROWDED_PAPERS = [
    "We compare histone deacetylase with Alpha Kinase, Beta Kinase, Gamma Kinase, Delta Kinase, Epsilon Kinase, "
    "Zeta Kinase, Theta Kinase, Iota Kinase, Kappa Kinase, Lambda Kinase, Sigma Kinase and Omega Kinase in yeast.",
    "HDAC is a deacetylase of histones.",
    "Histones are deacetylated by Rpd3, Hda1, Hos1, Hos2, Hos3, Sir2, Hst1, Hst2, Hst3, Hst4, Set3 and Sin3.",
]


def test_an_acronym_crowded_by_closer_names_merges_in_every_order(tmp_path):
    """"HDAC" (paper 1) spells "histone deacetylase" (paper 0): rule d links them (cosine 0.48), but
    no name block pairs them, only the vectors can. Each has more than ten closer vectors once all
    papers are stored (paper 0's kinases, paper 2's yeast deacetylases): compared only with its
    nearest ten, the pair merged one by one (paper 1's pass ran before paper 2 existed) and not at
    once. Rule d's pairs come from a range of cosines instead: merged in every order."""
    settings = {"extraction": {"profile": "offline"}, "embeddings": {"runtime": "numpy"},
                "communities": {"auto_update": False}}
    together, one_by_one = _built_both_ways(tmp_path, CROWDED_PAPERS, settings, _graph)
    with KnowledgeBase(tmp_path / "reverse", **settings) as kb:
        for text in reversed(CROWDED_PAPERS):
            kb.insert(texts=[text])
        reverse = _graph(kb)
    assert one_by_one == together
    assert reverse == together
    merged = [{name.casefold(), *(a.casefold() for a in aliases)} for name, aliases in together[0].values()]
    assert any({"hdac", "histone deacetylase"} <= names for names in merged)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _merged_pool(part_vectors: dict) -> Pool:
    """A stored entity merged from "histone deacetylase" and "HDACs" (its vector along x), and a new
    "HDAC" at cosine 0.6 to that vector; each part alone points along y."""
    merged = Candidate("e_m", "histone deacetylase", "Gene", "", ["HDACs"], _unit(1, 0, 0))
    new = Candidate("e_new", "HDAC", "Gene", "", [], _unit(0.6, 0, 0.8))
    parts = {"e_m": [(["histone deacetylase"], ["histone deacetylase"]), (["hdacs"], ["HDACs"])],
             "e_new": [(["hdac"], ["HDAC"])]}
    own = {("e_m", n): Candidate(f"e_m#{n}", name, "Gene", "", [], part_vectors.get(("e_m", n), merged.vector))
           for n, name in enumerate(("histone deacetylase", "HDACs"))}
    return Pool([merged, new], parts, own)


def test_a_pass_compares_a_new_name_with_each_part_of_a_merged_entity_by_the_parts_own_vector():
    """"HDAC" spells "histone deacetylase" (rule d) and is "HDACs" (rule c), each needing cosine
    >= 0.3 for an acronym. Through the merged entity's one vector (0.6) it links to both parts and
    joins; by the parts' own vectors (0.0) it links to neither and stays apart: what a pass over
    all the names at once decides (issue 27 item 11)."""
    settings = ResolutionSettings()
    through_merged = regroup(_merged_pool({}), {"e_new"}, settings)
    assert any(("e_new", 0) in group for group in through_merged.merges)
    by_part = regroup(_merged_pool({("e_m", 0): _unit(0, 1, 0), ("e_m", 1): _unit(0, 1, 0)}), {"e_new"}, settings)
    assert not any(("e_new", 0) in group for group in by_part.merges)


def test_each_part_of_a_merged_entity_is_embedded_as_an_entity_of_its_records_alone(tmp_path):
    settings = {"extraction": {"profile": "offline", "resolve": False}, "embeddings": {"runtime": "numpy"}}
    with KnowledgeBase(tmp_path, **settings) as kb:
        kb.insert(texts=[PAGERANK, PASSAGES])
        alone = {e.name: e for e in kb.store.get_entities(kb.store.all_entity_ids(), sources=False).values()
                 if e.name in ("PageRank", "Passage Ranking")}
        kept = kb.merge_entities("PageRank", "Passage Ranking").kept
        embedded: list[str] = []

        def embed(texts: list[str]) -> np.ndarray:
            embedded.extend(texts)
            return np.ones((len(texts), int(kb.store.get_meta("embedding_dim"))), dtype=np.float32)

        pool = candidate_pool(kb.store, {kept}, ResolutionSettings(), None, embed)
    assert sorted(embedded) == sorted(entity_text(e.name, e.type, e.description, e.aliases) for e in alone.values())
    assert sorted(pool.part_candidates) == [(kept, 0), (kept, 1)]
    assert sorted(c.name for c in pool.part_candidates.values()) == sorted(alone)
