"""The citation network (graph/citations.py, ingest/references.py): references parsed from the
loaders' strings, matched by DOI, PMID and title, stubs that later inserts connect, deletes."""

from __future__ import annotations

import asyncio

import pytest

from scholargraph.graph.citations import citation_counts, document_deleted, update_citations
from scholargraph.ingest.references import parse_reference
from scholargraph.ingest.registry import LoadOptions, load_file
from scholargraph.models import DocStatus, Document, Section
from scholargraph.store import open_store


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "ws")
    yield s
    s.close()


def add(store, doc: Document) -> None:
    store.add_pending(doc, "full", "test")
    store.set_status(doc.id, DocStatus.PROCESSED)


def paper(doc_id, title, references=(), doi=None, pmid=None, year=2020) -> Document:
    return Document(doc_id, title, [Section("Body", "text")], doi=doi, pmid=pmid, year=year, references=list(references))


@pytest.mark.parametrize(("raw", "doi", "pmid", "year", "title"), [
    ("Waleed Ammar, Dirk Groeneveld, and Oren Etzioni. 2018. Construction of the literature graph in semantic scholar. "
     "In NAACL.", None, None, 2018, "Construction of the literature graph in semantic scholar"),
    ("Mori H, Takio K. (1992). Mass spectrometry of purified amyloid beta protein in Alzheimer's disease. J Biol Chem "
     "267:17082-6. pmid:1527093", None, "1527093", 1992,
     "Mass spectrometry of purified amyloid beta protein in Alzheimer's disease"),
    ('[4] A. Author and B. Writer, "Graph retrieval for long documents," in Proc. X, 2021, doi:10.1145/3442381.3449988.',
     "10.1145/3442381.3449988", None, 2021, "Graph retrieval for long documents"),
])
def test_parse_reference(raw, doi, pmid, year, title):
    ref = parse_reference(raw)
    assert (ref.doi, ref.pmid, ref.year, ref.title) == (doi, pmid, year, title)


def test_matching_stubs_later_inserts_and_deletes(store):
    add(store, paper("A", "Graph retrieval for long documents", doi="10.1145/ABC"))
    add(store, paper("B", "A survey of citation analysis", references=[
        "X. Y. 2021. Graph Retrieval for Long Documents. In Proc.",      # title inside the entry -> A
        "Someone. 2019. Deep citation parsing at scale. arXiv.",          # unknown -> stub
        "Other (2017). Counting crows in cities. J Birds 3:1. pmid:123456",  # unknown, by PMID -> stub
        "Again. 2021. Another name. doi:10.1145/abc",                        # DOI (case-insensitive) -> A
    ]))
    run = asyncio.run(update_citations(store, ["A", "B"]))
    assert (run.references, run.matched, run.stubs) == (4, 2, 2)
    refs = store.references(["B"])
    assert [r.target_id for r in refs][0] == "A" and refs[3].target_id == "A"
    stubs = {s.id: s for s in store.stub_papers()}
    assert {s.title for s in stubs.values()} == {"Deep citation parsing at scale", "Counting crows in cities"}
    cited_by, cites = citation_counts(store.references())
    assert cited_by["A"] == 1 and cites["B"] == 3  # B cites A twice: counted once

    # the stub papers arrive: every citation of them now points at the documents
    add(store, paper("C", "Deep Citation Parsing at Scale"))
    add(store, paper("D", "Crows", pmid="123456"))
    run = asyncio.run(update_citations(store, ["C", "D"]))
    assert run.connected == 2 and run.entries_connected == 2 and store.stub_papers() == []
    assert [r.target_id for r in store.references(["B"])] == ["A", "C", "D", "A"]

    # A is deleted: B now cites a stub of it, which keeps A's title and DOI
    store.write(lambda: document_deleted(store, store.get_document("A")))
    store.delete_document("A")
    targets = [r.target_id for r in store.references(["B"])]
    assert targets[0] == targets[3] and targets[0].startswith("ref:")
    (stub,) = store.stub_papers()
    assert (stub.title, stub.doi) == ("Graph retrieval for long documents", "10.1145/abc")
    # deleting B (which cited the stubs) removes its reference list and the stubs only it cited
    store.write(lambda: document_deleted(store, store.get_document("B")))
    store.delete_document("B")
    assert store.references() == [] and store.stub_papers() == []


def test_papers_without_a_reference_list_are_resolved_without_reading_every_document(store, monkeypatch):
    """Abstracts (PubMed) have no reference list: a long-lived worker's batch of them listed every
    document of the knowledge base to match references there were none of. Cited as stubs by an
    earlier paper, they still take the stubs' place."""
    add(store, paper("B", "A survey of citation analysis", references=["Someone. 2019. Deep citation parsing at scale."]))
    asyncio.run(update_citations(store, ["B"]))
    add(store, paper("C", "Deep Citation Parsing at Scale"))
    add(store, paper("E", "An abstract with no references"))

    def whole(*args, **kw):
        raise AssertionError("read every document")

    monkeypatch.setattr(store, "list_documents", whole)
    run = asyncio.run(update_citations(store, ["C", "E"]))
    assert (run.references, run.connected) == (0, 1) and store.stub_papers() == []
    assert [r.target_id for r in store.references(["B"])] == ["C"]


def _whole_stub_reads(store, monkeypatch) -> list[int]:
    reads: list[int] = []
    real = store.stub_papers

    def counted(ids=None):
        if ids is None:
            reads.append(1)
        return real(ids)

    monkeypatch.setattr(store, "stub_papers", counted)
    return reads


def test_new_papers_are_matched_against_the_stubs_sharing_a_key_not_every_stub(store, monkeypatch):
    """A long-lived worker's batch of papers is matched against the stubs it could be (by DOI, PMID,
    title, or its title's first words inside a reference's text), never a read of every stub."""
    add(store, paper("B", "A survey of citation analysis", references=[
        "Someone. 2019. Deep citation parsing at scale. arXiv.",                 # title -> stub
        "Other (2017). Counting crows in cities. J Birds 3:1. pmid:123456",      # PMID -> stub
        "Again. 2021. Another name. doi:10.1145/xyz",                             # DOI -> stub
        "see the notes on graph retrieval for long documents by the same group",  # text only -> stub
    ] + [f"Unrelated {i}. 2010. A paper number {i} about nothing. J Misc." for i in range(20)]))
    asyncio.run(update_citations(store, ["B"]))
    assert len(store.stub_papers()) == 24
    reads = _whole_stub_reads(store, monkeypatch)
    for doc in (paper("C", "Deep Citation Parsing at Scale"), paper("D", "Crows", pmid="123456"),
                paper("E", "Whatever", doi="10.1145/XYZ"), paper("F", "Graph retrieval for long documents")):
        add(store, doc)
    run = asyncio.run(update_citations(store, ["C", "D", "E", "F"]))
    assert run.connected == 4 and reads == []
    assert [r.target_id for r in store.references(["B"])][:4] == ["C", "D", "E", "F"]
    assert len(store.stub_papers()) == 20


def test_stubs_of_an_older_knowledge_base_are_keyed_once(store, monkeypatch):
    add(store, paper("B", "A survey", references=["Someone. 2019. Deep citation parsing at scale. arXiv."]))
    asyncio.run(update_citations(store, ["B"]))
    (stub,) = store.stub_papers()
    store.write(lambda: store.put_stub_papers([stub], {stub.id: []}))  # as written before stubs had keys
    store.write(lambda: store.set_meta("stub_keys_missing", "1"))  # what the schema upgrade notes
    add(store, paper("C", "Deep Citation Parsing at Scale"))
    assert asyncio.run(update_citations(store, ["C"])).connected == 1
    reads = _whole_stub_reads(store, monkeypatch)
    add(store, paper("G", "Something else entirely here"))
    asyncio.run(update_citations(store, ["G"]))
    assert reads == []  # keyed once: the next batches read no stub whole


def test_without_stub_papers_a_batch_reads_none_of_its_documents_rows(store, monkeypatch):
    """A batch of abstracts in a knowledge base that no paper cites from: nothing to match them to."""
    add(store, paper("E", "An abstract with no references"))
    rows: list[int] = []
    real = store.documents_by_id
    monkeypatch.setattr(store, "documents_by_id", lambda ids: rows.append(1) or real(ids))
    assert asyncio.run(update_citations(store, ["E"])).connected == 0 and rows == []


def test_no_self_citation(store):
    add(store, paper("A", "Graph retrieval for long documents",
                     references=["Me. 2020. Graph retrieval for long documents. arXiv."]))
    asyncio.run(update_citations(store, ["A"]))
    assert store.references()[0].target_id.startswith("ref:")


@pytest.mark.shared
def test_dev_papers_cite_each_other(dev, store):
    """The dev PDFs (Semantic Scholar papers) cite one another; JATS references keep their PMIDs."""
    pdfs = dev / "pdfs"
    ids = {}
    for name in ("N18-3011.pdf", "2020.acl-main.207.pdf", "2020.acl-main.447.pdf", "2302.07302v1.pdf",
                 "jats/PMC5828200.nxml"):
        (doc,) = load_file(pdfs / name, LoadOptions())
        add(store, doc)
        ids[name] = doc.id
    run = asyncio.run(update_citations(store, list(ids.values())))
    assert run.references > 200
    edges = {(r.citing_id, r.target_id) for r in store.references() if not r.target_id.startswith("ref:")}
    literature_graph = ids["N18-3011.pdf"]
    assert (ids["2020.acl-main.207.pdf"], literature_graph) in edges  # SPECTER cites the literature graph paper
    assert (ids["2020.acl-main.447.pdf"], literature_graph) in edges  # so does S2ORC
    assert all(a != b for a, b in edges)
    jats = store.references([ids["jats/PMC5828200.nxml"]])
    assert len(jats) == 52 and sum(1 for r in jats if r.pmid) == 52
    assert all(r.target_id == f"ref:{r.target_id[4:]}" for r in jats)  # none in the workspace: stubs


def test_a_cited_paper_without_a_parsed_title_is_listed_by_its_reference_text(store):
    """Cited papers outside the workspace are listed by title, never as ``ref:00040e2396313fef``."""
    from scholargraph.analysis.citation_view import network_view

    raw = "[12] Pirolli P and Card S, The sensemaking process and leverage points for analyst technology"
    add(store, paper("a", "Paper A", [raw]))
    asyncio.run(update_citations(store, ["a"]))
    stubs = network_view(store)["most_cited_stubs"]
    assert len(stubs) == 1 and stubs[0]["id"].startswith("ref:")
    assert stubs[0]["title"] and "sensemaking process" in stubs[0]["title"] and not stubs[0]["title"].startswith("[")
