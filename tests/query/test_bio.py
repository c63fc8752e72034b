"""bio query mode and graph weights over a small workspace whose graph is known.

The workspace is indexed through the real pipeline with a stub extractor (each CSV row carries its
relations as JSON) and a bag-of-words embedder, so similarity is word overlap."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import re
from collections import defaultdict

import numpy as np
import pytest

from scholargraph import KnowledgeBase
from scholargraph.config import LLMSettings
from scholargraph.graph import weights as W
from scholargraph.llm.client import LLMClient
from scholargraph.llm.embeddings import Embedder
from scholargraph.models import EntityRecord, Extraction, RelationRecord
from scholargraph.profiles.fastbio.normalise import parse_dictionary
from scholargraph.profiles.fastbio.query import batches, bio_answer, bio_retrieve, format_references, vocabulary_parse
from scholargraph.testing.llm_server import Reply, Rule

DIM = 512
_STOP = {"the", "a", "an", "of", "in", "is", "are", "and", "or", "to", "which", "what", "by", "with", "about"}


class BagEmbedder(Embedder):
    """Each word a fixed random unit vector; a text the normalised sum: cosine ~ word overlap."""

    name = "test:bag"
    dim = DIM

    def __init__(self):
        super().__init__(None)

    async def _embed_uncached(self, texts):
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", text.lower()):
                if w not in _STOP:
                    seed = int.from_bytes(hashlib.sha1(w.encode()).digest()[:4], "little")
                    out[i] += np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
        out[~out.any(axis=1), 0] = 1.0
        return out


class GraphStub:
    """Extraction from the row's ``graph`` column: [[source, type, target, type, relation type, description]]."""

    name = "stub"
    uses_llm = False

    async def extract(self, doc, chunks):
        ex = Extraction()
        cid = chunks[0].id
        for s, st, t, tt, rt, desc in json.loads(doc.metadata["graph"]):
            ex.entities += [EntityRecord(s, st, "", cid), EntityRecord(t, tt, "", cid)]
            ex.relations.append(RelationRecord(s, t, desc, cid, keywords=[rt], types=[rt], directed=True))
        for name, etype in json.loads(doc.metadata.get("isolated") or "[]"):
            ex.entities.append(EntityRecord(name, etype, "", cid))
        return ex


G, D, DR, P = "Gene/Protein", "Disease", "Drug/Compound", "Pathway"
PAPERS = {
    "P1": ("IL1B and ESR2 in endometriosis", "Journal One", 2019, 5.0, [
        ["IL1B", G, "Endometriosis", D, "Expression", "IL1B is upregulated in endometriosis lesions"],
        ["ESR2", G, "Endometriosis", D, "Regulation", "ESR2 overexpression regulates endometriosis progression"]], []),
    "P2": ("Serum markers of endometriosis", "Journal Two", 2020, 2.0, [
        ["IL1B", G, "Endometriosis", D, "Biomarker", "serum IL1B marks endometriosis stage"],
        ["TNF", G, "Endometriosis", D, "Causal", "TNF drives endometriosis inflammation"],
        ["Dienogest", DR, "ESR2", G, "Target", "dienogest targets ESR2 signalling"]], []),
    "P3": ("From endometriosis to ovarian cancer", "Journal Three", 2021, -0.1, [
        ["KRAS", G, "Ovarian Neoplasms", D, "Causal", "KRAS mutations drive ovarian neoplasms"],
        ["Endometriosis", D, "Ovarian Neoplasms", D, "Risk Factor", "endometriosis raises ovarian neoplasms risk"],
        ["WNT signalling", P, "Ovarian Neoplasms", D, "Regulation", "WNT signalling regulates ovarian neoplasms growth"]],
        [["Laparoscopy", "Method"]]),
    "P4": ("APOE and dementia", "Journal Four", 2022, 9.0, [
        ["APOE", G, "Alzheimer Disease", D, "Risk Factor", "APOE4 raises alzheimer disease risk"]], []),
}


def write_csv(path, ids):
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["paper_id", "articletitle", "journal", "year", "weight", "abstract", "graph", "isolated"])
        for pid in ids:
            title, journal, year, weight, graph, isolated = PAPERS[pid]
            w.writerow([pid, title, journal, year, weight, f"Abstract of {title}. " + " ".join(g[5] + "." for g in graph),
                        json.dumps(graph), json.dumps(isolated)])
    return path


def stub_kb(workdir, **extra) -> KnowledgeBase:
    kb = KnowledgeBase(workdir, extraction={"profile": "none", "entity_types": "biomedical"}, **extra)
    kb.workspace.extractor = lambda profile: GraphStub()
    kb.workspace.use_embedder(BagEmbedder())
    return kb


@pytest.fixture
def bio_kb(workdir, tmp_path):
    kb = stub_kb(workdir)
    report = kb.insert([write_csv(tmp_path / "papers.csv", list(PAPERS))])
    assert report.ok and len(report.added) == 4
    yield kb
    kb.close()


def retrieve(kb, question, llm=None, **kwargs):
    return asyncio.run(bio_retrieve(kb.store, kb.settings, kb.embedder, llm, question, **kwargs))


def answer(kb, question, llm=None, **kwargs):
    return asyncio.run(bio_answer(kb.store, kb.settings, kb.embedder, llm, question, **kwargs))


# ---------------------------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------------------------


def expected_weights(ids, how="min"):
    """Degree / node count from the papers themselves (independent of the store)."""
    nodes, edges = set(), set()
    for pid in ids:
        for s, _, t, _, _, _ in PAPERS[pid][4]:
            nodes |= {s, t}
            edges.add((s, t))
        nodes |= {n for n, _ in PAPERS[pid][5]}
    neigh = defaultdict(set)
    for s, t in edges:
        neigh[s].add(t)
        neigh[t].add(s)
    node_w = {n: len(neigh[n]) / len(nodes) for n in nodes}
    return node_w, {(s, t): W.combine(node_w[s], node_w[t], how) for s, t in edges}


def stored_weights(kb, how="min"):
    nodes, edges = W.all_weights(kb.store, how)
    names = {e.id: e.name for e in kb.store.get_entities(kb.store.all_entity_ids()).values()}
    ends = {rid: (names[s], names[t]) for rid, s, t, _ in kb.store.all_edges()}
    return ({names[i]: w for i, w in nodes.items()}, {ends[r]: w for r, w in edges.items()})


def same(got, want):
    return all(g.keys() == w.keys() and g == pytest.approx(w) for g, w in zip(got, want, strict=True))


def test_weights_stay_correct_after_incremental_inserts_and_a_delete(workdir, tmp_path):
    with stub_kb(workdir) as kb:
        kb.insert([write_csv(tmp_path / "a.csv", ["P1", "P2"])])
        assert same(stored_weights(kb), expected_weights(["P1", "P2"]))
        kb.insert([write_csv(tmp_path / "b.csv", ["P3"])])
        nodes, edges = stored_weights(kb)
        assert same((nodes, edges), expected_weights(["P1", "P2", "P3"]))
        assert nodes["Endometriosis"] == pytest.approx(4 / 9) and nodes["Laparoscopy"] == 0.0
        for how in ("mean", "max"):
            assert same(stored_weights(kb, how), expected_weights(["P1", "P2", "P3"], how))
        kb.delete("P2")
        assert same(stored_weights(kb), expected_weights(["P1", "P3"]))
        kb.insert([write_csv(tmp_path / "c.csv", ["P4", "P2"])])
        assert same(stored_weights(kb), expected_weights(["P1", "P2", "P3", "P4"]))
        names = {e.id: e.name for e in kb.store.get_entities(kb.store.all_entity_ids(), sources=False).values()}
        rid = next(rid for rid, s, _, _ in kb.store.all_edges() if names[s] == "IL1B")
        ew = W.relation_weights(kb.store, [rid])[rid]
    assert ew.papers == {"P1": 5.0, "P2": 2.0}  # the paper-level weight column, per source paper
    assert ew.weight == pytest.approx(expected_weights(list(PAPERS))[1][("IL1B", "Endometriosis")])


def test_paper_weight_from_metadata():
    assert W.paper_weight({"weight": 4.0}) == 4.0
    assert W.paper_weight({"IMPACT_FACTOR": "3.5"}) == 3.5
    assert W.paper_weight('{"Impact Factor": -0.1}') == -0.1
    assert W.paper_weight({"journal": "x"}) is None and W.paper_weight(None) is None


# ---------------------------------------------------------------------------------------------
# retrieval without an LLM
# ---------------------------------------------------------------------------------------------


def test_vocabulary_parse_finds_names_and_types(bio_kb):
    q, resolved = vocabulary_parse(bio_kb.store, "Which genes are up-regulated in endometriosis or ovarian neoplasms?",
                                   bio_kb.settings)
    assert q.diseases == ["endometriosis", "ovarian neoplasms"] and not q.genes
    assert q.entity_types == ["Gene/Protein"] and q.relation_types == ["Regulation"]
    assert set(resolved) == {"endometriosis", "ovarian neoplasms"}
    q2, _ = vocabulary_parse(bio_kb.store, "What is the role of IL1B in Endometriosis?", bio_kb.settings)
    assert q2.genes == ["IL1B"] and q2.diseases == ["Endometriosis"] and not q2.entity_types


def test_all_matches_above_the_threshold_no_fixed_cap(bio_kb):
    bio_kb.settings.query.top_k = 1
    r = retrieve(bio_kb, "What is known about endometriosis?", threshold=-1.0)
    lines = [line for s in r.sources for line in s.text.splitlines()]
    # every relation touching endometriosis, from every paper: IL1B (2 papers), ESR2, TNF, and -> ovarian
    assert len(lines) == 5 and r.details["relations"] == 4
    assert [s.document_id for s in r.sources] and {s.document_id for s in r.sources} == {"P1", "P2", "P3"}
    assert all(s.kind == "relation" and s.title and s.venue and s.year for s in r.sources)


def test_a_large_graph_gives_the_most_similar_relations_above_the_threshold_and_says_so(bio_kb):
    """An exact search for every relation above the threshold read all 570,000 relation vectors of a
    200,000-abstract graph per question; the search takes at most ``plugins.bio.max_relations``."""
    bio_kb.settings.plugins["bio"] = {"max_relations": 2}
    r = retrieve(bio_kb, "What is known about these diseases?", threshold=-1.0)
    assert r.details["relations"] == 2
    assert any("at least 2 relations" in n and "plugins.bio.max_relations" in n for n in r.notes)
    # a named entity: the search is among its relations, so none of them is crowded out by others
    bio_kb.settings.plugins["bio"] = {"max_relations": 5}
    named = retrieve(bio_kb, "What is known about endometriosis?", threshold=-1.0)
    assert named.details["relations"] == 4 and not any("max_relations" in n for n in named.notes)


def test_filters_types_and_similarity(bio_kb):
    r = retrieve(bio_kb, "Which genes are up-regulated in endometriosis?", threshold=0.05)
    text = "\n".join(s.text for s in r.sources)
    assert "ESR2 -> Endometriosis (Regulation)" in text
    assert "KRAS" not in text and "APOE" not in text and "Dienogest" not in text
    # a relation type that nothing has is relaxed, with a note
    r2 = retrieve(bio_kb, "Which genes are protective in endometriosis?", threshold=0.05)
    assert any("relation types not used" in n for n in r2.notes) and r2.sources
    # nothing above the threshold: the top_k most similar that pass the filters
    r3 = retrieve(bio_kb, "What about APOE?", threshold=0.99)
    assert any("most similar" in n for n in r3.notes) and [s.document_id for s in r3.sources] == ["P4"]


def test_edge_weight_threshold(bio_kb):
    _, edges = expected_weights(list(PAPERS))
    cut = edges[("ESR2", "Endometriosis")]  # 2/11: ESR2 has two neighbours, the graph 11 nodes
    assert cut > edges[("TNF", "Endometriosis")]
    r = retrieve(bio_kb, "What is known about endometriosis?", threshold=-1.0, weight_threshold=cut)
    text = "\n".join(s.text for s in r.sources)
    assert "ESR2 -> Endometriosis" in text and "TNF" not in text and "IL1B" not in text
    assert any("edge-weight threshold" in n for n in r.notes)


def test_extractive_answer_without_llm(bio_kb):
    a = answer(bio_kb, "What is the role of IL1B in endometriosis?", threshold=0.05)
    assert a.extractive and a.cited and a.mode == "bio"
    assert {s.document_id for s in a.sources} == {"P1", "P2"}
    refs = format_references(a.sources, a.cited)
    assert re.search(r"^\[1\] P[12] · .+ · Journal (One|Two) · 20(19|20)$", refs.splitlines()[0])


def test_batches_fit_the_budget(bio_kb):
    r = retrieve(bio_kb, "What is known about endometriosis?", threshold=-1.0)
    count = lambda text: len(text.split())  # noqa: E731
    groups = batches(r.sources, 25, count)
    assert len(groups) == 3 and [s.number for g in groups for s in g] == [1, 2, 3]
    assert len(batches(r.sources, 10_000, count)) == 1


# ---------------------------------------------------------------------------------------------
# with the scripted LLM
# ---------------------------------------------------------------------------------------------

from support.canned_bio import ANSWER_MARK, MERGE_MARK, PARSE_MARK, batch_answer, merge_answer  # noqa: E402


def llm_for(server):
    return LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", backoff_base=0.01, retries=1))


def test_bio_answer_parses_batches_merges_and_verifies_citations(bio_kb, llm_server):
    parse = json.dumps({"genes": ["IL-1beta"], "diseases": ["endometriosis"], "other": [],
                        "entity_types": [], "relation_types": []})
    server = llm_server(rules=[Rule("parse", PARSE_MARK, parse), Rule("answer", ANSWER_MARK, batch_answer),
                               Rule("merge", MERGE_MARK, merge_answer)])
    dictionary = parse_dictionary("symbol,aliases\nIL1B,IL-1beta|interleukin 1 beta\n")
    a = answer(bio_kb, "What is the role of IL-1beta in endometriosis?", llm=llm_for(server), threshold=0.0,
               dictionary=dictionary, batch_tokens=30)  # one paper per batch
    assert {s.document_id for s in a.sources} == {"P1", "P2"} and len(a.sources) == 2
    assert a.text.startswith("Merged: [1] [2]") or a.text.startswith("Merged: [2] [1]")
    assert 77 in a.removed_citations and "[42]" not in a.text and sorted(a.cited) == [1, 2]
    assert server.stats.by_kind["parse"]["calls"] == 1 and server.stats.by_kind["answer"]["calls"] == 2
    assert server.stats.by_kind["merge"]["calls"] == 1
    assert a.usage["parse"].calls == 1 and a.usage["answer"].calls == 3
    assert any("merged" in n for n in a.notes)
    # every answer call saw only its own batch, numbered globally
    prompts = [json.dumps(r) for r in server.stats.requests if ANSWER_MARK in json.dumps(r)]
    assert sorted(len(re.findall(r"\\n\[\d+\] ", p)) for p in prompts) == [1, 1]


def test_a_failed_batch_loses_only_its_papers(bio_kb, llm_server):
    parse = json.dumps({"genes": [], "diseases": ["Endometriosis"], "entity_types": ["genes"], "relation_types": []})
    server = llm_server(rules=[Rule("parse", PARSE_MARK, parse),
                               Rule("down", r"Journal One", Reply("overloaded", status=500)),
                               Rule("answer", ANSWER_MARK, batch_answer), Rule("merge", MERGE_MARK, merge_answer)])
    a = answer(bio_kb, "Which genes are involved in endometriosis?", llm=llm_for(server), threshold=-1.0,
               batch_tokens=30)
    p1 = next(s.number for s in a.sources if s.document_id == "P1")
    assert any("failed" in n and "left out" in n for n in a.notes)
    assert a.text and p1 not in a.cited and a.cited
    assert all(s.document_id != "P4" for s in a.sources)


def test_unusable_parse_falls_back_to_the_vocabulary(bio_kb, llm_server):
    server = llm_server(rules=[Rule("parse", PARSE_MARK, "I think the question is about genes."),
                               Rule("answer", ANSWER_MARK, batch_answer)])
    a = answer(bio_kb, "What does KRAS do in ovarian neoplasms?", llm=llm_for(server), threshold=0.0)
    assert any("parse by the LLM failed" in n for n in a.notes)
    assert [s.document_id for s in a.sources] == ["P3"] and "KRAS -> Ovarian Neoplasms" in a.sources[0].text
    assert a.cited == [1]


# ---------------------------------------------------------------------------------------------
# the common switches: top_k and sessions (bio is a plug-in mode like any other)
# ---------------------------------------------------------------------------------------------


def test_ask_bio_top_k_returns_k_papers(workdir, tmp_path, capsys, monkeypatch):
    """`ask --mode bio --top-k 3`: the three best-ranked papers, not every match."""
    from scholargraph.cli import main

    kb = KnowledgeBase(workdir, extraction={"profile": "none", "entity_types": "biomedical"})  # the real embedder
    kb.workspace.extractor = lambda profile: GraphStub()
    assert kb.insert([write_csv(tmp_path / "papers.csv", list(PAPERS))]).ok
    kb.close()
    monkeypatch.setenv("SCHOLARGRAPH_QUERY__BIO_THRESHOLD", "-1")  # every relation is similar enough
    question = "Which genes are involved in these diseases?"  # names nothing: every gene relation matches

    def ask(*extra):
        assert main(["ask", question, "--mode", "bio", "-w", str(workdir), "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    assert ask()["context_sources"] == 4  # without top_k: every paper above the threshold (fastbmRAG)
    out = ask("--top-k", "3")
    assert out["context_sources"] == 3 and set(out["cited"]) <= {1, 2, 3}
    assert any("showing the 3 best ranked" in n for n in out["notes"])
    assert ask("--top-k", "1", "--no-clues", "--no-subgraph")["context_sources"] == 1


def test_bio_mode_keeps_the_session_history(workdir, tmp_path, llm_server):
    server = llm_server(rules=[Rule("parse", PARSE_MARK, json.dumps({"genes": ["IL1B"], "diseases": ["endometriosis"]})),
                               Rule("answer", ANSWER_MARK, batch_answer), Rule("merge", MERGE_MARK, merge_answer)])
    with stub_kb(workdir, llm={"base_url": server.base_url, "model": "scripted-model"}) as kb:
        assert kb.insert([write_csv(tmp_path / "papers.csv", list(PAPERS))]).ok
        first = kb.query("What is the role of IL1B in endometriosis?", mode="bio", session="s1")
        second = kb.query("And in which papers?", mode="bio", session="s1", top_k=1)
    assert first.mode == second.mode == "bio" and len(second.sources) == 1
    prompts = [json.dumps(r) for r in server.stats.requests if ANSWER_MARK in json.dumps(r)]
    assert "Earlier question: What is the role of IL1B in endometriosis?" in prompts[-1]
    assert not any("Earlier question" in p for p in prompts[:-1])


def test_a_citation_invented_in_a_batch_is_reported(bio_kb, llm_server):
    # the batch step dropped "[42]" before the check, so removed_citations was empty, no note
    parse = json.dumps({"genes": ["IL1B"], "diseases": ["endometriosis"], "other": [], "entity_types": [],
                        "relation_types": []})
    server = llm_server(rules=[Rule("parse", PARSE_MARK, parse), Rule("answer", ANSWER_MARK, batch_answer)])
    a = answer(bio_kb, "What is the role of IL1B in endometriosis?", llm=llm_for(server), threshold=0.0)
    assert len(a.sources) == 2 and server.stats.by_kind["answer"]["calls"] == 1  # one batch, no merge
    assert "[42]" not in a.text and a.removed_citations == [42]
    assert any("removed citation(s) [42]" in n for n in a.notes)


def test_notes_name_each_missing_name_once_and_question_words_are_not_names(bio_kb, llm_server):
    # "not in the graph: Which, Which, Which"
    parse = json.dumps({"genes": ["Which", "FOXP9"], "diseases": ["Which", "FOXP9"], "other": ["which", "What"],
                        "entity_types": ["genes"], "relation_types": []})
    server = llm_server(rules=[Rule("parse", PARSE_MARK, parse), Rule("answer", ANSWER_MARK, batch_answer)])
    r = retrieve(bio_kb, "Which genes are linked to FOXP9?", llm=llm_for(server), threshold=0.0)
    missing = [n for n in r.notes if n.startswith("not in the graph")]
    assert missing == ["not in the graph: FOXP9 (no filter on them)"]
    assert "Which" not in json.dumps(r.details["parsed"]) and "which" not in json.dumps(r.details["parsed"])
