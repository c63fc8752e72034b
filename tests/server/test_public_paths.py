"""What clients see of file paths: relative to the workspace, never the server's directories."""

from pathlib import Path

from scholargraph.server.public_paths import PathRedactor


def test_paths_are_shown_relative_to_the_workspace_and_others_by_name(tmp_path):
    workspace = tmp_path / "ws"
    redactor = PathRedactor((tmp_path / "elsewhere" / "uploads", "uploads/"), (workspace, ""))
    job = {"params": {"source_paths": [str(workspace / "uploads" / "b1" / "f.pdf")]},
           "result": {"files": [{"path": str(tmp_path / "elsewhere" / "uploads" / "b2" / "g.md")}],
                      "warnings": ["/home/alice/papers/x.pdf: 2 pages without text"]},
           "log": [f"failed {workspace}/uploads/b3/h.txt: empty file", "server http://127.0.0.1:8080/v1/ answered 500",
                   "2/3 chunks and/or sections"], "done": 3}
    shown = redactor.value(job)
    assert shown["params"]["source_paths"] == ["uploads/b1/f.pdf"]
    assert shown["result"]["files"] == [{"path": "uploads/b2/g.md"}]
    assert shown["result"]["warnings"] == ["x.pdf: 2 pages without text"]
    assert shown["log"] == ["failed uploads/b3/h.txt: empty file", "server http://127.0.0.1:8080/v1/ answered 500",
                            "2/3 chunks and/or sections"]
    assert shown["done"] == 3 and str(Path.home()) not in str(shown)
