"""Full-text search (``Store.lexical_search``, what naive and every graph mode fuse with their dense
ranking): the index follows inserts, re-inserts and deletes, and scientific symbols match as
written."""

from __future__ import annotations

import pytest

from scholargraph.models import Chunk, Document, Section


def _doc(doc_id: str) -> Document:
    return Document(id=doc_id, title=f"Title {doc_id}", sections=[Section("body", "x")])


def _chunk(doc_id: str, ordinal: int, text: str, section: str | None = None) -> Chunk:
    return Chunk(f"{doc_id}-c{ordinal}", doc_id, ordinal, text, len(text.split()), section=section)


CORPUS = {
    "a": ["Serum IL-6 rose after surgery in all patients.",
          "Interleukin signalling in macrophages was measured by ELISA."],
    "b": ["Carriers of BRCA1 mutations had a higher risk of breast cancer.",
          "The classifier reached an F1 of 0.91 on the held-out split."],
    "c": ["The difference was significant (p<0.05) in the treated group.",
          "Cell counts were normalised to the control group."],
}


def _fill(store) -> None:
    for doc_id, texts in CORPUS.items():
        store.add_pending(_doc(doc_id), "full", "test")
        store.insert_chunks([_chunk(doc_id, i, t) for i, t in enumerate(texts)])


def _ids(hits) -> list[str]:
    return [i for i, _ in hits]


@pytest.mark.parametrize(("query", "best"), [
    ("What happens to IL-6 after surgery?", "a-c0"),
    ("il6 levels", "a-c0"),  # IL6 written without the hyphen still finds IL-6
    ("BRCA1 carriers", "b-c0"),
    ("Which model has the best F1?", "b-c1"),
    ("results with p<0.05", "c-c0"),
    ("mutation risk", "b-c0"),  # stemmed: mutations / mutation
])
def test_scientific_symbols_match_as_written(store, query, best):
    _fill(store)
    hits = store.lexical_search(query, 3)
    assert hits and hits[0][0] == best
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:], strict=False))  # best first


def test_section_headings_are_searchable(store):
    store.add_pending(_doc("d"), "full", "test")
    store.insert_chunks([_chunk("d", 0, "We used 12 mice.", section="Methods"), _chunk("d", 1, "Mice thrived.")])
    assert _ids(store.lexical_search("methods", 5)) == ["d-c0"]


def test_insert_reinsert_and_delete_keep_the_index_in_sync(store):
    _fill(store)
    assert _ids(store.lexical_search("BRCA1", 5)) == ["b-c0"]
    # the chunk is stored again with other text (re-indexing a changed paper): old terms go
    store.insert_chunks([_chunk("b", 0, "Tumour suppressor TP53 was sequenced.")])
    assert store.lexical_search("BRCA1", 5) == []
    assert _ids(store.lexical_search("TP53", 5)) == ["b-c0"]
    # a document's chunks deleted
    store.delete_chunks_of("b")
    assert store.lexical_search("TP53", 5) == [] and store.lexical_search("F1", 5) == []
    # a document deleted with its chunks (cascade)
    store.delete_document("a")
    assert store.lexical_search("IL-6 interleukin", 5) == []
    assert _ids(store.lexical_search("p<0.05", 5)) == ["c-c0"]


def test_unit_of_work_sees_its_own_chunks_and_a_rollback_leaves_nothing(store):
    store.add_pending(_doc("d"), "full", "test")

    def work():
        store.insert_chunks([_chunk("d", 0, "Glioblastoma cells were imaged.")])
        assert _ids(store.lexical_search("glioblastoma", 5)) == ["d-c0"]
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        store.write(work)
    assert store.lexical_search("glioblastoma", 5) == []


def test_filters_and_limits(store):
    _fill(store)
    everything = store.lexical_search("group patients cancer split interleukin", 10)
    assert len(everything) == 6
    assert len(store.lexical_search("group patients cancer split interleukin", 2)) == 2
    assert set(_ids(store.lexical_search("group", 10, documents=["c"]))) == {"c-c0", "c-c1"}
    assert _ids(store.lexical_search("group", 10, chunk_ids=["c-c1", "a-c0"])) == ["c-c1"]
    assert store.lexical_search("group", 10, documents=[]) == []
    assert store.lexical_search("group", 10, chunk_ids=[]) == []
    assert store.lexical_search("group", 0) == []


def test_queries_without_terms_or_with_search_syntax(store):
    _fill(store)
    assert store.lexical_search("", 5) == [] and store.lexical_search("what is the of?", 5) == []
    # FTS syntax in a question is just text
    assert _ids(store.lexical_search('"BRCA1" OR NEAR(x y) AND NOT *', 5))[:1] == ["b-c0"]


def test_the_papers_title_is_searchable(store):
    store.add_pending(Document(id="p", title="Deep kernel learning for cohort studies", sections=[Section("b", "x")]),
                      "full", "test")
    store.insert_chunks([_chunk("p", 0, "We fit the model to the data.")])
    _fill(store)
    assert _ids(store.lexical_search("kernel learning", 5)) == ["p-c0"]
