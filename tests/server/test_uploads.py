"""Uploads: generated names (no traversal), type checks by name, content and content type,
size/count/unpacked-size limits, zip bombs, then indexing to PROCESSED."""

import io
import zipfile
from pathlib import Path

import pytest
from server_helpers import client, upload

MD = b"# Graph retrieval\n\nGraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves neighbours."


@pytest.fixture(scope="module")
def setup(servers, tmp_path_factory):
    root = tmp_path_factory.mktemp("uploads")
    server = servers(root / "ws", server={"max_file_mb": 1, "max_unpacked_mb": 2, "max_files": 4},
                     extraction={"profile": "offline"})
    return server, root


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def zipped(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_traversal_names_are_never_used(setup):
    server, root = setup
    with client(server) as http:
        response = upload(http, ("../../x.md", MD, "text/markdown"), ("..\\..\\evil.md", MD.replace(b"Graph", b"Tree"), ""))
    assert response.status_code == 200, response.text
    body = response.json()
    assert [f["name"] for f in body["files"]] == ["x.md", "evil.md"]
    assert not (root / "x.md").exists() and not (root.parent / "x.md").exists()
    stored = [p for p in files_under(root / "ws" / "uploads") if p.endswith(".md")]
    assert len(stored) == 2 and all(Path(p).stem not in ("x", "evil") and len(Path(p).stem) == 32 for p in stored)
    assert body["job"]["status"] == "done" and len(body["job"]["result"]["processed"]) == 2
    with client(server) as http:
        docs = {d["file_name"]: d for d in http.get("/api/documents").json()["documents"]}
    assert docs["x.md"]["status"] == "PROCESSED" and "source_path" not in docs["x.md"]


@pytest.mark.parametrize(("name", "data", "content_type", "reason"), [
    ("paper.pdf", b"<html>not a pdf</html>", "application/pdf", "not a PDF"),
    ("paper.pdf", b"%PDF-1.7 ...", "image/png", "content type 'image/png'"),
    ("tool.exe", b"MZ\x90\x00", "application/octet-stream", "unsupported file type .exe"),
    ("noext", b"hello", "text/plain", "unsupported file type (no extension)"),
    ("data.json", b"hello", "application/json", "not JSON"),
    ("notes.txt", b"text\x00with\x00nul", "text/plain", "binary content"),
    ("archive.zip", b"this is no zip", "application/zip", "not a zip archive"),
])
def test_wrong_types_are_refused_415(setup, name, data, content_type, reason):
    server, _ = setup
    with client(server) as http:
        response = upload(http, (name, data, content_type))
    assert response.status_code == 415
    assert reason in response.json()["rejected"][0]["error"]


def test_one_bad_file_does_not_sink_the_batch(setup):
    server, _ = setup
    with client(server) as http:
        response = upload(http, ("good.md", MD + b" One more.", "text/markdown"), ("bad.pdf", b"nope", "application/pdf"))
    body = response.json()
    assert response.status_code == 200 and [f["name"] for f in body["files"]] == ["good.md"]
    assert body["rejected"] == [{"name": "bad.pdf", "error": "not a PDF (no %PDF- header)"}]


def test_size_and_count_limits_are_413(setup):
    server, _ = setup
    with client(server) as http:
        too_big = upload(http, ("big.txt", b"a" * (1024 * 1024 + 10), "text/plain"))
        too_many = upload(http, *[(f"n{i}.md", MD, "text/markdown") for i in range(6)])
        whole_body = http.post("/api/uploads", content=b"x" * (4 * 1024 * 1024),
                               headers={"Content-Type": "multipart/form-data; boundary=x"})
    assert too_big.status_code == 413 and "1 MB" in too_big.json()["rejected"][0]["error"]
    assert too_many.status_code == 413 and "more than 4 files" in too_many.json()["error"]
    assert whole_body.status_code == 413


def test_zip_bomb_is_stopped(setup):
    server, root = setup
    before = files_under(root / "ws" / "uploads")
    bomb = zipped({"zeros.txt": b"0" * (3 * 1024 * 1024)})  # 3 MB of zeros packs to a few KB
    assert len(bomb) < 20_000
    many = zipped({f"f{i}.txt": b"x" for i in range(10)})
    with client(server) as http:
        response = upload(http, ("bomb.zip", bomb, "application/zip"))
        crowded = upload(http, ("many.zip", many, "application/zip"))
    assert response.status_code == 413 and "unpacks to more than 2 MB" in response.json()["rejected"][0]["error"]
    assert crowded.status_code == 413 and "at most 4 per upload" in crowded.json()["rejected"][0]["error"]
    assert files_under(root / "ws" / "uploads") - before <= {"names.json"}  # nothing left behind


def test_zip_bomb_lying_about_its_size_is_stopped_while_inflating(setup, tmp_path):
    server, _ = setup
    data = bytearray(zipped({"a.txt": b"0" * (3 * 1024 * 1024)}))
    # forge the declared uncompressed size (central directory and local header) to 10 bytes
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        at = data.find(signature)
        data[at + offset: at + offset + 4] = (10).to_bytes(4, "little")
    with client(server) as http:
        response = upload(http, ("liar.zip", bytes(data), "application/zip"))
    assert response.status_code in (413, 415)
    assert response.json()["error"] == "no file was accepted"


def test_zip_members_are_checked_and_renamed(setup):
    server, root = setup
    archive = zipped({"../../escape.md": MD.replace(b"LightRAG", b"HippoRAG"), "inner.zip": zipped({"a.md": MD}),
                      "bin.exe": b"MZ", "dir/": b""})
    with client(server) as http:
        response = upload(http, ("papers.zip", archive, "application/zip"))
    body = response.json()
    assert response.status_code == 200 and [f["name"] for f in body["files"]] == ["escape.md"]
    reasons = {r["name"]: r["error"] for r in body["rejected"]}
    assert reasons["papers.zip/inner.zip"] == "nested archives are not unpacked"
    assert reasons["papers.zip/bin.exe"].startswith("unsupported file type .exe")
    assert not any("escape" in p for p in files_under(root))


def test_scope_is_validated_and_files_required(setup):
    server, _ = setup
    with client(server) as http:
        bad_scope = upload(http, ("a.md", MD, "text/markdown"), scope="everything")
        nothing = http.post("/api/uploads", data={"scope": "full"})
        not_multipart = http.post("/api/uploads", json={"files": []})
    assert bad_scope.status_code == 422 and nothing.status_code == 400
    assert not_multipart.status_code == 400


def test_deleting_a_paper_removes_its_uploaded_file(setup):
    server, root = setup
    with client(server) as http:
        job = upload(http, ("gone.md", b"# Short Lived\n\nEphemeralRAG indexes nothing at all.", "text/markdown")).json()["job"]
        doc_id = job["result"]["processed"][0]
        stored = [p for p in (root / "ws" / "uploads").rglob("*.md")]
        before = len(stored)
        deleted = http.delete(f"/api/documents/{doc_id}").json()["job"]
    assert deleted["status"] == "done"
    assert len(list((root / "ws" / "uploads").rglob("*.md"))) == before - 1


def test_documents_left_pending_are_resumed_at_start(tmp_path):
    from server_helpers import start_server

    from scholargraph import KnowledgeBase
    from scholargraph.ingest.registry import load_file
    from scholargraph.models import DocStatus

    paper = tmp_path / "left.md"
    paper.write_text("# Left Behind\n\nResumeRAG was interrupted by a crash before its commit.")
    with KnowledgeBase(tmp_path / "ws") as kb:
        doc = load_file(paper)[0]
        kb.store.add_pending(doc, "full", "offline")
        kb.store.set_status(doc.id, DocStatus.PROCESSING)  # as if the last run was killed mid-document
    server = start_server(tmp_path / "ws", extraction={"profile": "offline"})
    try:
        with client(server) as http:
            jobs = http.get("/api/jobs").json()["jobs"]
            assert [j["kind"] for j in jobs] == ["resume"]
            final = http.get(f"/api/jobs/{jobs[0]['id']}?wait=120").json()["job"]
            status = http.get(f"/api/documents/{doc.id}").json()["status"]
    finally:
        server.stop()
    assert final["status"] == "done" and final["result"]["resumed"] == [doc.id] and status == "PROCESSED"
