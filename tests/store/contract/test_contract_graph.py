"""The graph (GraphStore): provenance, merged values, rebuilds, reading, weights."""

from __future__ import annotations

import pytest
from contract_helpers import chunk, doc, entity_id, extraction, index_document, key

from scholargraph.graph.edit import merge_entities
from scholargraph.models import Entity, EntityRecord, Extraction, KeywordRecord, Relation, RelationRecord
from scholargraph.store.base import SourceLimit


def test_records_resolve_to_one_entity_per_name_and_keep_provenance(store):
    index_document(store, "d1")
    rag, bert = entity_id(store, "Retrieval-Augmented Generation"), entity_id(store, "BERT")
    assert entity_id(store, "rag") == rag  # aliases find the entity too (case-insensitive)
    assert store.entities_by_keys(["rag", "bert", "unknown"]) == {"rag": rag, "bert": bert}
    assert store.find_entity(rag) == [rag] and store.find_entity("nobody") == []
    assert sorted(store.all_entity_ids()) == sorted([rag, bert])
    entities = store.get_entities([rag, bert, "missing"])
    assert sorted(entities) == sorted([rag, bert])
    assert entities[rag].chunk_ids == ["d1-c0"] and entities[rag].document_ids == ["d1"]
    assert store.get_entities([rag], sources=False)[rag].chunk_ids == []
    [(rid, source, target, _weight)] = store.all_edges()
    relation = store.get_relations([rid])[rid]
    assert (relation.source_id, relation.target_id, relation.directed) == (rag, bert, True)
    assert relation.document_ids == ["d1"] and relation.chunk_ids == ["d1-c0"]
    assert (source, target) == (rag, bert)
    [record] = store.relation_provenance([rid])
    assert (record.id, record.source_id, record.target_id, record.document_id, record.chunk_id) == (rid, rag, bert, "d1", "d1-c0")
    assert (record.description, record.keywords, record.types, record.strength, record.confidence, record.directed) == (
        "RAG can use BERT", ["uses"], ["Uses"], 2.0, 0.8, True)


def test_keywords_report_which_ones_are_new(store):
    first = index_document(store, "d1")
    assert store.count("keywords") == 1
    kid = first.keywords[0].id
    assert store.keywords_text([kid, "nope"]) == {kid: "retrieval"}
    assert list(store.iter_keyword_texts()) == [(kid, "retrieval")]
    store.add_pending(doc("d2"), "full", "x")
    again = [KeywordRecord("retrieval", "d2-c0", id=kid, document_id="d2"), KeywordRecord("graphs", "d2-c0", id="k_new",
                                                                                         document_id="d2")]
    assert store.write_keywords(again) == ["k_new"]
    assert store.write_keywords(again) == []


def test_merged_values_are_rebuilt_from_the_sources_in_document_order(store):
    index_document(store, "d2")
    later = Extraction(entities=[EntityRecord("BERT", "Encoder", "a transformer", "d1-c0")])
    index_document(store, "d1", later)
    bert = entity_id(store, "BERT")
    assert bert in store.dirty_ids("entities")
    sources = store.entity_sources([bert])[bert]
    assert sources.descriptions == ["a transformer", "an encoder"]  # d1 before d2, whatever came first
    assert sources.names == ["BERT", "BERT"] and sources.types == ["Encoder", "Model"] and sources.weight == 2
    rag = entity_id(store, "RAG")
    assert store.entity_sources([rag])[rag].roles == ["canonical", "alias"]
    rid = store.all_edges()[0][0]
    rel = store.relation_sources([rid])[rid]
    assert (rel.descriptions, rel.keywords, rel.types, rel.weight, rel.confidence) == (
        ["RAG can use BERT"], ["uses"], ["Uses"], 2.0, 0.8)


def test_a_rebuild_lands_only_if_nothing_arrived_meanwhile(store):
    index_document(store, "d1")
    bert = entity_id(store, "BERT")
    version = store.versions("entities", [bert])[bert]
    merged = Entity(bert, "BERT", "Model", "rebuilt", ["Bert"], 3.0)
    assert store.update_entity(merged, version)
    got = store.get_entities([bert])[bert]
    assert (got.description, got.aliases, got.weight) == ("rebuilt", ["Bert"], 3.0)
    assert bert not in store.dirty_ids("entities")
    store.touch_entities([bert])  # e.g. a merge: an older rebuild must not land
    assert bert in store.dirty_ids("entities")
    assert not store.update_entity(merged, version)
    rid = store.all_edges()[0][0]
    rversion = store.versions("relations", [rid])[rid]
    relation = store.get_relations([rid])[rid]
    rebuilt = Relation(rid, relation.source_id, relation.target_id, "rebuilt", ["k"], ["T"], 4.0, True, 0.5)
    assert store.update_relation(rebuilt, rversion) and store.dirty_ids("relations") == []
    got = store.get_relations([rid])[rid]
    assert (got.description, got.keywords, got.types, got.weight, got.confidence) == ("rebuilt", ["k"], ["T"], 4.0, 0.5)
    assert store.all_edges()[0][3] == 4.0
    store.mark_all_dirty()
    assert store.dirty_ids("relations") == [rid] and len(store.dirty_ids("entities", limit=1)) == 1
    assert not store.update_relation(rebuilt, rversion)
    with pytest.raises(ValueError):
        store.dirty_ids("chunks")


def test_deleting_a_document_keeps_what_other_documents_support(store):
    index_document(store, "d1")
    w2 = index_document(store, "d2", Extraction(entities=[EntityRecord("RAG", "Method", "used in paper two", "d2-c0")]))
    rag_id = w2.entities[0].id
    assert store.count("entities") == 2  # "RAG" in d2 joined the entity defined in d1
    gone = store.delete_graph_of("d1")
    assert rag_id not in gone.entity and len(gone.entity) == 1  # BERT disappeared
    assert len(gone.relation) == 1 and len(gone.keyword) == 1
    assert store.count("relations") == 0 and store.count("keywords") == 0
    assert store.dirty_ids("entities") == [rag_id]
    assert store.get_entities([rag_id])[rag_id].document_ids == ["d2"]


def test_listing_entities_by_degree(store):
    index_document(store, "d1")
    index_document(store, "d2", Extraction(
        entities=[EntityRecord("GPT", "Model", "a decoder", "d2-c0")],
        relations=[RelationRecord("GPT", "BERT", "compared", "d2-c0")]))
    bert = entity_id(store, "BERT")
    listed = store.list_entities()
    assert listed[0].id == bert and listed[0].degree == 2 and listed[0].document_ids == ["d1", "d2"]
    assert [e.id for e in store.list_entities(type_="model")] and all(e.type == "Model" for e in store.list_entities(type_="model"))
    assert [e.id for e in store.list_entities(search="rag")] == [entity_id(store, "RAG")]  # aliases match
    assert len(store.list_entities(limit=1)) == 1


def test_degrees_and_relation_lookups_for_weights(store):
    index_document(store, "d1")
    index_document(store, "d2", Extraction(
        entities=[EntityRecord("GPT", "Model", "a decoder", "d2-c0")],
        relations=[RelationRecord("GPT", "BERT", "compared", "d2-c0"), RelationRecord("BERT", "GPT", "again", "d2-c0")]))
    bert, gpt, rag = entity_id(store, "BERT"), entity_id(store, "GPT"), entity_id(store, "RAG")
    assert store.degrees([bert, gpt, rag, "unknown"]) == {bert: 2, gpt: 1, rag: 1, "unknown": 0}
    touching = store.relations_touching([gpt])
    assert len(touching) == 1  # undirected GPT-BERT stated twice is one relation
    assert store.relation_documents(touching) == {touching[0]: ["d2"]}
    assert sorted(store.relations_touching([bert])) == sorted(rid for rid, *_ in store.all_edges())
    assert store.count("entities") == 3


def test_the_graph_version_changes_with_the_relations(store):
    empty = store.graph_version()
    index_document(store, "d1")
    one = store.graph_version()
    assert one != empty and store.graph_version() == one
    store.set_meta("x", "y")
    assert store.graph_version() == one  # other writes do not count
    index_document(store, "d2", Extraction(relations=[RelationRecord("GPT", "BERT", "compared", "d2-c0")]))
    two = store.graph_version()
    assert two != one
    store.delete_graph_of("d2")
    assert store.graph_version() not in (two,)


def test_keys_match_how_the_pipeline_normalises(store):
    index_document(store, "d1", extraction("d1-c0"))
    assert store.entities_by_keys([key("  BERT ")]) == {"bert": entity_id(store, "BERT")}


def test_a_querys_part_of_the_graph_edges_touching_and_entities_in_chunks(store):
    index_document(store, "d1")
    index_document(store, "d2", Extraction(
        entities=[EntityRecord("Knowledge Graph", "Concept", "nodes and edges", "d2-c0"),
                  EntityRecord("Leiden", "Method", "clustering", "d2-c0")],
        relations=[RelationRecord("Leiden", "Knowledge Graph", "clusters", "d2-c0")]))
    rag, bert = entity_id(store, "Retrieval-Augmented Generation"), entity_id(store, "BERT")
    kg, leiden = entity_id(store, "Knowledge Graph"), entity_id(store, "Leiden")
    every = store.all_edges()
    assert store.edges_touching([bert]) == [e for e in every if bert in e[1:3]]
    assert store.edges_touching([rag, kg, "missing"]) == every, "both components, in all_edges' order"
    assert store.edges_touching([]) == []
    assert {c: sorted(es) for c, es in store.entities_in_chunks(["d2-c0", "d1-c0", "nope"]).items()} == {
        "d1-c0": sorted([rag, bert]), "d2-c0": sorted([kg, leiden])}


def test_a_query_reads_a_bounded_number_of_sources_per_element_the_ones_it_can_cite_first(store):
    """A hub entity stated in many chunks: exports and entity pages still get every source; a query
    reads at most ``per_item`` of them, the chunks it retrieved first, then the rest in document order."""
    for i in range(30):
        index_document(store, f"d{i:02d}")
    rag = entity_id(store, "RAG")
    [(rid, *_)] = store.all_edges()
    every = store.get_entities([rag])[rag]
    assert len(every.chunk_ids) == 30 and every.chunk_ids[:2] == ["d00-c0", "d01-c0"]
    assert len(store.get_relations([rid])[rid].chunk_ids) == 30

    cited = store.get_entities([rag], SourceLimit(3, prefer=("d27-c0", "d13-c0", "not-a-chunk")))[rag]
    assert cited.chunk_ids == ["d13-c0", "d27-c0", "d00-c0"]  # the retrieved ones (in document order), then the first
    assert cited.document_ids == ["d13", "d27", "d00"]
    assert store.get_relations([rid], SourceLimit(2))[rid].chunk_ids == ["d00-c0", "d01-c0"]
    assert store.get_entities([rag], SourceLimit(1, prefer=("d05-c0",)))[rag].chunk_ids == ["d05-c0"]
    # how many chunks state it, counted without reading them (what a hub's weight in a walk needs)
    assert store.chunk_counts("entities", [rag, "missing"]) == {rag: 30}
    assert store.chunk_counts("relations", [rid]) == {rid: 30}


def test_another_workers_write_makes_the_next_question_see_a_new_graph_version(open_workspace):
    """Two processes on one knowledge base (a worker indexing, a server answering): relations the
    worker adds, re-keys or removes must change the version the server reads, or it keeps answering
    from its stale in-memory graph."""
    server, worker = open_workspace(), open_workspace()
    seen, sizes = [], []

    def look():
        seen.append(server.graph_version())
        sizes.append((server.versioned_rows("relations"), len(server.all_edges())))

    look()
    index_document(worker, "d1")
    look()
    index_document(worker, "d2", Extraction(relations=[RelationRecord("GPT", "BERT", "compared", "d2-c0")]))
    look()
    worker.write(lambda: worker.rekey_relation(worker.all_edges()[0][0], "renamed"))
    look()
    worker.delete_graph_of("d2")
    look()
    assert len(set(seen)) == len(seen), seen
    assert all(kept == counted for kept, counted in sizes) and sizes[2][1] > sizes[1][1] > 0, sizes
    assert server.graph_version() == seen[-1]  # reading changes nothing


def test_the_chunks_version_and_whether_there_are_any(open_workspace):
    server, worker = open_workspace(), open_workspace()
    assert not server.has_rows("chunks")
    empty = server.content_version("chunks")
    index_document(worker, "d1")
    assert server.has_rows("chunks") and server.content_version("chunks") != empty
    assert server.versioned_rows("chunks") == server.count("chunks") == 1
    with pytest.raises(ValueError):
        server.content_version("documents")


def test_a_name_key_stands_for_its_only_entity_or_the_most_sourced_one(store):
    """Several entities under one key (a name two types share, a split) → the one with most records
    under it, ties to the smallest id; results in the order of the keys asked."""
    store.add_pending(doc("d1"), "full", "test")
    store.insert_chunks([chunk("d1")])
    counts = {("il6", "gene-il6"): 5, ("il6", "chemical-il6"): 3, ("tnf", "w-tnf"): 2, ("tnf", "x-tnf"): 2,
              ("solo", "solo-1"): 1}
    records = [EntityRecord(k, "Thing", f"record {n}", "d1-c0", id=eid, key=k, document_id="d1")
               for (k, eid), times in counts.items() for n in range(times)]
    store.write(lambda: store.write_entities(records))
    found = store.entities_by_keys(["solo", "tnf", "nothing", "il6"])
    assert found == {"solo": "solo-1", "tnf": "w-tnf", "il6": "gene-il6"}
    assert list(found) == ["solo", "tnf", "il6"]


def test_an_alias_record_follows_the_name_it_was_given_for_after_a_merge(store):
    """A pass takes a merged entity apart into the names it was merged from by reading its records
    in order, an alias right after its name: with every alias written after every name, "IoT" went
    to "IoT ontology" once the two entities were one (issue 27 item 11)."""
    ext = Extraction(entities=[EntityRecord("IoT ontology", "Concept", "an ontology", "d1-c0", ["IoT-O"]),
                               EntityRecord("Internet of Things", "Concept", "networked devices", "d1-c0", ["IoT"])])
    index_document(store, "d1", ext)
    onto, things = entity_id(store, "IoT ontology"), entity_id(store, "Internet of Things")
    store.write(lambda: merge_entities(store, onto, [things]))
    src = store.entity_sources([onto])[onto]
    assert list(zip(src.names, src.roles, strict=True)) == [
        ("IoT ontology", "canonical"), ("IoT-O", "alias"), ("Internet of Things", "canonical"), ("IoT", "alias")]
    assert src.descriptions == ["an ontology", "", "networked devices", ""]  # one item per record
