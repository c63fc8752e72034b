"""The JSON behind the web app's views, on a three-paper workspace written for the tests
(tests/support/web_corpus): the library page by page, a paper's page, the whole-graph overview
and the community reports written on demand. No answer shows a server path."""

from __future__ import annotations

import json
import shutil

import pytest
from server_helpers import client, index_workspace, start_server
from support.web_corpus import paper_paths

ADMIN_KEY = "views-admin-key-0123456789"
READ_KEY = "views-read-key-0123456789"
KEYS = {"api_keys": ADMIN_KEY, "read_only_keys": READ_KEY}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, scripted_llm):
    root = tmp_path_factory.mktemp("views")
    index_workspace(root / "ws", paper_paths(), scripted_llm.base_url, server=KEYS)
    shutil.copytree(root / "ws", root / "ws-without-llm")  # before any report is written
    server = start_server(root / "ws", scripted_llm.base_url, server=KEYS)
    yield server, root
    server.stop()


@pytest.fixture(scope="module")
def server(workspace):
    return workspace[0]


def _docs(server) -> dict[str, dict]:
    with client(server, READ_KEY) as http:
        rows = http.get("/api/library?limit=500").json()["documents"]
    return {r["title"]: r for r in rows}


def _no_server_paths(data: object, root) -> None:
    text = json.dumps(data)
    assert str(root) not in text and "/tmp/" not in text and "source_path" not in text


def test_library_pages_sorts_filters_and_searches(server, workspace) -> None:
    with client(server, READ_KEY) as http:
        first = http.get("/api/library?sort=year&order=desc&limit=2").json()
        second = http.get("/api/library?sort=year&order=desc&limit=2&offset=2").json()
        found = http.get("/api/library", params={"search": "brandt wake"}).json()
        by_year = http.get("/api/library?year=2021").json()
        bad = http.get("/api/library?sort=colour")
        unchanged = http.get("/api/documents").json()
    assert first["total"] == 3 and [d["year"] for d in first["documents"]] == [2023, 2021]
    assert [d["year"] for d in second["documents"]] == [2019] and second["offset"] == 2
    assert first["documents"][0]["authors"] == ["Tomas Lindqvist", "Priya Raman"]
    assert [d["title"] for d in found["documents"]] == ["Wake Losses in Tidal Stream Arrays Measured at Orkney"]
    assert by_year["total"] == 1 and first["years"] == {"2023": 1, "2021": 1, "2019": 1}
    assert first["statuses"] == {"PROCESSED": 3}
    assert bad.status_code == 422
    assert {d["file_name"] for d in first["documents"] + second["documents"]} == {"storage.json", "tidal.json", "wakes.json"}
    _no_server_paths(first, workspace[1])
    assert "authors" not in unchanged["documents"][0]  # the older endpoint keeps its shape


def test_paper_page_has_metadata_sections_entities_and_citations(server, workspace) -> None:
    docs = _docs(server)
    storage, tidal = docs["Battery Storage Scheduling for Tidal Energy Converters"], docs["Tidal Energy Forecasting with Graph Neural Networks"]
    with client(server, READ_KEY) as http:
        page = http.get(f"/api/documents/{storage['id']}/page").json()
        cited = http.get(f"/api/documents/{tidal['id']}/page").json()
        missing = http.get("/api/documents/nope/page")
    d = page["document"]
    assert (d["title"], d["year"], d["venue"], d["doi"]) == (
        "Battery Storage Scheduling for Tidal Energy Converters", 2023, "Energy Systems Conference", "10.5555/storage.2023.003")
    assert d["authors"] == ["Tomas Lindqvist", "Priya Raman"] and d["source_file"] == "storage.json"
    assert [s["title"] for s in page["sections"]][:4] == ["Abstract", "Introduction", "Scheduling Model", "Evaluation"]
    names = {e["name"] for e in page["entities"]}
    assert {"Battery Storage", "Tidegraph"} <= names and page["entities_total"] >= len(page["entities"])
    resolved = {r["cites"]["id"]: r["cites"] for r in page["references"] if not r["cites"]["stub"]}
    assert tidal["id"] in resolved and resolved[tidal["id"]]["title"] == tidal["title"]
    assert storage["id"] in {c["id"] for c in cited["cited_by"]}
    assert missing.status_code == 404
    _no_server_paths(page, workspace[1])


def test_overview_keeps_communities_and_says_when_it_samples(server) -> None:
    docs = _docs(server)
    with client(server, READ_KEY) as http:
        whole = http.get("/api/graph/overview").json()
        sampled = http.get("/api/graph/overview?limit=10").json()
        of_paper = http.get("/api/graph/overview", params={"document": docs["Wake Losses in Tidal Stream Arrays Measured at Orkney"]["id"]}).json()
        kind = next(iter(whole["types"]))
        of_type = http.get("/api/graph/overview", params={"type": kind}).json()
        unknown = http.get("/api/graph/overview?document=nope")
    assert not whole["sampled"] and len(whole["nodes"]) == whole["total_nodes"] > 10
    assert sampled["sampled"] and len(sampled["nodes"]) == 10 and sampled["total_nodes"] == whole["total_nodes"]
    degrees = sorted((n["degree"] for n in whole["nodes"]), reverse=True)
    assert sorted((n["degree"] for n in sampled["nodes"]), reverse=True) == degrees[:10]  # the most connected
    ids = {n["id"] for n in whole["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in whole["edges"])
    assert {n["community"] for n in whole["nodes"]} - {None} and whole["communities"]
    assert 0 < len(of_paper["nodes"]) < len(whole["nodes"])
    assert "Turbine Wakes" in {n["name"] for n in of_paper["nodes"]}
    assert "Battery Storage" not in {n["name"] for n in of_paper["nodes"]}
    assert {n["type"] for n in of_type["nodes"]} == {kind}
    assert unknown.status_code == 404


def test_community_reports_are_written_on_demand(server, workspace, tmp_path) -> None:
    with client(server, READ_KEY) as http:
        before = http.get("/api/graph/communities/reports").json()
        refused = http.post("/api/graph/communities/reports")
        listed = http.get("/api/graph/communities?reports=false").json()
    assert before["pending"] > 0 and before["llm"] and "LLM" in before["message"]
    assert refused.status_code == 403
    assert listed["communities"] and all(c["summary"] is None for c in listed["communities"])
    with client(server, ADMIN_KEY) as http:
        job = http.post("/api/graph/communities/reports?wait=120").json()["job"]
        after = http.get("/api/graph/communities/reports").json()
        written = http.get("/api/graph/communities?reports=false").json()
    assert job["status"] == "done" and job["result"]["reports_written"] > 0
    assert after["pending"] == 0 and "Every community has its report" in after["message"]
    assert any(c["summary"] for c in written["communities"])


def test_without_an_llm_the_reports_page_says_they_are_extractive(workspace) -> None:
    server = start_server(workspace[1] / "ws-without-llm", None, server=KEYS)
    try:
        with client(server, READ_KEY) as http:
            state = http.get("/api/graph/communities/reports").json()
    finally:
        server.stop()
    assert not state["llm"]
    assert state["pending"] > 0 and "No LLM is configured" in state["message"] and "extractive" in state["message"]
