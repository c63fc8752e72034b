"""The HTTP API against the real app and the real pipeline, with the scripted LLM server:
upload -> index job with progress events -> ask (streamed and whole) -> retrieve -> passages ->
sessions -> graph -> entity edits -> stats -> export -> upgrade -> delete."""

import json

import pytest
from server_helpers import client, sse_events, upload

PAPER_A = b"""# Retrieval-Augmented Generation for Science

## Abstract
Retrieval-Augmented Generation (RAG) grounds Large Language Models in retrieved evidence.

## Introduction
GraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves neighbours from the Knowledge Graph.

## Methods
HippoRAG runs Personalized PageRank over the Knowledge Graph. BERT encoders embed entity descriptions.
"""
PAPER_B = b"""# Knowledge Graphs in Biomedicine

## Introduction
Knowledge Graphs connect Genes, Diseases and Drugs. BioBERT encoders embed PubMed abstracts.
"""


@pytest.fixture(scope="module")
def server(servers, scripted_llm, tmp_path_factory):
    return servers(tmp_path_factory.mktemp("api") / "ws", scripted_llm.base_url)


@pytest.fixture(scope="module")
def indexed(server):
    with client(server) as http:
        response = upload(http, ("rag.md", PAPER_A, "text/markdown"), ("bio.md", PAPER_B, "text/markdown"), wait=0)
        assert response.status_code == 202
        job = response.json()["job"]
        with http.stream("GET", f"/api/events?job={job['id']}") as stream:
            events = sse_events(stream)
        docs = http.get("/api/documents").json()["documents"]
    return {"job": job, "events": events, "docs": {d["file_name"]: d for d in docs}}


def test_index_job_reports_progress_until_done(indexed):
    names = [name for name, _ in indexed["events"]]
    assert names[0] == "snapshot" and names[-1] == "done" and "progress" in names
    final = indexed["events"][-1][1]["job"]
    assert final["done"] == final["total"] == 2 and final["result"]["profile"] == "academic"
    assert final["result"]["usage"]["by_purpose"]["extract"]["calls"] >= 2
    assert {d["status"] for d in indexed["docs"].values()} == {"PROCESSED"}


def test_ask_whole_answer_has_the_cli_json_fields(server, indexed):
    from scholargraph.models import Answer

    with client(server) as http:
        response = http.post("/api/ask", json={"question": "What does GraphRAG build?", "stream": False})
    body = response.json()
    assert response.status_code == 200
    expected = set(Answer("q", "a", "hybrid", []).to_json())
    assert set(body) == expected
    assert body["extractive"] is False and body["cited"] and "[" in body["answer"]
    assert all(s["rank"] in body["cited"] for s in body["sources"])


def test_ask_streams_tokens_then_the_answer(server, indexed):
    with client(server) as http, http.stream("POST", "/api/ask", json={"question": "What does LightRAG retrieve?",
                                                                     "mode": "naive"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response)
    names = [n for n, _ in events]
    assert names[0] == "start" and names[-1] == "answer" and names.count("token") >= 2
    streamed = "".join(d["text"] for n, d in events if n == "token")
    final = events[-1][1]
    assert final["mode"] == "naive" and streamed.strip() == final["answer"].strip()


@pytest.mark.parametrize("mode", ["naive", "local", "subgraph", "global", "hybrid"])
def test_retrieve_in_every_mode(server, indexed, mode):
    with client(server) as http:
        body = http.post("/api/retrieve", json={"question": "How does HippoRAG use the Knowledge Graph?", "mode": mode,
                                                "top_k": 5}).json()
    assert body["mode"] == mode and body["results"]
    assert {"rank", "kind", "document_id", "title", "section", "text"} <= set(body["results"][0])


def test_answers_and_retrievals_say_what_their_mode_used(server, indexed):
    # the subgraph's matched nodes and paths, the global mode's edges, by name
    with client(server) as http:
        sub = http.post("/api/retrieve", json={"question": "How does HippoRAG use the Knowledge Graph?",
                                               "mode": "subgraph"}).json()["trace"]
        answer = http.post("/api/ask", json={"question": "How does HippoRAG use the Knowledge Graph?",
                                             "mode": "global", "stream": False}).json()
    assert sub["mode"] == "subgraph" and all(n["name"] for n in sub["matched_nodes"]) and "paths" in sub
    assert answer["trace"]["mode"] == "global"
    assert all(e["source"] and e["target"] for e in answer["trace"].get("edges", []))


def test_unknown_mode_is_a_clear_400(server, indexed):
    with client(server) as http:
        response = http.post("/api/ask", json={"question": "x?", "mode": "psychic", "stream": False})
        streamed = http.post("/api/ask", json={"question": "x?", "mode": "psychic"})
    assert response.status_code == 400 and "psychic" in response.json()["error"]
    assert sse_events(streamed)[-1] == ("error", {"error": response.json()["error"]})


def test_sessions_keep_the_conversation(server, indexed):
    with client(server) as http:
        for question in ("What does GraphRAG build?", "And what does LightRAG do?"):
            http.post("/api/ask", json={"question": question, "session": "lab-1", "stream": False})
        turns = http.get("/api/sessions/lab-1").json()["turns"]
        bad = http.post("/api/ask", json={"question": "q", "session": "../../etc"})
    assert [t["question"] for t in turns] == ["What does GraphRAG build?", "And what does LightRAG do?"]
    assert bad.status_code == 422
    assert bad.json()["fields"][0]["field"] == "session"


def test_citation_resolves_to_the_passage(server, indexed):
    with client(server) as http:
        answer = http.post("/api/ask", json={"question": "What does HippoRAG run?", "mode": "naive",
                                             "stream": False}).json()
        source = next(s for s in answer["sources"] if s["chunk_id"])
        passage = http.get(f"/api/passages/{source['chunk_id']}").json()
        missing = http.get("/api/passages/nope")
    assert passage["title"] == source["title"] and passage["section"] == source["section"]
    assert source["text"].strip()[:40] in passage["text"] and passage["pdf_url"] is None
    assert "source_path" not in passage and missing.status_code == 404


def test_graph_neighbourhood_subgraph_and_evidence(server, indexed):
    with client(server) as http:
        found = http.get("/api/entities", params={"search": "Knowledge Graph"}).json()["entities"]
        kg = next(e for e in found if e["name"].lower() == "knowledge graph")
        hood = http.get("/api/graph/neighbourhood", params={"entity": kg["id"]}).json()
        edge = hood["edges"][0]
        evidence = http.get(f"/api/graph/relations/{edge['id']}").json()
        others = [n["id"] for n in hood["nodes"] if n["id"] != kg["id"]][:2]
        sub = http.post("/api/graph/subgraph", json={"entities": others}).json()
        unknown = http.get("/api/graph/neighbourhood", params={"entity": "No Such Thing"})
        communities = http.get("/api/graph/communities")
    assert hood["center"] == kg["id"] and len(hood["nodes"]) >= 3
    assert evidence["evidence"] and evidence["evidence"][0]["sentences"]
    assert {n["id"] for n in sub["nodes"]} >= set(others) and sub["paths"]
    assert unknown.status_code == 404
    assert communities.status_code == 200 and {"levels", "communities"} <= set(communities.json())


def test_merge_and_split_entities(server, indexed):
    with client(server) as http:
        merged = http.post("/api/entities/merge", json={"keep": "LightRAG", "others": ["HippoRAG"]}).json()["job"]
        after = http.get("/api/entities", params={"search": "HippoRAG"}).json()["entities"]
        split = http.post("/api/entities/split", json={"entity": merged["result"]["kept"]}).json()["job"]
        bad = http.post("/api/entities/merge", json={"keep": "LightRAG", "others": ["Nothing Here"]}).json()["job"]
    assert merged["status"] == "done" and len(merged["result"]["merged"]) == 1
    assert [e["name"] for e in after] == ["LightRAG"]  # HippoRAG is now an alias of LightRAG
    assert split["status"] == "done" and len(split["result"]["entities"]) == 2
    assert bad["status"] == "failed" and "Nothing Here" in bad["error"]


def test_stats_cost_and_export(server, indexed):
    with client(server) as http:
        stats = http.get("/api/stats").json()
        graph = http.get("/api/export", params={"format": "json"})
        graphml = http.get("/api/export", params={"format": "graphml"})
        bad = http.get("/api/export", params={"format": "xls"})
    assert stats["documents"] == 2 and stats["entities"] > 0 and "workspace" not in stats
    assert {c["title"] for c in stats["cost_by_document"]} == {"Retrieval-Augmented Generation for Science",
                                                                "Knowledge Graphs in Biomedicine"}
    assert all(c["llm_calls"] + c["cached_calls"] >= 1 for c in stats["cost_by_document"])
    assert sum(stats["entity_types"].values()) == stats["entities"]
    assert len(json.loads(graph.text)["nodes"]) == stats["entities"]
    assert graphml.text.startswith("<graphml") or "<graphml" in graphml.text[:200]
    assert bad.status_code == 422


def test_openai_compatible_chat(server, indexed):
    with client(server) as http:
        models = [m["id"] for m in http.get("/v1/models").json()["data"]]
        whole = http.post("/v1/chat/completions", json={"model": "scholargraph-naive", "messages": [
            {"role": "system", "content": "be brief"}, {"role": "user", "content": "What does GraphRAG build?"}]}).json()
        with http.stream("POST", "/v1/chat/completions", json={"model": "scholargraph", "stream": True, "messages": [
                {"role": "user", "content": "What does GraphRAG build?"}, {"role": "assistant", "content": "A graph."},
                {"role": "user", "content": [{"type": "text", "text": "And LightRAG?"}]}]}) as response:
            chunks = [d for _, d in sse_events(response)]
        unknown = http.post("/v1/chat/completions", json={"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]})
    assert "scholargraph" in models and "scholargraph-hybrid" in models
    content = whole["choices"][0]["message"]["content"]
    assert whole["object"] == "chat.completion" and "Sources:\n[" in content and whole["sources"]
    assert chunks[-1] == "[DONE]"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1])
    assert "[" in text and "Sources:" in text and chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "not_found_error"


def test_upgrade_intro_to_full_and_delete(server, indexed):
    paper = b"# Intro Only Paper\n\n## Abstract\nSciBERT embeds papers.\n\n## Introduction\nSciBERT helps.\n\n" \
            b"## Results\nSPECTER beats SciBERT on citation prediction.\n"
    with client(server) as http:
        job = upload(http, ("intro.md", paper, "text/markdown"), scope="intro").json()["job"]
        doc_id = job["result"]["processed"][0]
        before = http.get(f"/api/documents/{doc_id}").json()
        upgraded = http.post("/api/documents/upgrade?wait=60", json={"ids": [doc_id]}).json()["job"]
        after = http.get(f"/api/documents/{doc_id}").json()
        deleted = http.delete(f"/api/documents/{doc_id}").json()["job"]
        gone = http.get(f"/api/documents/{doc_id}")
        again = http.delete(f"/api/documents/{doc_id}")
    assert before["scope"] == "intro" and after["scope"] == "full" and after["chunks"] >= before["chunks"]
    assert upgraded["status"] == "done"
    assert deleted["status"] == "done" and deleted["result"]["deleted"][0]["deleted"] == doc_id
    assert gone.status_code == 404 and again.status_code == 404


def test_web_app_and_openapi_are_served(server):
    with client(server) as http:
        page = http.get("/")
        spec = http.get("/openapi.json").json()
        asset = next(part.split('"')[0] for part in page.text.split('src="')[1:] if "assets/" in part)
        script = http.get("/" + asset.removeprefix("./"))
    assert page.status_code == 200 and "<title>scholargraph</title>" in page.text
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert {"/api/uploads", "/api/ask", "/api/graph/neighbourhood", "/v1/chat/completions"} <= set(spec["paths"])
