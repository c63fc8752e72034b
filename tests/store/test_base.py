"""Pure helpers every backend shares (store/base.py)."""

from __future__ import annotations

from scholargraph.store.base import first_sources


def test_the_chunks_a_question_retrieved_come_first_then_the_rest_in_document_order():
    rows = [("e", "d3-c1", "d3", 40, True), ("e", "d2-c0", "d2", 30, True),  # preferred, any order
            ("e", "d1-c0", "d1", 5, False), ("e", "d1-c0", "d1", 6, False), ("e", "d2-c0", "d2", 30, False),
            ("e", "d4-c2", "d4", 50, False)]
    kept, again = first_sources(rows, per_item=3, read=10)
    assert kept == [("e", "d2-c0", "d2"), ("e", "d3-c1", "d3"), ("e", "d1-c0", "d1")] and again == []


def test_an_item_whose_first_records_repeat_one_chunk_is_read_again():
    """A hub stated many times in one chunk: its first ``read`` records may hold fewer distinct chunks
    than a question cites; reading a bounded number of records must not drop the others."""
    repeated = [("hub", "d1-c0", "d1", i, False) for i in range(8)]
    kept, again = first_sources(repeated + [("small", "d5-c0", "d5", 99, False)], per_item=3, read=8)
    assert again == ["hub"]  # 8 records read, one chunk: read it again with a larger bound
    assert kept == [("small", "d5-c0", "d5")]  # fewer records than the bound: all of them were read
