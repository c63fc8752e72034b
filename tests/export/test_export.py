"""`scholargraph export`: Turtle and JSON-LD parse back with rdflib to the triples written, every
triple of a local KG traces to a stored sentence, GraphML and node-link JSON open in networkx, the
Neo4j CSVs have neo4j-admin's headers, a selection of papers exports only them, pages of any size
give the same graph, and any workspace exports (no LLM needed)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import networkx as nx
import pytest
import rdflib
from fixtures.localkg_papers import localkg_kb, write_paper
from rdflib import RDF
from rdflib.namespace import PROV, SKOS
from support.canned_localkg import localkg_rules

from scholargraph import KnowledgeBase
from scholargraph.cli import main
from scholargraph.export.rdf import SG
from scholargraph.testing.llm_server import ScriptedLLMServer

SECOND = {"id": "second-paper", "title": "A second paper",
          "text": "The ASKG Explorer shows the ANU Scholarly Knowledge Graph. It uses the MEL metadata."}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """Two papers indexed with localkg through the scripted server (built once for the module)."""
    root = tmp_path_factory.mktemp("export")
    with ScriptedLLMServer(rules=localkg_rules()) as server, localkg_kb(server, root / "ws") as kb:
        assert kb.insert([write_paper(root / "papers")], texts=[SECOND]).ok
    return root / "ws"


def _kb(workspace: Path) -> KnowledgeBase:
    return KnowledgeBase(workspace, progress=False)


def _first_doc(kb: KnowledgeBase) -> str:
    return next(r.id for r in kb.store.list_documents() if r.id != "second-paper")


def test_turtle_and_jsonld_parse_back_to_the_triples_written(workspace, tmp_path):
    with _kb(workspace) as kb:
        for fmt, name in (("turtle", "kg.ttl"), ("jsonld", "kg.jsonld")):
            report = kb.export(fmt, tmp_path / name)
            g = rdflib.Graph().parse(tmp_path / name, format="turtle" if fmt == "turtle" else "json-ld")
            assert len(g) == report.written["triples"] > 500, fmt
        ttl = rdflib.Graph().parse(tmp_path / "kg.ttl", format="turtle")
        assert set(ttl) == set(rdflib.Graph().parse(tmp_path / "kg.jsonld", format="json-ld"))


def assert_every_triple_traces_to_a_stored_sentence(g: rdflib.Graph, stored: set[str]) -> None:
    sentences = {s for s in g.subjects(RDF.type, SG.Sentence) if str(g.value(s, RDF.value)) in stored}
    statements = set(g.subjects(RDF.type, RDF.Statement))
    grounded = {st for st in statements if g.value(st, PROV.wasDerivedFrom) in sentences}
    assert grounded == statements, "a statement without a stored sentence"
    claims = {(g.value(st, RDF.subject), g.value(st, RDF.predicate), g.value(st, RDF.object)) for st in grounded}
    mentions = {m for m in g.subjects(RDF.type, SG.Mention) if g.value(m, PROV.wasQuotedFrom) in sentences}
    assert mentions == set(g.subjects(RDF.type, SG.Mention)) and mentions
    entities = set(g.subjects(RDF.type, SKOS.Concept))
    mentioned = {g.value(m, SG.refersTo) for m in mentions}
    in_claims = {x for s, _, o in claims for x in (s, o)}
    predicates = {p for _, p, _ in claims}
    structure = set(g.subjects(RDF.type, SG.Paper)) | set(g.subjects(RDF.type, SG.Section)) | sentences
    passages = {g.value(s, SG.passage) for s in sentences}
    for s, p, o in g:
        if s in entities and o in entities:  # a relation: one of its grounded statements says it
            assert (s, p, o) in claims, (s, p, o)
        elif s in entities:
            assert s in mentioned or s in in_claims, s  # taxonomy concepts: through their broader statement
        elif s in predicates:
            continue
        else:
            assert s in structure | mentions | grounded | passages, (s, p, o)


def test_every_exported_triple_of_one_paper_has_sentence_provenance(workspace):
    with _kb(workspace) as kb:
        doc = _first_doc(kb)
        out = io.StringIO()
        kb.export("turtle", out, doc_ids=[doc])
        stored = {s.text for s in kb.store.sentences_of(doc)}
    g = rdflib.Graph().parse(data=out.getvalue(), format="turtle")
    assert_every_triple_traces_to_a_stored_sentence(g, stored)
    assert (None, SKOS.broader, None) in g
    papers = list(g.subjects(RDF.type, SG.Paper))
    assert len(papers) == 1 and str(g.value(papers[0], rdflib.namespace.DCTERMS.title)) == "MEL and the ASKG"
    # a resolved predicate is defined once, with its label; the form as written stays on the statement
    uses = [p for p in g.subjects(RDF.type, RDF.Property) if str(g.value(p, rdflib.RDFS.label)) == "uses"]
    assert len(uses) == 1 and {str(w) for w in g.objects(None, SG.predicateAsWritten)} >= {"employs"}


def test_a_selection_exports_only_those_papers(workspace):
    with _kb(workspace) as kb:
        everything, one = io.StringIO(), io.StringIO()
        kb.export("turtle", everything)
        report = kb.export("turtle", one, doc_ids=["second-paper"])
        only = {e.local_id for e in kb.store.local_graph_of("second-paper").entities}
    assert report.documents == ["second-paper"]
    g = rdflib.Graph().parse(data=one.getvalue(), format="turtle")
    assert len(list(g.subjects(RDF.type, SG.Paper))) == 1
    exported = {int(str(e).rsplit("/", 1)[1]) for e in g.subjects(RDF.type, SKOS.Concept)}  # its own local KG
    assert exported == only and len(g) < len(rdflib.Graph().parse(data=everything.getvalue(), format="turtle"))


def test_small_pages_give_the_same_graph(workspace):
    from scholargraph.export import export_workspace

    with _kb(workspace) as kb:
        big, small = io.StringIO(), io.StringIO()
        export_workspace(kb.store, "turtle", big)
        export_workspace(kb.store, "turtle", small, page=3)
    assert set(rdflib.Graph().parse(data=big.getvalue(), format="turtle")) == set(
        rdflib.Graph().parse(data=small.getvalue(), format="turtle"))
    assert small.getvalue().count("@prefix sg:") == 1  # declared once, not per page


def test_graphml_and_node_link_json_open_in_networkx(workspace, tmp_path):
    with _kb(workspace) as kb:
        ml = kb.export("graphml", tmp_path / "kg.graphml")
        js = kb.export("json", tmp_path / "kg.json")
        entities, relations = kb.store.count("entities"), kb.store.count("relations")
        records = len(kb.store.relation_provenance([r for r, *_ in kb.store.all_edges()]))
    g = nx.read_graphml(tmp_path / "kg.graphml")
    assert g.number_of_nodes() == ml.written["nodes"] == entities and g.number_of_edges() == ml.written["edges"] == records >= relations
    node = next(iter(g.nodes(data=True)))[1]
    assert {"label", "type", "description"} <= set(node)
    assert any(d.get("predicate") == "skos:broader" for _, _, d in g.edges(data=True))
    assert any(d.get("sentence") for _, _, d in g.edges(data=True))  # evidence sentences on the edges
    h = nx.node_link_graph(json.loads((tmp_path / "kg.json").read_text()), edges="edges")
    assert h.number_of_nodes() == js.written["nodes"] == entities + 2 and h.number_of_edges() == js.written["edges"]


def test_neo4j_csv_files_have_admin_import_headers(workspace, tmp_path):
    with _kb(workspace) as kb:
        report = kb.export("neo4j-csv", tmp_path / "neo")
        entities = kb.store.count("entities")
    files = {p.name for p in (tmp_path / "neo").iterdir()}
    assert files >= {"papers.csv", "entities.csv", "sentences.csv", "relations.csv", "mentions.csv", "import.sh"}
    with (tmp_path / "neo" / "entities.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "entityId:ID(Entity)" and rows[0][-1] == ":LABEL" and len(rows) - 1 == entities
    with (tmp_path / "neo" / "relations.csv").open(encoding="utf-8") as fh:
        rels = list(csv.DictReader(fh))
    assert {r[":TYPE"] for r in rels} >= {"USES", "BROADER"}
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", r[":TYPE"]) for r in rels)
    script = (tmp_path / "neo" / "import.sh").read_text()
    assert "neo4j-admin database import full" in script and "--nodes=entities.csv" in script
    assert report.written["rows"]["relations"] == len(rels)


def test_any_workspace_exports_without_an_llm(tmp_path):
    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}, progress=False) as kb:
        kb.insert([], texts=[{"id": "t1", "title": "RAG", "text": "Retrieval-Augmented Generation (RAG) uses BERT. "
                                                                 "BERT is a Transformer model for retrieval."}])
        out = io.StringIO()
        report = kb.export("turtle", out)
    g = rdflib.Graph().parse(data=out.getvalue(), format="turtle")
    assert len(g) == report.written["triples"] and list(g.subjects(RDF.type, SKOS.Concept))
    # without sentences, statements and entities cite the passage they come from
    passages = set(g.subjects(RDF.type, SG.Passage))
    assert passages and all(g.value(st, PROV.wasDerivedFrom) in passages for st in g.subjects(RDF.type, RDF.Statement))


def test_export_command(workspace, tmp_path, capsys):
    out = tmp_path / "one.ttl"
    assert main(["export", "-w", str(workspace), "--format", "turtle", "--doc", "second-paper", "--out", str(out)]) == 0
    assert "exported 1 paper(s) as turtle" in capsys.readouterr().out and rdflib.Graph().parse(out, format="turtle")
    assert main(["export", "-w", str(workspace), "--format", "neo4j-csv", "--out", str(tmp_path / "neo"),
                 "--json"]) == 0
    assert "neo4j-admin database import" in json.loads(capsys.readouterr().out)["command"]
    assert main(["export", "-w", str(workspace), "--format", "jsonld"]) == 0  # to standard output
    assert json.loads(capsys.readouterr().out)["@graph"]
    assert main(["export", "-w", str(workspace), "--format", "json", "--doc", "nope"]) == 5
    assert "no document with id 'nope'" in capsys.readouterr().err


FORBIDDEN = "\x00\x01\x07\x0b\x1b\ufffe\uffff"  # XML 1.0 forbids them; PDF text has them
DIRTY = ("Retrieval-Augmented Generation (RAG) uses BERT\uffff encoders. BERT\x07 is a Transformer\x0b model for "
         "retrieval\x00 and ranking. The Transformer\ufffe model uses attention\x1b.")


def test_every_format_loads_in_its_reference_reader_with_characters_xml_forbids(tmp_path):
    from lxml import etree

    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}, progress=False) as kb:
        kb.insert([], texts=[{"id": "t1", "title": "RAG\x01 models\uffff", "text": DIRTY}])
        names = [e.name + e.description for page in kb.store.iter_entity_pages(None, 100) for e in page]
        assert any(c in text for text in names for c in FORBIDDEN)  # they reached the graph
        for fmt in ("graphml", "turtle", "jsonld", "json"):
            kb.export(fmt, tmp_path / f"kg.{fmt}")
        kb.export("neo4j-csv", tmp_path / "neo")
        web = kb.browse.export_graph("graphml")  # the web app's export button
    etree.fromstring(web.encode())
    etree.parse(str(tmp_path / "kg.graphml"))  # lxml: well-formed XML 1.0
    g = nx.read_graphml(tmp_path / "kg.graphml")
    assert any("BERT encoders" in d.get("description", "") for _, _, d in g.edges(data=True))
    for fmt, parser in (("turtle", "turtle"), ("jsonld", "json-ld")):
        assert len(rdflib.Graph().parse(tmp_path / f"kg.{fmt}", format=parser)) > 10
    assert nx.node_link_graph(json.loads((tmp_path / "kg.json").read_text()), edges="edges").number_of_nodes()
    for path in (tmp_path / "neo").glob("*.csv"):  # neo4j-admin: no control characters, rows as wide as the header
        text = path.read_text(encoding="utf-8")
        assert not any(c in text for c in FORBIDDEN), path.name
        rows = list(csv.reader(io.StringIO(text)))
        assert all(len(r) == len(rows[0]) for r in rows), path.name
    for name in ("kg.graphml", "kg.turtle", "kg.jsonld", "kg.json"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert not any(c in text for c in FORBIDDEN) and not re.search(r"\\u00[01][0-9a-fA-F]", text), name


def test_export_names_the_relations_stats_counts_beside_its_edges(workspace, tmp_path, capsys):
    """export counts relations as `stats` does (it once said 5,940 edges where `stats` said 5,239 relations)."""
    with _kb(workspace) as kb:
        relations = kb.stats().relations
    assert main(["export", "-w", str(workspace), "--format", "graphml", "--out", str(tmp_path / "g.graphml")]) == 0
    out = capsys.readouterr().out
    assert f"({relations:,} relations as `stats` counts them" in out


def test_a_papers_local_kg_stays_as_it_was_built_when_other_papers_join(tmp_path):
    """seed 004 item 1: export --doc A before and after indexing paper B is the same graph; the
    workspace export links each local entity to the merged entity it joined (skos:exactMatch)."""
    ws, papers = tmp_path / "ws", tmp_path / "papers"
    with ScriptedLLMServer(rules=localkg_rules()) as server:
        with localkg_kb(server, ws) as kb:
            assert kb.insert([write_paper(papers)]).ok
            doc = _first_doc(kb)
        before = tmp_path / "before.ttl"
        assert main(["export", "-w", str(ws), "--format", "turtle", "--doc", doc, "--out", str(before)]) == 0
        with localkg_kb(server, ws) as kb:
            assert kb.insert([], texts=[SECOND]).ok
            merged = {e.id for e in kb.store.get_entities(kb.store.all_entity_ids()).values()
                      if set(e.document_ids) == {doc, "second-paper"}}
        assert merged, "the two papers share no workspace entity: the test proves nothing"
        after = tmp_path / "after.ttl"
        assert main(["export", "-w", str(ws), "--format", "turtle", "--doc", doc, "--out", str(after)]) == 0
    assert before.read_text(encoding="utf-8") == after.read_text(encoding="utf-8")
    g = rdflib.Graph().parse(after, format="turtle")
    local = set(g.subjects(RDF.type, SG.LocalEntity))
    assert local and all(g.value(e, SKOS.definition) for e in local if g.value(e, SG.category) is None)
    assert all(str(e).startswith(str(next(g.subjects(RDF.type, SG.Paper)))) for e in local)
    assert not set(g.objects(None, SKOS.exactMatch)), "the paper view is the local KG alone"
    # stage details (item 3): each local entity's relevance (stage 4) and potential parent types (stage 1)
    assert sum(g.value(e, SG.relevance) is not None for e in local) > len(local) / 2
    assert sum((e, SG.potentialType, None) in g for e in local) > len(local) / 2
    # the workspace view: the merged graph, and every local entity linked to the entity it joined
    with KnowledgeBase(ws, progress=False) as kb:
        out = io.StringIO()
        kb.export("turtle", out)
    whole = rdflib.Graph().parse(data=out.getvalue(), format="turtle")
    links = {(str(a), str(b).rsplit("/", 1)[1]) for a, b in whole.subject_objects(SKOS.exactMatch)}
    assert {b for _, b in links} >= merged
    sharing = [a for a, b in links if b in merged]
    assert {a.split("/entity/")[0] for a in sharing} >= {f"{s}" for s in whole.subjects(RDF.type, SG.Paper)}


def test_a_ddm_inputs_own_sentences_and_iris_are_kept_through_to_rdf(tmp_path):
    """seed 004 item 2: sentences as the input segmented them (not re-split), mentions and triples
    citing the input's own sentence IRIs."""
    given = [("Section-1-Paragraph-1-Sentence-1", "The Metadata Extractor and Loader (MEL) uses Apache Tika. "
              "Tika reads the files of the ASKG."),  # one sentence in the input, two for our splitter
             ("Section-1-Paragraph-1-Sentence-2", "MEL stores the metadata in a document store.")]
    data = {"iri": "Paper-MEL", "title": "MEL", "sections": [{"iri": "Section-1", "subtitle": "Methods", "paragraphs": [
        {"iri": "Section-1-Paragraph-1", "sentences": [{"iri": iri, "text": text} for iri, text in given]}]}]}
    path = tmp_path / "papers" / "mel.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    with ScriptedLLMServer(rules=localkg_rules()) as server, localkg_kb(server, tmp_path / "ws") as kb:
        assert kb.insert([path]).ok
        [doc] = [r.id for r in kb.store.list_documents()]
        assert [(s.iri, s.text) for s in kb.store.sentences_of(doc)] == given
        out = io.StringIO()
        kb.export("turtle", out, doc_ids=[doc])
    g = rdflib.Graph().parse(data=out.getvalue(), format="turtle")
    sentences = {str(g.value(s, rdflib.namespace.DCTERMS.identifier)): s for s in g.subjects(RDF.type, SG.Sentence)}
    assert sorted(sentences) == [iri for iri, _ in given]
    assert all(str(node).endswith("/" + iri) for iri, node in sentences.items())
    quoted = set(g.objects(None, PROV.wasQuotedFrom)) | set(g.objects(None, PROV.wasDerivedFrom))
    assert quoted and quoted <= set(sentences.values())
