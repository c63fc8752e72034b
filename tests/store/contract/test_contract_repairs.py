"""What a run leaves unfinished, kept durably: chunk failures until they are repaired
(DocumentStore) and graph maintenance owed (MaintenanceStore)."""

from __future__ import annotations

import pytest
from contract_helpers import doc, index_document

from scholargraph.models import ChunkFailure


def failures_of(store, doc_id):
    return [(f.chunk_id, f.reason, f.profile, f.attempts) for f in store.chunk_failures().get(doc_id, [])]


def test_a_chunk_that_fails_again_keeps_one_record_and_counts_attempts(store):
    store.add_pending(doc("d1"), "full", "academic")
    store.record_chunk_failures("d1", "academic", [ChunkFailure("d1-c0", "prose"), ChunkFailure("d1-c1", "prose")])
    store.record_chunk_failures("d1", "academic", [ChunkFailure("d1-c1", "cut off", "{\"entities\": [")])
    assert failures_of(store, "d1") == [("d1-c0", "prose", "academic", 1), ("d1-c1", "cut off", "academic", 2)]
    assert store.chunk_failures()["d1"][1].raw == "{\"entities\": ["
    assert store.chunk_failure_counts() == {"d1": 2} and store.count("chunk_failures") == 2


def test_repaired_chunks_are_cleared(store):
    for d in ("d1", "d2"):
        store.add_pending(doc(d), "full", "academic")
        store.record_chunk_failures(d, "academic", [ChunkFailure(f"{d}-c0", "x"), ChunkFailure(f"{d}-c1", "y")])
    store.clear_chunk_failures("d1", ["d1-c0", "d2-c1", "nope"])  # other documents' chunks are not touched
    assert [f[0] for f in failures_of(store, "d1")] == ["d1-c1"]
    assert store.chunk_failures(["d2"]) == {"d2": store.chunk_failures()["d2"]} and len(store.chunk_failures()["d2"]) == 2
    store.clear_chunk_failures("d2")
    assert store.chunk_failure_counts() == {"d1": 1} and "d2" not in store.chunk_failures()
    assert store.chunk_failures(["d2"]) == {}


def test_dropping_a_documents_graph_drops_its_chunk_failures(store):
    index_document(store, "d1")
    store.record_chunk_failures("d1", "academic", [ChunkFailure("d1-c1", "x")])
    store.delete_graph_of("d1")
    assert store.chunk_failure_counts() == {}


def test_chunk_failures_and_maintenance_survive_reopening(open_workspace):
    store = open_workspace()
    store.add_pending(doc("d1"), "full", "academic")
    store.record_chunk_failures("d1", "academic", [ChunkFailure("d1-c0", "x")])
    store.queue_maintenance("resolve", ["e2", "e1"])
    store.close()
    again = open_workspace()
    assert failures_of(again, "d1") == [("d1-c0", "x", "academic", 1)]
    assert again.pending_maintenance("resolve") == ["e1", "e2"]


def test_maintenance_is_a_set_per_task(store):
    store.queue_maintenance("resolve", ["e3", "e1", "e1"])
    store.queue_maintenance("resolve", ["e2", "e3"])
    assert store.pending_maintenance("resolve") == ["e1", "e2", "e3"]
    assert store.pending_maintenance("resolve", limit=1) == ["e1"]
    store.finish_maintenance("resolve", ["e1", "e3", "unknown"])
    assert store.pending_maintenance("resolve") == ["e2"]
    store.queue_maintenance("resolve", [])
    store.finish_maintenance("resolve", [])
    assert store.pending_maintenance("resolve") == ["e2"]


def test_maintenance_is_queued_with_the_unit_of_work_that_needs_it(store):
    def commit_then_fail():
        store.add_pending(doc("d1"), "full", "academic")
        store.queue_maintenance("resolve", ["e1"])
        raise RuntimeError("killed mid-commit")

    with pytest.raises(RuntimeError):
        store.write(commit_then_fail)
    assert store.pending_maintenance("resolve") == [] and store.get_document("d1") is None

    def finish_with_merges():
        store.queue_maintenance("resolve", ["e1", "e2"])
        store.finish_maintenance("resolve", ["e1"])
        return store.pending_maintenance("resolve")  # sees its own writes

    assert store.write(finish_with_merges) == ["e2"]
    assert store.pending_maintenance("resolve") == ["e2"]


def test_a_touched_relation_is_rebuilt_and_an_older_rebuild_does_not_land(store):
    from scholargraph.models import Relation

    index_document(store, "d1")
    rid = store.all_edges()[0][0]
    version = store.versions("relations", [rid])[rid]
    relation = store.get_relations([rid])[rid]
    rebuilt = Relation(rid, relation.source_id, relation.target_id, "rebuilt", ["k"], ["T"], 4.0, True, 0.5)
    assert store.update_relation(rebuilt, version) and store.dirty_ids("relations") == []
    store.touch_relations([rid])  # an end entity was renamed: its vector text is stale
    assert store.dirty_ids("relations") == [rid]
    assert not store.update_relation(rebuilt, version)
    assert store.update_relation(rebuilt, store.versions("relations", [rid])[rid])


def test_entity_search_is_literal_text(store):
    from scholargraph.models import EntityRecord, Extraction

    names = ["100% recall", "snake_case", "back\\slash", "plain name"]
    index_document(store, "d1", Extraction(entities=[EntityRecord(n, "Concept", "", "d1-c0") for n in names]))
    for needle, want in [("%", ["100% recall"]), ("_", ["snake_case"]), ("\\", ["back\\slash"]),
                         ("0% r", ["100% recall"]), ("'; DROP TABLE entities; --", [])]:
        assert [e.name for e in store.list_entities(search=needle)] == want, needle
    assert len(store.all_entity_ids()) == 4
