"""Hostile uploads and pages: a file name of 5,000 characters, and a page of
deeply nested ``<div>``s."""

from __future__ import annotations

from pathlib import Path

from redteam_server import PAPER_A, PAPER_B, finished, http, serve

from scholargraph.ingest.registry import LoadOptions, load_file


def test_a_5000_character_file_name_does_not_reject_the_batch(server, tmp_path):
    """It failed the whole upload as "malformed multipart body" (a part header over ~4 KB). The
    file is accepted, its name shortened for display with its extension kept, and indexed with
    the rest of the batch. A header over 64 KB is refused with a reason."""
    started = serve(tmp_path / "ws", server)
    long_name = "n" * 4996 + ".md"
    try:
        with http(started) as client:
            response = client.post("/api/uploads", files=[("files", (long_name, PAPER_A, "text/markdown")),
                                                          ("files", ("short.md", PAPER_B, "text/markdown"))])
            assert response.status_code == 202, response.text
            body = response.json()
            body["job"] = finished(client, body["job"]["id"])
            names = [f["name"] for f in body["files"]]
            assert len(names) == 2 and names[1] == "short.md" and body["rejected"] == []
            assert len(names[0]) <= 200 and names[0].startswith("nnnn") and names[0].endswith("….md")
            assert body["job"]["status"] == "done" and len(body["job"]["result"]["processed"]) == 2
            shown = {d["file_name"] for d in client.get("/api/documents").json()["documents"]}
            absurd = client.post("/api/uploads", files=[("files", ("n" * 70_000 + ".md", PAPER_A, "text/markdown"))])
        assert shown == set(names)
        assert absurd.status_code == 413 and "longer than 64 KB (a file name that long?)" in absurd.json()["error"]
    finally:
        started.stop()


SENTENCE = "Graph retrieval links papers through the entities they share. "


def nested_divs(path: Path, depth: int, text_at_each_level: bool) -> Path:
    opening = f"<div>{SENTENCE}" if text_at_each_level else "<div>"
    middle = "" if text_at_each_level else SENTENCE * 2000
    page = (f"<html><head><title>Nested</title></head><body>{opening * depth}{middle}DEEPEST-SENTINEL "
            f"{'</div>' * depth}</body></html>")
    path.write_text(page, encoding="utf-8")
    return path


def test_four_megabytes_of_nested_divs_are_read(tmp_path):
    """4.5 MB of nested divs failed as "no readable text" (libxml2 stops 256 levels deep and drops
    what lies below; with text at every level all but the first 255 levels were lost silently).
    The page is read flat, all of its text, with a warning."""
    for text_at_each_level, depth, sentences in ((True, 63_000, 63_000), (False, 400_000, 2000)):
        page = nested_divs(tmp_path / f"nested-{text_at_each_level}.html", depth, text_at_each_level)
        assert 4_500_000 < page.stat().st_size < 5_000_000  # under ingest.max_document_mb
        [doc] = load_file(page, LoadOptions())
        text = "\n".join(s.text for s in doc.sections)
        assert "DEEPEST-SENTINEL" in text and text.count(SENTENCE.strip()) == sentences
        assert doc.title == "Nested" and any("read as flat text" in w for w in doc.warnings)
