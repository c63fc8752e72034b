"""Justified text whose lines are set in pieces (word processors: ``Tw`` word spacing, then ``TD``
to the next piece of the same line) reads as the words it shows, not broken mid-word."""

from __future__ import annotations

import re
from pathlib import Path

import fpdf

from scholargraph.ingest.pdf import load_pdf

DEMO_PDF = Path(__file__).resolve().parents[2] / "src" / "scholargraph" / "demo_corpus" / "futureinternet-06-00061.pdf"
SIZE = 12.0
WORD_SPACING = 4.0  # points added to every space: a widely justified line


def _text(path: Path) -> str:
    doc = load_pdf(path, backend="pypdf")
    return " ".join([doc.title, doc.abstract, *(s.text for s in doc.sections)])


def _width(text: str) -> float:
    pdf = fpdf.FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("Helvetica", size=SIZE)
    return pdf.get_string_width(text)


def _pdf(lines: list[list[str]]) -> bytes:
    """One page of Helvetica; each line is pieces shown one after the other as a word processor
    does: each piece where the last one ended (its spaces widened by ``Tw``), placed with ``Td``."""
    ops = ["BT", "/F1 1 Tf", f"{WORD_SPACING / SIZE:.4f} Tw", f"{SIZE} 0 0 {SIZE} 72 700 Tm"]
    for n, pieces in enumerate(lines):
        if n:
            ops.append(f"0 {-1.4:.2f} TD")
        start = 0.0
        for i, piece in enumerate(pieces):
            if i:
                ops.append(f"{start:.4f} 0 Td")
            ops.append(f"({piece}) Tj")
            start = (_width(piece) + WORD_SPACING * piece.count(" ")) / SIZE
        if len(pieces) > 1:
            ops.append(f"{-sum((_width(p) + WORD_SPACING * p.count(' ')) / SIZE for p in pieces[:-1]):.4f} 0 Td")
    stream = "\n".join(ops).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_word_spacing_does_not_split_words(tmp_path: Path) -> None:
    path = tmp_path / "justified.pdf"
    path.write_bytes(_pdf([
        ["Smart cities change the lives of all ur", "ban citizens and their c", "itizens councils every day."],
        ["The constant sharing of ideas on the", " networks is a new kind of urban space."],
    ]))
    text = _text(path)
    assert "all urban citizens and their citizens councils every day." in text
    assert "on the networks is a new kind" in text  # a real space where a piece starts with one


def test_demo_paper_reads_whole_words() -> None:
    text = _text(DEMO_PDF)
    for broken in ("ur ban", "c itizens", "behavi or", "modeli ng", "necessa rily", "so lutions"):
        assert not re.search(rf"\b{broken}\b", text), broken
    assert "in urban environments" in text
    assert "the urban life of citizens" in text
