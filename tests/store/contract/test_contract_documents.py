"""Documents and their status (DocumentStore): what `index`, `status`, resume and delete rely on."""

from __future__ import annotations

import threading

from contract_helpers import doc

from scholargraph.models import ChunkFailure, DocStatus, Section


def test_a_pending_document_keeps_its_parsed_form_and_metadata(store):
    d = doc("d1", authors=["A B", "C D"], year=2020, venue="ACL", doi="10.1/x", pmid="42",
            metadata={"weight": 2.5, "journal": "J"})
    d.sections = [Section("Intro", "text one", page_start=1, page_end=2, kind="introduction", page_marks=[(3, 2)])]
    store.add_pending(d, "intro", "offline")
    row = store.get_document("d1")
    assert (row.status, row.scope, row.profile, row.title, row.error) == (DocStatus.PENDING, "intro", "offline", "Title d1", None)
    assert (row.authors, row.year, row.venue, row.doi, row.pmid) == (["A B", "C D"], 2020, "ACL", "10.1/x", "42")
    assert row.metadata == {"weight": 2.5, "journal": "J"} and row.chunks == 0
    loaded = store.load_document("d1")
    assert [tuple(m) for m in loaded.sections[0].page_marks] == [(3, 2)]
    assert loaded.sections[0].kind == "introduction" and loaded.authors == ["A B", "C D"]
    parsed, scope = store.document_to_process("d1")
    assert parsed.id == "d1" and scope == "intro"
    assert store.get_document("missing") is None and store.load_document("missing") is None
    assert store.document_to_process("missing") is None


def test_status_changes_and_failures(store):
    store.add_pending(doc("d1"), "full", "x")
    store.set_status("d1", DocStatus.FAILED, "boom")
    row = store.get_document("d1")
    assert row.status == DocStatus.FAILED and row.error == "boom"
    store.set_status("d1", DocStatus.PROCESSED)
    assert store.get_document("d1").error is None
    store.add_failed_file("file:1", "/papers/broken.pdf", "encrypted PDF")
    failed = store.get_document("file:1")
    assert (failed.status, failed.error, failed.title, failed.source_path) == (
        DocStatus.FAILED, "encrypted PDF", "broken.pdf", "/papers/broken.pdf")
    assert store.status_counts() == {"PROCESSED": 1, "FAILED": 1}


def test_adding_a_document_again_makes_it_pending_again(store):
    store.add_pending(doc("d1"), "intro", "offline")
    store.set_status("d1", DocStatus.FAILED, "boom")
    store.add_pending(doc("d1", words=50), "full", "academic")
    row = store.get_document("d1")
    assert (row.status, row.error, row.scope, row.profile) == (DocStatus.PENDING, None, "full", "academic")
    assert store.count("documents") == 1


def test_listing_and_lookup(store):
    for i in range(3):
        store.add_pending(doc(f"d{i}"), "full", "x")
    store.set_status("d1", DocStatus.PROCESSED)
    assert [r.id for r in store.list_documents()] == ["d0", "d1", "d2"]  # in order of arrival
    assert [r.id for r in store.list_documents(DocStatus.PROCESSED)] == ["d1"]
    assert sorted(store.documents_by_id(["d0", "d2", "nope"])) == ["d0", "d2"]
    store.delete_document("d0")
    assert store.get_document("d0") is None and store.count("documents") == 2


def test_claims_hand_out_the_largest_pending_documents_once(store):
    for doc_id, words in (("small", 5), ("large", 500), ("medium", 50), ("done", 900)):
        store.add_pending(doc(doc_id, words), "full", "offline")
    store.set_status("done", DocStatus.PROCESSED)
    assert store.pending_ids() == ["large", "medium", "small"]
    assert store.pending_ids(only={"small", "large"}) == ["large", "small"]
    assert store.claim_pending(2) == ["large", "medium"]
    assert store.get_document("large").status == DocStatus.PROCESSING
    assert store.claim_pending(5) == ["small"]
    assert store.claim_pending(5) == [] and store.claim_pending(0) == []
    store.release(["medium", "small"])
    assert store.pending_ids() == ["medium", "small"]
    assert store.claim_pending(5, only=["small", "done", "unknown"]) == ["small"]


def test_documents_of_one_status_are_read_without_the_others(store):
    """What a worker asks after each batch (anything pending? what is being indexed?), answered with
    the same documents as grouping or listing them all."""
    for doc_id, words in (("small", 5), ("large", 500), ("medium", 50), ("done", 900)):
        store.add_pending(doc(doc_id, words), "full", "offline")
    store.set_status("done", DocStatus.PROCESSED)
    assert store.document_ids(DocStatus.PENDING) == store.pending_ids() == ["large", "medium", "small"]
    assert store.document_ids(DocStatus.PENDING, 1) == ["large"] and store.document_ids(DocStatus.FAILED) == []
    claimed = store.claim_pending(2)
    for status, n in store.status_counts().items():
        ids = store.document_ids(DocStatus(status))
        assert len(ids) == n and set(ids) == {r.id for r in store.list_documents(DocStatus(status))}
    assert store.document_ids(DocStatus.PROCESSING) == claimed and store.document_ids(DocStatus.PROCESSED, 1) == ["done"]


def test_release_only_touches_claimed_documents(store):
    store.add_pending(doc("d1"), "full", "x")
    store.set_status("d1", DocStatus.PROCESSED)
    store.release(["d1"])
    assert store.get_document("d1").status == DocStatus.PROCESSED


def test_concurrent_claims_never_hand_out_a_document_twice(store):
    n = 60
    for i in range(n):
        store.add_pending(doc(f"d{i:02d}", words=i + 1), "full", "x")
    got: list[list[str]] = []

    def worker() -> None:
        mine = []
        while ids := store.claim_pending(3):
            mine += ids
        got.append(mine)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = [i for mine in got for i in mine]
    assert sorted(claimed) == sorted(f"d{i:02d}" for i in range(n)) and len(claimed) == n


def test_two_stores_on_one_workspace_share_the_claims(open_workspace):
    first, second = open_workspace("shared"), open_workspace("shared")
    for i in range(4):
        first.add_pending(doc(f"d{i}", words=10 * (i + 1)), "full", "x")
    a = first.claim_pending(2)
    b = second.claim_pending(5)
    assert a == ["d3", "d2"] and b == ["d1", "d0"]
    assert second.get_document("d3").status == DocStatus.PROCESSING


def test_a_crashed_run_is_resumed(store):
    store.add_pending(doc("d1"), "full", "x")
    store.add_pending(doc("d2"), "full", "x")
    assert store.claim_pending(5) == ["d1", "d2"]
    assert sorted(store.reset_stale_processing()) == ["d1", "d2"]
    assert store.status_counts() == {"PENDING": 2}
    assert store.reset_stale_processing() == []


def test_chunk_failures_are_recorded_per_document(store):
    store.add_pending(doc("d1"), "full", "x")
    store.record_chunk_failures("d1", "academic", [ChunkFailure("d1-c0", "unusable JSON", "{oops"),
                                                  ChunkFailure("d1-c1", "empty answer")])
    failures = store.chunk_failures()
    assert [(f.chunk_id, f.reason, f.raw) for f in failures["d1"]] == [("d1-c0", "unusable JSON", "{oops"),
                                                                        ("d1-c1", "empty answer", "")]
    store.record_chunk_failures("d1", "academic", [])
    assert len(store.chunk_failures()["d1"]) == 2


def test_meta_and_sessions(store, open_workspace):
    assert store.get_meta("nothing") is None
    store.set_meta("embedding_model", "a")
    store.set_meta("embedding_model", "b")
    assert store.get_meta("embedding_model") == "b"
    assert store.session_history("s") == []
    for i in range(8):
        store.add_session_turn("s", f"q{i}", f"a{i}")
    store.add_session_turn("other", "q", "a")
    assert store.session_history("s") == [(f"q{i}", f"a{i}") for i in range(2, 8)]  # the last six, oldest first
    assert store.session_history("s", limit=2) == [("q6", "a6"), ("q7", "a7")]


def test_processing_documents_of_an_ended_run_are_interrupted(open_workspace):
    """`status` shows INTERRUPTED, not PROCESSING, for the documents of a run that is over; a document
    a live run is working on (in this or another process) is not interrupted."""
    store = open_workspace()
    store.add_pending(doc("d1"), "full", "x")
    store.add_pending(doc("d2"), "full", "x")
    assert store.interrupted_ids() == set()
    lock = store.indexing_lock()
    assert lock.acquire()
    assert store.claim_pending(1) == ["d1"]
    other = open_workspace()  # what another process sees
    assert store.interrupted_ids() == set() and other.interrupted_ids() == set()
    lock.release()  # the run is over, d1 was left PROCESSING
    assert store.interrupted_ids() == {"d1"}
    assert store.get_document("d1").status == DocStatus.PROCESSING  # nothing changed by looking
