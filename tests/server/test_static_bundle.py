"""The web app the package ships (server/static, built by `make web`) and the offline graph page's viewer
(analysis/assets/graph_view.js, built with it) are the ones web/ describes: the
build records a digest of its inputs and of each file it wrote (static/build.json, by
web/vite.config.js); a change to web/ without a rebuild, or a bundle edited by hand, fails here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "web"
STATIC = REPO / "src" / "scholargraph" / "server" / "static"
PACKAGE = REPO / "src" / "scholargraph"
RECORD = STATIC / "build.json"
REBUILD = "the committed bundle is stale: run `make web` (needs Node and npm) and commit src/scholargraph/server/static"


def _text(path: Path) -> bytes:
    """A file's bytes with CRLF read as LF (a checkout may convert line ends)."""
    return path.read_bytes().replace(b"\r\n", b"\n")


def _files(root: Path, names: list[str]) -> list[str]:
    found = []
    for name in names:
        path = root / name
        found += [p.relative_to(root).as_posix() for p in path.rglob("*") if p.is_file()] if path.is_dir() else [name]
    return sorted(found)


def source_digest(root: Path, paths: list[str]) -> str:
    """sha256 over each input's relative path and content, in path order (as web/vite.config.js does)."""
    digest = hashlib.sha256()
    for rel in paths:
        digest.update(rel.encode() + b"\0" + _text(root / rel) + b"\0")
    return digest.hexdigest()


def _record() -> dict:
    assert RECORD.is_file(), f"{RECORD.relative_to(REPO)} is missing: {REBUILD}"
    return json.loads(RECORD.read_text(encoding="utf-8"))


def test_the_bundle_was_built_from_the_web_sources_as_they_are() -> None:
    record = _record()
    inputs = _files(WEB, record["sources"]["inputs"])
    assert inputs == record["sources"]["files"], REBUILD
    assert source_digest(WEB, inputs) == record["sources"]["sha256"], REBUILD


def test_the_bundle_files_are_the_ones_the_build_wrote() -> None:
    record = _record()
    shipped = {rel: hashlib.sha256(_text(STATIC / rel)).hexdigest()
               for rel in _files(STATIC, ["."]) if rel != RECORD.name}
    assert shipped == record["bundle"], REBUILD


def test_the_web_inputs_cover_the_app_sources() -> None:
    inputs = _record()["sources"]["inputs"]
    assert {"src", "index.html", "package-lock.json", "vite.config.js"} <= set(inputs)


def test_the_offline_graph_page_is_drawn_by_the_overviews_viewer() -> None:
    """One graph viewer: `scholargraph plot`'s graph.html inlines analysis/assets/graph_view.js, which
    the same build makes from web/src/offline.js over the Overview's drawing (overview_graph.js)."""
    viewer = _record()["viewer"]
    assert {rel: hashlib.sha256(_text(PACKAGE / rel)).hexdigest() for rel in viewer} == viewer, REBUILD
    assert list(viewer) == ["analysis/assets/graph_view.js"]
    for page in ("overview.js", "offline.js"):
        assert 'from "./overview_graph.js"' in (WEB / "src" / page).read_text(encoding="utf-8"), page
