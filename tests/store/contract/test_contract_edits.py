"""Merge and split (GraphEdits, through graph.edit): `entities --merge/--split` and entity resolution."""

from __future__ import annotations

import numpy as np
from contract_helpers import DIM, entity_id, index_document

from scholargraph.graph.edit import merge_entities, split_entity
from scholargraph.graph.merge import relation_id_for
from scholargraph.models import EntityRecord, Extraction, RelationRecord


def _two_papers(store):
    index_document(store, "d1", Extraction(
        entities=[EntityRecord("large language models", "Model", "big models", "d1-c0"),
                  EntityRecord("transformers", "Architecture", "attention", "d1-c0")],
        relations=[RelationRecord("large language models", "transformers", "built on", "d1-c0")]))
    index_document(store, "d2", Extraction(
        entities=[EntityRecord("LLMs", "Model", "they hallucinate", "d2-c0"),
                  EntityRecord("transformers", "Architecture", "layers", "d2-c0")],
        relations=[RelationRecord("LLMs", "transformers", "use", "d2-c0"),
                   RelationRecord("LLMs", "large language models", "same thing", "d2-c0")]))
    return entity_id(store, "large language models"), entity_id(store, "LLMs"), entity_id(store, "transformers")


def test_merge_moves_provenance_and_merges_relations_that_collide(store):
    llm, llms, tr = _two_papers(store)
    store.put_vectors("entity", [llm, llms], np.eye(DIM, dtype=np.float32)[:2])
    rel_ids = [rid for rid, *_ in store.all_edges()]
    store.put_vectors("relation", rel_ids, np.eye(DIM, dtype=np.float32)[: len(rel_ids)])
    gone = merge_entities(store, llm, [llms])
    assert gone["entity"] == [llms] and store.get_entities([llms]) == {}
    assert store.find_entity("LLMs") == [llm]  # the moved records still name it
    edges = store.all_edges()
    assert len(edges) == 1  # the self-loop went, the two llm-transformers relations became one
    rid = edges[0][0]
    assert rid == relation_id_for(llm, tr, False)
    assert sorted(r.description for r in store.relation_provenance([rid])) == ["built on", "use"]
    assert store.get_entities([llm])[llm].document_ids == ["d1", "d2"]
    assert llm in store.dirty_ids("entities") and rid in store.dirty_ids("relations")
    assert llms not in store.vector_index("entity") and not any(r in store.vector_index("relation") for r in gone["relation"])
    assert store.degrees([llm]) == {llm: 1}


def test_split_undoes_a_merge(store):
    llm, llms, tr = _two_papers(store)
    merge_entities(store, llm, [llms])
    ids = split_entity(store, llm)
    assert sorted(ids) == sorted([llm, llms])
    assert store.find_entity("LLMs") == [llms]
    assert store.entity_name_keys(llms) == [("d2-c0", "llms")] and {k for _, k in store.entity_name_keys(llm)} == {
        "large language models"}
    assert store.get_entities([llms])[llms].document_ids == ["d2"]
    # each record of the merged llm-transformers relation follows the name it was written with, and
    # the relation between the two names (a self-loop while merged) is back
    said = {frozenset((s, t)): sorted(r.description for r in store.relation_provenance([rid]))
            for rid, s, t, _ in store.all_edges()}
    assert said == {frozenset((llm, tr)): ["built on"], frozenset((llms, tr)): ["use"],
                    frozenset((llm, llms)): ["same thing"]}
    assert set(ids) <= set(store.dirty_ids("entities"))
    assert split_entity(store, tr) == [tr]  # one name: nothing to split


def test_edit_primitives(store):
    llm, llms, tr = _two_papers(store)
    keys = store.entity_name_keys(llms)
    assert keys == [("d2-c0", "llms")]
    ends = store.relation_record_ends(tr)
    assert sorted((e.chunk_id, e.source_key, e.target_key) for e in ends) == [
        ("d1-c0", "large language models", "transformers"), ("d2-c0", "llms", "transformers")]
    touched = store.move_entity(llms, llm)
    assert len(touched) == 2 and store.get_entities([llms]) == {}
    assert sorted(store.entity_name_keys(llm)) == [("d1-c0", "large language models"), ("d2-c0", "large language models"),
                                                   ("d2-c0", "llms")]
    store.split_off(llm, "llms", llms)
    assert store.entity_name_keys(llms) == [("d2-c0", "llms")] and llms in store.dirty_ids("entities")
    rid = next(r for r in touched if tr in (store.get_relations([r])[r].source_id, store.get_relations([r])[r].target_id))
    loop = next(r for r in touched if r != rid)  # "LLMs" - "large language models": both ends are llm now
    taken = store.take_relation_records([loop])
    assert [(r.id, r.source_id, r.target_id, r.description, r.source_key, r.target_key) for r in taken] == [
        (loop, llm, llm, "same thing", "llms", "large language models")]
    assert store.relation_provenance([loop]) == [] and loop in store.get_relations([loop])  # the relation stays
    store.delete_relations([loop])
    store.write_relations(taken)  # one entity at both ends: folded, not a relation
    assert loop not in {r for r, *_ in store.all_edges()}
    folded = store.take_folded(llm)
    assert [(r.source_id, r.target_id, r.description, r.document_id) for r in folded] == [(llm, llm, "same thing", "d2")]
    assert store.take_folded(llm) == []
    new_id = relation_id_for(llm, tr, False)
    store.rekey_relation(rid, new_id)
    assert store.get_relations([rid]) == {} and new_id in store.get_relations([new_id])
    store.delete_relations([new_id])
    assert new_id not in {r for r, *_ in store.all_edges()}


def test_an_undirected_relation_keeps_its_ends_in_id_order_whoever_wrote_it_first(store):
    """Issue 27 item 11: the stored direction of an undirected edge was that of the paper that wrote
    the pair first, so papers indexed in another order gave edges pointing the other way. Its ends
    are now in id order, as written and after a merge re-keys it; a directed edge keeps its own."""
    llm, llms, tr = _two_papers(store)
    names = {llm: "large language models", llms: "LLMs", tr: "transformers"}
    high, low = max(llms, tr), min(llms, tr)
    index_document(store, "d3", Extraction(
        entities=[EntityRecord(names[high], "Model", "x", "d3-c0"), EntityRecord(names[low], "Model", "y", "d3-c0")],
        relations=[RelationRecord(names[high], names[low], "written the other way", "d3-c0"),
                   RelationRecord(names[high], names[low], "a directed edge", "d3-c0", directed=True)]))
    ends = {r.id: (r.source_id, r.target_id) for r in store.get_relations(
        [rid for rid, *_ in store.all_edges()], sources=False).values()}
    assert ends[relation_id_for(llms, tr, False)] == (low, high)
    assert ends[relation_id_for(high, low, True)] == (high, low)
    keep, other = (llms, llm) if llms > llm else (llm, llms)  # the kept id is the larger: merged edges turn
    merge_entities(store, keep, [other])
    relations = store.get_relations([rid for rid, *_ in store.all_edges()], sources=False).values()
    assert all(r.source_id < r.target_id for r in relations if not r.directed)


def _ner_paper(store):
    """One chunk naming both names of a later merge, the one the relations do not use first."""
    index_document(store, "d1", Extraction(
        entities=[EntityRecord("LLMs", "Model", "short", "d1-c0"),
                  EntityRecord("large language models", "Model", "long", "d1-c0"),
                  EntityRecord("transformers", "Architecture", "attention", "d1-c0"),
                  EntityRecord("GPUs", "Hardware", "chips", "d1-c0")],
        relations=[RelationRecord("large language models", "transformers", "built on", "d1-c0"),
                   RelationRecord("GPUs", "LLMs", "run", "d1-c0"),
                   RelationRecord("LLMs", "large language models", "abbreviates", "d1-c0")]))
    return [entity_id(store, n) for n in ("large language models", "LLMs", "transformers", "GPUs")]


def _said(store) -> dict[frozenset, list[str]]:
    return {frozenset((s, t)): sorted(r.description for r in store.relation_provenance([rid]))
            for rid, s, t, _ in store.all_edges()}


def test_a_split_gives_each_relation_record_the_ends_it_was_written_with(store):
    """Issue 27 item 11 (the ASKG papers one by one): when a later pass split a merged entity, a
    relation followed the name met first in its chunk, not the name its own record gave that end,
    and the relation between the two names (a self-loop while merged, or written while they were
    one entity) was gone. Each record now keeps the names of its ends, before and after merges."""
    llm, llms, tr, gpu = _ner_paper(store)
    merge_entities(store, llm, [llms])
    index_document(store, "d2", Extraction(  # written while the two names are one entity
        entities=[EntityRecord("large language models", "Model", "x", "d2-c0"), EntityRecord("LLMs", "Model", "y", "d2-c0")],
        relations=[RelationRecord("large language models", "LLMs", "stands for", "d2-c0")]))
    assert _said(store) == {frozenset((llm, tr)): ["built on"], frozenset((llm, gpu)): ["run"]}  # no self-loop
    split_entity(store, llm)
    assert _said(store) == {frozenset((llm, tr)): ["built on"], frozenset((llms, gpu)): ["run"],
                            frozenset((llm, llms)): ["abbreviates", "stands for"]}
    relations = store.get_relations([rid for rid, *_ in store.all_edges()], sources=False).values()
    assert all(r.source_id < r.target_id for r in relations)  # undirected: ends in id order
    assert {r.id for r in relations} <= set(store.dirty_ids("relations"))


def test_a_relation_between_merged_names_goes_with_its_paper(store):
    """The records kept for a split go when their paper is deleted, and follow further merges."""
    llm, llms, tr, gpu = _ner_paper(store)
    merge_entities(store, llm, [llms])
    merge_entities(store, tr, [llm])  # the merged entity merged again: its kept records move too
    split_entity(store, tr)
    assert frozenset((llm, llms)) in _said(store)
    merge_entities(store, llm, [llms])
    index_document(store, "d2", Extraction(  # both names stay known after d1 goes
        entities=[EntityRecord("large language models", "Model", "x", "d2-c0"), EntityRecord("LLMs", "Model", "y", "d2-c0")]))
    store.write(lambda: store.delete_graph_of("d1"))
    split_entity(store, llm)
    assert store.find_entity("LLMs") == [llms] and _said(store) == {}
