"""KG-RAG's hierarchical summarisation (seed 001 §III.D): the most connected
research concept, its depth-3 subgraph without persons / organisations / places, subtopics by
Louvain or Leiden, node summaries (LLM, or extractive and marked so), one Markdown document with
citations to papers and sections; `scholargraph summarize` writes it."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from scholargraph import KnowledgeBase
from scholargraph.cli import main
from scholargraph.config import LLMSettings
from scholargraph.graph.kg_summary import EXTRACTIVE_NOTE, summarize_graph
from scholargraph.graph.refresh import GraphRefresher
from scholargraph.llm.client import LLMClient
from scholargraph.models import Chunk, DocStatus, Document, EntityRecord, RelationRecord, Section
from scholargraph.store import Store, open_store
from scholargraph.testing.llm_server import Rule

HUB = "Knowledge Graph"
RETRIEVAL = ["Dense Retrieval", "BM25", "Query Expansion", "Reranking"]
REASONING = ["Graph Neural Network", "Link Prediction", "Node Embedding", "Message Passing"]
PEOPLE = [("Nina Mishra", "Person"), ("European Research Council", "Organization"), ("Canberra", "Location")]
FAR = ["Chain Node A", "Chain Node B", "Chain Node C"]  # depth 2, 3, 4 from the hub via Link Prediction


def _edges() -> list[tuple[str, str]]:
    out = [(HUB, n) for n in RETRIEVAL + REASONING]
    for group in (RETRIEVAL, REASONING):
        out += [(a, b) for i, a in enumerate(group) for b in group[i + 1:]]
    # the people (and the funder, the place) have more neighbours than the hub: 12 against 11
    out += [(HUB, p) for p, _ in PEOPLE] + [(p, n) for p, _ in PEOPLE for n in [*RETRIEVAL, *REASONING, FAR[0]]]
    out += [(a, b) for i, (a, _) in enumerate(PEOPLE) for b, _ in PEOPLE[i + 1:]]
    out += [(REASONING[1], FAR[0]), (FAR[0], FAR[1]), (FAR[1], FAR[2])]
    return out


def build(workdir: Path) -> Store:
    store = open_store(workdir)
    names = [HUB, *RETRIEVAL, *REASONING, *FAR] + [p for p, _ in PEOPLE]
    types = dict(PEOPLE)
    docs = {"p1": ("Retrieval for graphs", RETRIEVAL), "p2": ("Reasoning over graphs", REASONING)}
    for doc_id, (title, group) in docs.items():
        text = " ".join(f"{n} is studied with the {HUB}." for n in group)
        store.add_pending(Document(doc_id, title, [Section("Methods", text)]), "full", "t")
        store.insert_chunks([Chunk(f"{doc_id}-c0", doc_id, 0, text, 60, section="Methods")])
        store.set_status(doc_id, DocStatus.PROCESSED)

    def where(name: str) -> tuple[str, str]:
        doc = "p1" if name in RETRIEVAL or name == HUB else "p2"
        return f"{doc}-c0", doc

    def work() -> None:
        store.write_entities([EntityRecord(n, types.get(n, "Concept"), f"{n} is a notion of graph research.",
                                           where(n)[0], id=n, key=n.casefold(), document_id=where(n)[1])
                              for n in names])
        store.write_relations([RelationRecord(a, b, f"{a} relates to {b}.", where(a)[0], ["related"], 1.0,
                                              id=f"r{i}", source_id=a, target_id=b, document_id=where(a)[1])
                               for i, (a, b) in enumerate(_edges())])

    store.write(work)

    class _Flat:  # descriptions only, no vectors needed
        name, dim = "none", 4

        async def embed(self, texts):
            import numpy as np

            return np.ones((len(texts), 4), dtype=np.float32) / 2

    asyncio.run(GraphRefresher(store, _Flat(), lambda t: len(t.split()), 600).refresh())
    return store


@pytest.mark.parametrize("algorithm", ["louvain", "leiden"])
def test_an_extractive_summary_follows_the_seeds_steps(tmp_path, algorithm):
    store = build(tmp_path / "ws")
    try:
        summary = asyncio.run(summarize_graph(store, None, algorithm=algorithm))
    finally:
        store.close()
    assert summary.root.name == HUB  # the people have more neighbours, but are no research theme
    assert sorted(summary.dropped) == sorted(p for p, _ in PEOPLE)
    topics = [{n.name for n in t.nodes} for t in summary.subtopics]
    assert set(RETRIEVAL) in topics and {*REASONING, FAR[0], FAR[1]} >= next(t for t in topics if REASONING[0] in t)
    shown = {n.name for t in summary.subtopics for n in t.nodes}
    assert FAR[1] in shown and FAR[2] not in shown  # depth 3 from the centre, not 4
    text = summary.markdown()
    assert text.startswith(f"# {HUB}") and EXTRACTIVE_NOTE in text and algorithm.capitalize() in text
    assert not any(p in text for p, _ in PEOPLE)
    assert "## Sources" in text and "Retrieval for graphs — Methods (p1)" in text
    assert re.search(r"\*\*BM25\*\*: BM25 is a notion of graph research\. \[\d\]", text)


def _topic_reply(request):
    content = request["messages"][1]["content"]
    ids = re.findall(r"^\[(\d+)\] ([^(]+) \(", content, re.M)
    return json.dumps({"title": f"Topic of {ids[0][1].strip()}",
                       "nodes": [{"id": int(i), "summary": f"LLM summary of {name.strip()}."} for i, name in ids]})


def test_with_an_llm_subtopics_are_named_and_nodes_summarised(tmp_path, llm_server):
    server = llm_server(rules=[Rule("kg_summary", r"You summarise part of a knowledge graph", _topic_reply)])
    store = build(tmp_path / "ws")

    async def go():
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", retries=0, timeout=10))
        try:
            return await summarize_graph(store, llm, algorithm="louvain")
        finally:
            await llm.aclose()

    try:
        summary = asyncio.run(go())
    finally:
        store.close()
    assert summary.method == "llm" and server.stats.calls == 1 + len(summary.subtopics)
    named = [t.title for t in summary.subtopics if t.title != "Further concepts"]
    assert named and all(t.startswith("Topic of ") for t in named)
    text = summary.markdown()
    assert EXTRACTIVE_NOTE not in text and "LLM summary of BM25." in text
    sent = json.dumps([r["messages"] for r in server.stats.requests])
    assert not any(p in sent for p, _ in PEOPLE)  # dropped from the nodes and from their relations


def test_the_summarize_command_writes_the_markdown(tmp_path):
    build(tmp_path / "ws").close()
    out = tmp_path / "summary.md"
    assert main(["summarize", "-w", str(tmp_path / "ws"), "--algorithm", "louvain", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# {HUB}") and "## 1. " in text and "## Sources" in text
    with KnowledgeBase(tmp_path / "ws", progress=False) as kb:
        shallow = kb.summarize(algorithm="leiden", depth=1).markdown()
    assert "Depth-1 subgraph" in shallow and "Leiden" in shallow and "Chain Node" not in shallow
    assert main(["summarize", "-w", str(tmp_path / "ws"), "--root", "no such thing"]) != 0
