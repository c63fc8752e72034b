"""Citation markers kept or dropped (query/citations.py), and the text around them left as written."""

from __future__ import annotations

from scholargraph.query.citations import verify_citations


def test_the_text_of_an_answer_keeps_its_own_spaces_before_dots():
    # ASKG paper 1 with the 1.5B (naive and hybrid): the answer came out as "OLE 2 file types and.docm
    # files ..." - every space before a dot or comma was taken for one a dropped marker had left
    reply = "OLE 2 file types and .docm files can only be processed on Windows operating systems."
    assert verify_citations(reply, {1, 2}).text == reply
    assert verify_citations("Significant at p < .05 [1], as in .NET [2].", {1, 2}).text == (
        "Significant at p < .05 [1], as in .NET [2].")


def test_a_dropped_marker_leaves_no_gap():
    check = verify_citations("A claim [9]. Another [9] [8] claim [1] .\n[7] A third, [2] [7].", {1, 2})
    assert check.text == "A claim. Another claim [1].\nA third, [2]."
    assert check.cited == [1, 2] and check.removed == [7, 8, 9]
