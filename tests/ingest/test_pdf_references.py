"""Reference lists of PDFs split into one entry per reference (on two-column PDFs
the lines of a list became "references": 165 line fragments on one paper; a year at the start of a
line was taken for a reference number)."""

from __future__ import annotations

from scholargraph.ingest import pdf_layout as L
from scholargraph.ingest.pdf import split_references


def _line(text: str, x0: float, y0: float, page: int = 1, width: float = 230) -> tuple[L.Line, str]:
    return L.Line([], text=text, size=8, x0=x0, y0=y0, x1=x0 + min(width, 4.6 * len(text)), y1=y0 + 8, page=page), text


def test_a_year_at_the_start_of_a_line_is_not_a_reference_number():
    texts = ["[7] Arman Cohan, Sergey Feldman, Iz Beltagy, Doug Downey, and",
             "Daniel S. Weld.", "2020. SPECTER: Document-level Representation Learning. In ACL.",
             "[8] Kyle Lo, Lucy Lu Wang, Mark Neumann, Rodney Kinney, and Daniel S.",
             "Weld. 2020. S2ORC: The Semantic Scholar Open Research Corpus. In ACL.",
             "[9] Alan Baddeley. 1992. Working memory. Science 255 (1992), 556-559."]
    refs = split_references([_line(t, 54, 100 + 10 * i) for i, t in enumerate(texts)])
    assert len(refs) == 3 and "SPECTER" in refs[0] and refs[1].startswith("[8]")


REFS = [  # (first line, further lines): flush left, no hanging indent, as in some two-column styles
    ("Iz Beltagy, Kyle Lo, and Arman Cohan. 2019. SciBERT: A pretrained language", ["model for scientific text. In EMNLP."]),
    ("Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova. 2019.",
     ["BERT: Pre-training of deep bidirectional transformers for language", "understanding. In NAACL."]),
    ("Waleed Ammar, Dirk Groeneveld, Chandra Bhagavatula, and Iz Beltagy.", ["2018. Construction of the literature graph. In NAACL."]),
    ("Kyle Lo, Lucy Lu Wang, Mark Neumann, Rodney Kinney, and Daniel Weld.",
     ["2020. S2ORC: The semantic scholar open research corpus. In", "Proceedings of ACL, pages 4969-4983."]),
    ("Nils Reimers and Iryna Gurevych. 2019. Sentence-BERT: Sentence", ["embeddings using siamese BERT-networks. In EMNLP."]),
    ("Tomas Mikolov, Ilya Sutskever, Kai Chen, Greg Corrado, and Jeff Dean.",
     ["2013. Distributed representations of words and phrases. In NIPS."]),
]


def test_flush_left_references_in_two_columns_are_not_split_into_lines():
    entries = []
    for column, refs in ((54, REFS[:3]), (310, REFS[3:])):
        y = 100.0
        for first, rest in refs:
            for text in (first, *rest):
                entries.append(_line(text, column, y, width=240 if text is not rest[-1] else 150))
                y += 10
    refs = split_references(entries)
    assert len(refs) == len(REFS), refs
    assert [r.split()[:3] for r in refs] == [first.split()[:3] for first, _ in REFS]
