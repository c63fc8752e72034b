"""fastbio profile: two-stage extraction (abstract draft, main-text refinement), name normalisation,
failure isolation, and the fastbmRAG demo CSVs through the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from fixtures.fastbio_papers import PAPERS, write_csv
from support.canned_bio import (  # noqa: E402,F401
    DRAFT_MARK,
    REFINE_MARK,
    draft_reply,
    fastbio_rules,
    refine_reply,
)
from support.canned_terms import user_text  # noqa: E402
from support.schemas import subschemas

from scholargraph import KnowledgeBase
from scholargraph.config import Settings
from scholargraph.errors import ModelOutputError
from scholargraph.ingest.chunking import layout
from scholargraph.models import Chunk, Document, EntityRecord, Extraction, RelationRecord, Section
from scholargraph.profiles.fastbio.extractor import (
    FastBioExtractor,
    Passage,
    clean_refined,
    main_passages,
    map_relation_type,
)
from scholargraph.profiles.fastbio.normalise import load_dictionary, match_key, normalise_extraction, parse_dictionary
from scholargraph.testing.llm_server import Reply, Rule


def fastbio_kb(server, workdir, embed: str = "server", **extra) -> KnowledgeBase:
    """A KnowledgeBase on the scripted server, profile fastbio, with the embedder wired into the
    extractor as kb.py will do (``embed="server"``: the server's deterministic embeddings)."""
    llm = {"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01, "backoff_max": 0.05,
           "timeout": 10, **extra.pop("llm", {})}
    if embed == "server":
        extra.setdefault("embeddings", {"provider": "openai", "base_url": server.base_url, "model": "emb",
                                        "dimension": 384})
    kb = KnowledgeBase(workdir, llm=llm, extraction={"profile": "fastbio", **extra.pop("extraction", {})}, **extra)
    original = kb.workspace.extractor

    def wired(profile):
        ex = original(profile)
        if ex.name == "fastbio":
            return FastBioExtractor(kb.llm, kb.settings, embed=kb.embedder.embed)
        return ex

    kb.workspace.extractor = wired
    return kb


def _norm(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# dictionary and normalisation
# ---------------------------------------------------------------------------------------------

DICT_CSV = """symbol,aliases,type
IL1B,interleukin 1 beta|IL-1β;IL1-beta,gene
ESR1,estrogen receptor alpha|ER-alpha,gene
ESR2,estrogen receptor beta|ER-beta,gene
"Ovarian Neoplasms",ovarian cancer|ovarian tumour,disease
Endometriosis,endometriosis externa,disease
AD,ambiguous thing,gene
"Alzheimer Disease",AD|alzheimer's,disease
"""


def test_match_key_is_case_and_punctuation_insensitive():
    assert match_key("IL-1β") == match_key("il1 BETA") == match_key("IL1beta") == "il1beta"
    assert match_key("Alzheimer's disease") == match_key("alzheimers-disease")


def test_dictionary_csv_and_headerless_tsv(tmp_path):
    path = tmp_path / "names.csv"
    path.write_text(DICT_CSV, encoding="utf-8")
    d = load_dictionary(path)
    assert len(d) == 7
    assert d.lookup("interleukin-1 Beta").name == "IL1B"
    assert d.lookup("IL 1β").name == "IL1B"
    assert d.lookup("OVARIAN CANCER").name == "Ovarian Neoplasms"
    assert d.lookup("ER-alpha").name == "ESR1"
    assert d.lookup("unknown gene") is None
    # "AD" is one entry's own symbol and another's alias: the symbol wins, unless the type says otherwise
    assert d.lookup("AD").name == "AD"
    assert d.lookup("AD", "Disease").name == "Alzheimer Disease"

    tsv = tmp_path / "genes.tsv"
    tsv.write_text("# HGNC subset\nTNF\tTNF-alpha;TNFA\nVEGFA\tVEGF | vascular endothelial growth factor\n", encoding="utf-8")
    t = load_dictionary(tsv)
    assert t.lookup("tnf α").name == "TNF" and t.lookup("VEGF").name == "VEGFA"
    assert t.lookup("Vascular endothelial growth-factor").name == "VEGFA"


def test_dictionary_ambiguous_alias_is_not_applied():
    d = parse_dictionary("symbol,aliases\nGENE1,shared name\nGENE2,shared name\n")
    assert d.lookup("shared name") is None
    assert d.lookup("gene1").name == "GENE1"


def test_normalise_extraction_with_dictionary_keeps_raw_names_as_aliases(tmp_path):
    d = parse_dictionary(DICT_CSV)
    ex = Extraction(
        entities=[EntityRecord("interleukin-1 beta", "Gene/Protein", "", "c1", aliases=["IL-1β"]),
                  EntityRecord("ovarian cancer", "Disease", "", "c1"),
                  EntityRecord("KRAS", "Gene/Protein", "", "c1", aliases=["K-ras"])],
        relations=[RelationRecord("IL-1β", "ovarian cancer", "d1", "c1", directed=True),
                   RelationRecord("KRAS", "estrogen receptor beta", "d2", "c1", directed=True),
                   RelationRecord("interleukin 1 beta", "IL1B", "self loop", "c1", directed=True)])
    normalise_extraction(ex, d, ["Gene/Protein", "Disease"])
    by_name = {e.name: e for e in ex.entities}
    assert set(by_name) == {"IL1B", "Ovarian Neoplasms", "KRAS", "ESR2"}
    assert by_name["IL1B"].aliases == ["interleukin-1 beta", "IL-1β"]
    assert by_name["Ovarian Neoplasms"].aliases == ["ovarian cancer"]
    assert by_name["KRAS"].aliases == ["K-ras"]  # not in the dictionary: the model's name stays
    assert by_name["ESR2"].aliases == ["estrogen receptor beta"] and by_name["ESR2"].type == "Gene/Protein"
    assert [(r.source, r.target) for r in ex.relations] == [("IL1B", "Ovarian Neoplasms"), ("KRAS", "ESR2")]


def test_normalise_without_dictionary_drops_alias_shared_by_two_entities():
    ex = Extraction(entities=[EntityRecord("ESR1", "Gene/Protein", "", "c", aliases=["estrogen receptor"]),
                              EntityRecord("ESR2", "Gene/Protein", "", "c", aliases=["estrogen receptor", "ERβ"])])
    normalise_extraction(ex, None)
    assert [e.aliases for e in ex.entities] == [[], ["ERβ"]]


def test_relation_type_mapping():
    types = ["Causal", "Risk Factor", "Protective Factor", "Biomarker", "Target", "Modifier", "Regulation", "Expression"]
    assert map_relation_type("risk factor", types) == "Risk Factor"
    assert map_relation_type("BIOMARKER", types) == "Biomarker"
    assert map_relation_type("upregulates", types) == "Regulation"
    assert map_relation_type("protective", types) == "Protective Factor"
    assert map_relation_type("unrelated words", types) is None


# ---------------------------------------------------------------------------------------------
# stage 2 building blocks
# ---------------------------------------------------------------------------------------------


def test_clean_refined():
    assert clean_refined("<think>hmm</think> Description: IL1B is raised in lesions.") == "IL1B is raised in lesions."
    assert clean_refined('{"description": "IL1B is raised in ectopic lesions."}') == "IL1B is raised in ectopic lesions."
    assert clean_refined("The text does not mention IL1B.") is None
    for bad in ("", "   ", "<think>only reasoning</think>", '{"entities": []}', "ok", "[1, 2, 3]"):
        with pytest.raises(ModelOutputError):
            clean_refined(bad)


def _doc_with_body() -> tuple[Document, list[Chunk]]:
    abstract = "IL1B is raised in Endometriosis lesions."
    body = ("Methods paragraph about sampling of tissue from many patients in the clinic.\n\n"
            "IL1B expression was three-fold higher in ectopic Endometriosis lesions than in eutopic tissue.\n\n"
            "Unrelated paragraph describing the statistics software and the weather in the city.\n\n"
            + "A very long paragraph sentence number one about IL1B. " * 60)
    doc = Document("p1", "T", [Section("Abstract", abstract, kind="abstract"), Section("Main text", body, kind="body")],
                   abstract=abstract)
    full, placed = layout(doc)  # the text chunk offsets index: headings on their own line
    start = placed[1].start
    chunks = [Chunk("c-abs", "p1", 0, full[:start], 10, "Abstract", 0, start),
              Chunk("c-body", "p1", 1, full[start:], 100, "Main text", start, len(full))]
    return doc, chunks


def test_main_passages_split_long_paragraphs_and_map_chunks():
    doc, chunks = _doc_with_body()
    passages = main_passages(doc, chunks)
    assert len(passages) >= 5 and all(len(p.text) <= 1500 for p in passages)
    assert all(p.chunk_id == "c-body" for p in passages)
    assert passages[1].text.startswith("IL1B expression was three-fold")
    assert layout(doc)[0][passages[1].start:].startswith("IL1B expression")


def _extractor(**extraction) -> FastBioExtractor:
    settings = Settings(extraction={"profile": "fastbio", **extraction})
    return FastBioExtractor(llm=None, settings=settings)


def test_select_threshold_max_three_and_best_fallback():
    ex = _extractor(entity_types="biomedical")
    ex.threshold, ex.max_paragraphs = 0.5, 3
    passages = [Passage(f"p{i}", i, "c") for i in range(6)]
    picked = ex.select(np.array([0.9, 0.1, 0.7, 0.6, 0.55, 0.2]), passages)
    assert [p.text for p in picked] == ["p0", "p2", "p3"]
    assert [p.text for p in ex.select(np.array([0.1, 0.3, 0.2, 0.0, 0.0, 0.0]), passages)] == ["p1"]


def test_lexical_similarity_prefers_the_paragraph_naming_both_entities():
    ex = _extractor()
    assert ex.similarity == "lexical" and ex.notes
    assert ex.entity_types[0] == "Gene/Protein"  # the default "paper" preset becomes "biomedical"
    doc, chunks = _doc_with_body()
    passages = main_passages(doc, chunks)
    found = Extraction(entities=[EntityRecord("IL1B", "Gene/Protein", "", "c-abs"),
                                 EntityRecord("Endometriosis", "Disease", "", "c-abs")],
                       relations=[RelationRecord("IL1B", "Endometriosis", "IL1B is raised in lesions", "c-abs")])
    sims = asyncio.run(ex._similarities(ex._targets(found), passages))
    assert int(np.argmax(sims[0])) == 1


def test_estimate_counts_one_draft_and_refines_only_with_main_text():
    ex = _extractor()
    count = lambda text: len(text.split())  # noqa: E731
    doc, chunks = _doc_with_body()
    est = ex.estimate(chunks, count)
    assert est["extract"].calls == 1 and est["refine"].calls >= 2
    assert set(ex.estimate(chunks[:1], count)) == {"extract"}


# ---------------------------------------------------------------------------------------------
# through the scripted server
# ---------------------------------------------------------------------------------------------

def test_one_failing_call_only_affects_its_paper_or_relation(llm_server, workdir, tmp_path):
    bad_refine = {"n": 0}

    def refine_or_garbage(request):
        text = user_text(request)
        if "Source: DELTAGENE" in text and "Target: Adenomyosis" in text:
            bad_refine["n"] += 1
            return '{"entities": [], "oops'  # malformed: structured junk, not a description
        return refine_reply(request)

    rules = [Rule("down", r"Title: Paper PC title", Reply("overloaded", status=500)),
             Rule("extract", DRAFT_MARK, draft_reply), Rule("refine", REFINE_MARK, refine_or_garbage)]
    server = llm_server(rules=rules, latency=0.05)
    csv_path = write_csv(tmp_path / "papers.csv", PAPERS)
    with fastbio_kb(server, workdir, llm={"retries": 1, "max_concurrency": 8}) as kb:
        report = kb.insert([csv_path])
        assert sorted(report.added) == ["PA", "PB", "PD"]
        assert [f["id"] for f in report.failed] == ["PC"] and "500" in report.failed[0]["error"]
        store = kb.store
        relations = store.get_relations(rid for rid, *_ in store.all_edges())
        names = {e.id: e.name for e in store.get_entities(store.all_entity_ids(), sources=False).values()}
        chunks = store.get_chunks(r.chunk_id for r in store.relation_provenance(list(relations)))
        rows = [(r.document_id, r.description, r.chunk_id, chunks[r.chunk_id].document_id if r.chunk_id in chunks else None,
                 names[r.source_id], names[r.target_id]) for r in store.relation_provenance(list(relations))]
        failures = [(doc_id, f.reason, f.raw) for doc_id, fs in store.chunk_failures().items() for f in fs]
        docs = {pid: _norm(kb.store.load_document(pid).full_text) for pid in report.added}
        directed = sum(r.directed for r in relations.values())
        stats = server.stats.to_json()
    assert rows and directed == len({(r[4], r[5]) for r in rows})
    refined = 0
    for doc_id, desc, _chunk, chunk_doc, _source, _target in rows:
        assert chunk_doc == doc_id  # the chunk it cites belongs to the same paper
        if desc.startswith("In the main text"):
            refined += 1
            quoted = desc.split(": ", 1)[1]
            assert quoted in docs[doc_id], (doc_id, desc)  # refined from this paper's own main text
        else:
            assert f"'Paper {doc_id} title'" in desc, (doc_id, desc)  # the draft of this paper's abstract
    assert refined >= 4
    # the malformed refine call kept its draft and is recorded; nothing else failed
    assert bad_refine["n"] == 1
    assert len(failures) == 1 and failures[0][0] == "PB" and "draft kept" in failures[0][1] and "oops" in failures[0][2]
    kept = [r for r in rows if r[4] == "DELTAGENE" and r[5] == "Adenomyosis"]
    assert kept and kept[0][1] == "DELTAGENE is linked to Adenomyosis in 'Paper PB title'."
    # stage-2 calls ran concurrently
    assert stats["peak_concurrency"] >= 2 and stats["by_kind"]["refine"]["calls"] == refined + 1


def test_llm_normalisation_resolves_later_mentions_to_the_same_entity(llm_server, workdir, tmp_path):
    def draft(request):
        text = user_text(request)
        if "Paper N1" in text:
            return json.dumps({"entities": [{"name": "IL1B", "type": "Gene", "alias": "interleukin-1 beta"},
                                            {"name": "Endometriosis", "type": "Disease", "alias": "endometriotic disease"}],
                               "relations": [{"source": "interleukin-1 beta", "target": "Endometriosis",
                                              "type": "biomarker", "description": "IL-1β marks it.", "confidence": 9}]})
        return json.dumps({"entities": [{"name": "Interleukin-1 beta", "type": "Protein"},
                                        {"name": "ovarian cancer", "type": "Disease"}],
                           "relations": [{"source": "Interleukin-1 beta", "target": "ovarian cancer",
                                          "relation_type": "Risk", "description": "raises risk."}]})

    dictionary = tmp_path / "mesh.csv"
    dictionary.write_text("heading,entry_terms\nOvarian Neoplasms,ovarian cancer;ovarian tumor\n", encoding="utf-8")
    server = llm_server(rules=[Rule("extract", DRAFT_MARK, draft)])
    papers = [("N1", "Interleukin-1 beta in endometriotic disease.", []), ("N2", "Interleukin-1 beta and ovarian cancer.", [])]
    csv_path = write_csv(tmp_path / "n.csv", papers)
    with fastbio_kb(server, workdir) as kb:
        original = kb.workspace.extractor
        kb.workspace.extractor = lambda profile: _with_dictionary(original(profile), load_dictionary(dictionary))
        report = kb.insert([csv_path])
        assert report.ok
        ents = {e.name: e for e in kb.entities(limit=20)}
        rels = kb.store.get_relations(rid for rid, *_ in kb.store.all_edges())
    assert set(ents) == {"IL1B", "Endometriosis", "Ovarian Neoplasms"}
    assert ents["IL1B"].type == "Gene/Protein" and sorted(ents["IL1B"].documents) == ["N1", "N2"]
    assert "interleukin-1 beta" in ents["IL1B"].aliases and "ovarian cancer" in ents["Ovarian Neoplasms"].aliases
    by_types = sorted((r.types, r.directed, r.confidence) for r in rels.values())
    assert by_types == [(["Biomarker"], True, 0.9), (["Risk Factor"], True, None)]


def _with_dictionary(extractor, dictionary):
    extractor.dictionary = dictionary
    return extractor


@pytest.mark.parametrize("name", ["demo1.csv", "demo2.csv"])
def test_demo_csvs_load_and_index_through_the_scripted_server(dev, llm_server, workdir, name):
    from scholargraph.ingest.csvfile import load_csv
    from scholargraph.ingest.registry import LoadOptions

    path = dev / "fastbm" / name
    docs = load_csv(path, LoadOptions())
    assert len(docs) in (9, 10) and all(d.abstract and d.year and d.venue for d in docs)
    assert all(("weight" in d.metadata) or ("IMPACT_FACTOR" in d.metadata) for d in docs)
    with_body = {d.id for d in docs if any(s.kind == "body" for s in d.sections)}
    server = llm_server(rules=fastbio_rules())
    with fastbio_kb(server, workdir) as kb:
        report = kb.insert([path])
        assert report.ok and len(report.added) == len(docs), report.failed
        per_paper = kb.store.usage_by_document()
        again = kb.insert([path])  # already-indexed paper ids are skipped
    assert not again.added and len(again.skipped) == len(docs) and not again.usage
    for doc_id, usage in per_paper.items():
        assert usage["extract"].calls == 1
        assert (usage.get("refine") is not None) == (doc_id in with_body)
    assert report.usage["extract"].calls == len(docs)
    refine_calls = report.usage["refine"].calls
    assert refine_calls == server.stats.by_kind["refine"]["calls"] > 0


def test_pmc_jats_and_medline_papers(llm_server, workdir):
    """JATS: the abstract drafts, body/introduction paragraphs refine (never the abstract or references);
    MEDLINE records (abstract only) keep their drafts."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"
    server = llm_server(rules=fastbio_rules())
    with fastbio_kb(server, workdir) as kb:
        report = kb.insert([fixtures / "jats_small.nxml", fixtures / "medline.xml"])
        assert report.ok and len(report.added) == 3
        per_paper = kb.store.usage_by_document()
        jats = kb.store.load_document("10.9999/stj.2020.1")
    assert all(u["extract"].calls == 1 for u in per_paper.values())
    assert {d for d, u in per_paper.items() if "refine" in u} == {"10.9999/stj.2020.1"}
    refine_texts = [json.dumps(r) for r in server.stats.requests if REFINE_MARK in json.dumps(r)]
    abstract = " ".join(next(s.text for s in jats.sections if s.kind == "abstract").split())
    assert all(abstract[:40] not in t for t in refine_texts)


LOOPING_DRAFT = json.loads((Path(__file__).parents[1] / "fixtures" / "real_model" / "fastbio_draft_looping.json")
                           .read_text(encoding="utf-8"))


def test_the_draft_schema_bounds_what_a_looping_model_can_write(llm_server, workdir, tmp_path):
    """Recorded with Qwen2.5-Coder 1.5B on a BioRED abstract: under an unbounded schema the draft
    wrote ``{"name":"gene","type":"GeneOrGeneProduct","alias":""}`` until the 2,048-token budget
    (328 s on two cores), and the retry started the same loop. A server that constrains decoding to
    the schema (llama.cpp, vLLM, Ollama) now closes each list at its bound and each string at its
    length, and writes only the profile's types."""
    abstract = LOOPING_DRAFT["messages"][1]["content"].split("Abstract:", 1)[1].strip()
    written = LOOPING_DRAFT["reply"].count('{"name":')
    sent = []

    def draft(request):
        sent.append(request["response_format"]["json_schema"]["schema"])
        return json.dumps({"entities": [{"name": "SQSTM1", "type": "GeneOrGeneProduct", "alias": "p62"}],
                           "relations": []})

    server = llm_server(rules=[Rule("extract", DRAFT_MARK, draft)])
    with fastbio_kb(server, workdir) as kb:
        assert kb.insert([write_csv(tmp_path / "b.csv", [("B1", abstract, [])])]).ok
        profile_types = FastBioExtractor(kb.llm, kb.settings).parse_types
        relation_types = FastBioExtractor(kb.llm, kb.settings).relation_types
    [schema] = sent
    entities, relations = schema["properties"]["entities"], schema["properties"]["relations"]
    assert entities["maxItems"] <= 30 < written and relations["maxItems"] <= 16
    assert all("maxLength" in s for s in subschemas(schema) if s.get("type") == "string")
    assert entities["items"]["properties"]["type"] == {"enum": profile_types}
    assert relations["items"]["properties"]["type"] == {"enum": relation_types}
    # keys the 1.5B filled with nothing (alias "") or a constant (confidence 0.9): decoding steps for nothing
    assert set(entities["items"]["properties"]) == {"name", "type"}
    assert set(relations["items"]["properties"]) == {"source", "target", "type", "description"}
