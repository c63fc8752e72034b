"""Communities, their reports and the citation network (CommunityStore, CitationStore): what
`communities`, the summary mode, `citations` and `stats --graph` rely on."""

from __future__ import annotations

from contract_helpers import index_document

from scholargraph.models import (
    Community,
    CommunityReport,
    DocStatus,
    Document,
    EntityRecord,
    Extraction,
    PaperReference,
    RelationRecord,
    Section,
    StubPaper,
)
from scholargraph.store.base import CommunityDrift, CommunityGrowth


def _hierarchy() -> list[Community]:
    return [Community("0-a", 0, "sa", ["e1", "e2", "e3"], None, 3, 3.0),
            Community("0-b", 0, "sb", ["e4", "e5"], None, 1, 1.0),
            Community("1-c", 1, "sc", ["e1", "e2"], "0-a", 1, 1.0),
            Community("1-d", 1, "sd", ["e3"], "0-a", 0, 0.0),
            Community("1-b", 1, "sb", ["e4", "e5"], "0-b", 1, 1.0)]


def test_communities_per_level(store):
    store.replace_communities(_hierarchy())
    assert [c.id for c in store.list_communities()] == ["0-a", "0-b", "1-b", "1-c", "1-d"]  # level, size, id
    assert [c.members for c in store.list_communities(0)] == [[], []]
    level1 = store.list_communities(1, members=True)
    assert [(c.id, c.parent_id, c.members) for c in level1] == [("1-b", "0-b", ["e4", "e5"]),
                                                                ("1-c", "0-a", ["e1", "e2"]), ("1-d", "0-a", ["e3"])]
    assert {c.id: c.members for c in store.list_communities(None, members=True)}["0-a"] == ["e1", "e2", "e3"]
    assert store.community_members(["0-b", "1-d"]) == {"0-b": ["e4", "e5"], "1-d": ["e3"]}
    assert store.communities_of(["e3", "e5", "nope"], 1) == {"e3": "1-d", "e5": "1-b"}
    store.replace_communities(_hierarchy()[:2])  # replaced as a whole
    assert [c.id for c in store.list_communities()] == ["0-a", "0-b"] and store.communities_of(["e3"], 1) == {}


def test_reports_by_signature_and_orphans(store):
    store.replace_communities(_hierarchy())
    report = CommunityReport("sa", "Topic A", "About A.", 7.5, "llm", ["e1"], ["r1"], ["d1"],
                             [{"chunk_id": "c1", "document_id": "d1", "text": "A sentence."}], ["a"], ["sc", "sd"])
    store.put_community_reports([report, CommunityReport("gone", "Old", "Old.", 1, "extractive")])
    assert store.community_reports(["sa"]) == {"sa": report}
    assert set(store.community_reports()) == {"sa", "gone"}
    store.put_community_reports([CommunityReport("sa", "Topic A2", "New.", 5, "extractive")])
    assert store.community_reports(["sa"])["sa"].title == "Topic A2"
    assert store.delete_orphan_reports() == 1 and set(store.community_reports()) == {"sa"}


def _graph(store, edges: list[tuple[str, str, str]]) -> None:
    index_document(store, "d1", Extraction())  # the document and chunk the records come from
    ends = sorted({x for _, s, t in edges for x in (s, t)})

    def work() -> None:
        store.write_entities([EntityRecord(e, "Concept", f"{e}.", "d1-c0", id=e, key=e, document_id="d1") for e in ends])
        store.write_relations([RelationRecord(s, t, f"{s} and {t}.", "d1-c0", ["link"], 1.0, id=rid, source_id=s,
                                              target_id=t, document_id="d1") for rid, s, t in edges])

    store.write(work)


def test_community_drift_is_counted_by_the_database(store):
    """What the community update decides from (graph changed enough to recompute?) without reading
    the graph: relations now, connected entities, and how they differ from the level-0 members."""
    assert store.community_drift() == CommunityDrift(relations=0, communities=0, connected=0, unassigned=0, gone=0)
    _graph(store, [("r1", "e1", "e2"), ("r2", "e2", "e3"), ("r3", "e6", "e7"), ("r4", "e7", "e6")])
    assert store.community_drift() == CommunityDrift(relations=4, communities=0, connected=5, unassigned=5, gone=0)
    store.replace_communities(_hierarchy())  # level 0: e1..e5; e4, e5 have no relation, e6, e7 no community
    assert store.community_drift() == CommunityDrift(relations=4, communities=5, connected=5, unassigned=2, gone=2)
    store.write(lambda: store.delete_relations(["r3", "r4"]))
    assert store.community_drift() == CommunityDrift(relations=2, communities=5, connected=3, unassigned=0, gone=2)


def test_community_growth_counts_the_relations_that_arrived_since_alone(store):
    """What the community update decides from after a batch: the relations that arrived after the
    arrival number it recorded, their ends in no level-0 community, and the running edit counts;
    nothing before that number is read."""
    assert store.community_growth(0) == CommunityGrowth(relations=0, unassigned=0, seq=0, communities=False)
    _graph(store, [("r1", "e1", "e2"), ("r2", "e2", "e3")])
    first = store.community_growth(0)
    assert (first.relations, first.unassigned, first.communities) == (2, 3, False) and first.seq > 0
    assert store.community_growth(first.seq) == CommunityGrowth(0, 0, first.seq, False)
    store.replace_communities(_hierarchy())  # level 0: e1..e5
    _graph(store, [("r3", "e3", "e6"), ("r4", "e6", "e7")])  # e6, e7 in no community
    later = store.community_growth(first.seq)
    assert (later.relations, later.unassigned, later.communities) == (2, 2, True) and later.seq > first.seq
    assert store.graph_edits() == (0, 0)
    store.write(lambda: store.count_graph_edits(2, 5))
    store.write(lambda: store.count_graph_edits(1, 0))
    assert store.graph_edits() == (3, 5)


def test_missing_reports_are_counted_without_reading_them(store):
    store.replace_communities(_hierarchy())  # signatures sa, sb (twice), sc, sd
    assert store.missing_reports() == store.missing_reports(extractive_too=True) == 4
    store.put_community_reports([CommunityReport("sa", "A", "About A.", 5, "llm"),
                                 CommunityReport("sb", "B", "About B.", 5, "extractive"),
                                 CommunityReport("gone", "Old", "Old.", 1, "llm")])
    assert store.missing_reports() == 2  # sc, sd
    assert store.missing_reports(extractive_too=True) == 3  # and sb, to be rewritten by an LLM


def _doc(store, doc_id):
    store.add_pending(Document(doc_id, doc_id, [Section("", "text")]), "full", "t")
    store.set_status(doc_id, DocStatus.PROCESSED)


def test_stub_papers_are_found_by_their_keys(store):
    """The citation update looks new papers up among the stubs sharing a key with them."""
    store.put_stub_papers([StubPaper("ref:1", "One", "10.1/a", None, None, "one"),
                           StubPaper("ref:2", "Two", None, "123", None, "two")],
                          {"ref:1": ["doi:10.1/a", "start:a b c"], "ref:2": ["pmid:123", "start:a b c"]})
    assert store.has_stub_papers()
    assert [s.id for s in store.stubs_by_keys(["doi:10.1/a"])] == ["ref:1"]
    assert [s.id for s in store.stubs_by_keys(["start:a b c", "pmid:123"])] == ["ref:1", "ref:2"]
    assert store.stubs_by_keys(["title:nothing"]) == [] and store.stubs_by_keys([]) == []
    store.put_stub_papers([StubPaper("ref:1", "One", "10.1/b", None, None, "one")], {"ref:1": ["doi:10.1/b"]})
    assert store.stubs_by_keys(["doi:10.1/a"]) == [] and [s.doi for s in store.stubs_by_keys(["doi:10.1/b"])] == ["10.1/b"]
    store.put_stub_papers([StubPaper("ref:2", "Two again", None, "123", None, "two")])  # its keys stay
    assert [s.title for s in store.stubs_by_keys(["pmid:123"])] == ["Two again"]
    store.delete_stub_papers(["ref:2"])  # its keys go with it
    assert store.stubs_by_keys(["pmid:123", "start:a b c"]) == []
    store.delete_stub_papers(["ref:1"])
    assert not store.has_stub_papers()


def test_references_stubs_and_retargeting(store):
    _doc(store, "A")
    _doc(store, "B")
    refs = [PaperReference("B", 0, "ref one", "A", "10.1/x", None, "One", 2020),
            PaperReference("B", 1, "ref two", "ref:1", None, "123", "Two", None)]
    store.put_references("B", refs)
    store.put_stub_papers([StubPaper("ref:1", "Two", None, "123", None, "ref two")])
    assert store.references() == refs and store.references(["A"]) == []
    store.put_references("B", refs[:1])  # replaced
    assert store.references(["B"]) == refs[:1]
    store.put_references("B", refs)
    assert store.retarget_references({"ref:1": "A"}) == 1 and [r.target_id for r in store.references()] == ["A", "A"]
    assert store.stub_papers(["ref:1"])[0].pmid == "123"
    store.delete_stub_papers(["ref:1"])
    assert store.stub_papers() == []
    store.delete_document("B")  # a document's reference list goes with it
    assert store.references() == []


def test_one_community_update_at_a_time_per_knowledge_base(open_workspace):
    """Two workers (here two stores on one workspace) finishing together: the second waits for the
    first's communities and reports instead of paying for the same reports."""
    first, second, elsewhere = open_workspace("ws"), open_workspace("ws"), open_workspace("other")
    held = first.communities_lock()
    assert held.acquire()
    waiting = second.communities_lock()
    assert not waiting.acquire()
    assert waiting.holder()  # named in the message while it waits
    other_kb = elsewhere.communities_lock()
    assert other_kb.acquire()  # another knowledge base is not held up
    other_kb.release()
    held.release()
    assert waiting.acquire()
    waiting.release()
