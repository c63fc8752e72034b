"""KG-RAG's hierarchical knowledge-graph summarisation (seed 001 §III.D): one Markdown document
that summarises the graph around its most connected concept.

1. Graph processing: the **central node** is the entity with the most distinct neighbours (ties:
   id) that is a research theme; its **depth-3 subgraph** (undirected breadth-first) is taken,
   and **persons, organisations, locations** (and funding / acknowledgement-only names:
   :func:`.community_reports.off_theme`) are dropped. At most ``max_nodes`` nodes are kept, the
   closest to the centre first, then the most connected (only the first ``CANDIDATES x max_nodes``
   of them are read and checked).
2. Subtopics: the nodes other than the centre are split into subtopics by community detection on
   their induced subgraph -- Louvain as the seed did, or Leiden (``communities.algorithm``, or
   ``algorithm``) -- seeded, so the same graph gives the same subtopics. Nodes left alone form
   "Further concepts". Subtopics are ordered by size, then by their nodes' degree.
3. Information compilation: each node is summarised from its description and its relations in the
   graph (node summarisation), the summaries are grouped under their subtopic (aggregation) and
   compiled into one document with citations [n] to the papers and sections the nodes come from.

With an LLM, one call per subtopic (and one for the centre) names the subtopic and summarises its
nodes (``prompts/kg_summary.txt``, under a JSON schema). Without one the summary is **extractive**,
and says so at the top: subtopics are named after their most connected nodes and each node's
summary is its stored description. Next to it, the GraphRAG-style community reports
(:mod:`.community_reports`, the ``summary`` query mode) summarise every community instead.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import igraph as ig
from pydantic import BeforeValidator

from ..errors import ModelOutputError, NotFoundError
from ..llm.output import Invalid, Items, LenientModel, output_schema, validate
from ..llm.repair import parse_json
from ..models import Entity
from ..prompts import load_prompt
from ..store.base import PaperReads
from .communities import leiden, louvain
from .community_reports import off_theme

DEPTH = 3
MAX_NODES = 60
ALGORITHMS = ("louvain", "leiden")
EXTRACTIVE_NOTE = ("Extractive summary (no LLM configured): subtopics are named after their most connected "
                   "concepts and each concept is summarised by its stored description.")
FURTHER = "Further concepts"
RELATIONS_PER_NODE = 6
CANDIDATES = 3  # x max_nodes: subgraph nodes read and checked for persons / organisations / places


@dataclass
class NodeSummary:
    id: str
    name: str
    type: str
    degree: int
    text: str
    citations: list[int] = field(default_factory=list)


@dataclass
class Subtopic:
    title: str
    nodes: list[NodeSummary]


@dataclass
class KGSummary:
    """The compiled summary; ``markdown()`` is the document ``scholargraph summarize`` writes."""

    root: NodeSummary
    subtopics: list[Subtopic]
    depth: int
    algorithm: str
    method: str  # "llm" | "extractive"
    subgraph_nodes: int  # in the depth-limited subgraph, before filtering
    dropped: list[str]  # persons, organisations, locations... left out
    sources: list[dict[str, str]]  # citation n -> {"document", "title", "section"}
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {**asdict(self), "markdown": self.markdown()}

    def markdown(self) -> str:
        lines = [f"# {self.root.name}", ""]
        how = (f"Central concept: **{self.root.name}** ({self.root.degree} neighbours). Depth-{self.depth} "
               f"subgraph: {self.subgraph_nodes} entities, {len(self.dropped)} left out as persons, organisations "
               f"or places; {len(self.subtopics)} subtopics by {self.algorithm.capitalize()}.")
        lines += [f"_{how}_", ""]
        if self.method == "extractive":
            lines += [f"> {EXTRACTIVE_NOTE}", ""]
        lines += ["## Overview", "", _with_citations(self.root), ""]
        for n, topic in enumerate(self.subtopics, 1):
            lines += [f"## {n}. {topic.title}", ""]
            lines += [f"- **{node.name}**: {_with_citations(node)}" for node in topic.nodes]
            lines.append("")
        if self.sources:
            lines += ["## Sources", ""]
            lines += [f"[{n}] {s['title']}" + (f" — {s['section']}" if s["section"] else "") + f" ({s['document']})"
                      for n, s in enumerate(self.sources, 1)]
            lines.append("")
        return "\n".join(lines)


def _with_citations(node: NodeSummary) -> str:
    marks = "".join(f"[{c}]" for c in node.citations)
    return f"{node.text} {marks}".strip() if node.text else marks or "(no description)"


# -- 1. graph processing ---------------------------------------------------------------------------------


class _Graph:
    def __init__(self, edges: Sequence[tuple[str, str, str, float]]):
        self.neighbours: dict[str, dict[str, float]] = {}
        for _, s, t, w in edges:
            if s == t:
                continue
            for a, b in ((s, t), (t, s)):
                row = self.neighbours.setdefault(a, {})
                row[b] = row.get(b, 0.0) + max(float(w or 0.0), 1e-6)

    def degree(self, node: str) -> int:
        return len(self.neighbours.get(node, {}))

    def around(self, root: str, depth: int) -> dict[str, int]:
        """Node -> distance from ``root``, up to ``depth`` (breadth first, undirected)."""
        seen = {root: 0}
        queue = deque([root])
        while queue:
            node = queue.popleft()
            if seen[node] == depth:
                continue
            for nxt in sorted(self.neighbours.get(node, {})):
                if nxt not in seen:
                    seen[nxt] = seen[node] + 1
                    queue.append(nxt)
        return seen


def _central(store: PaperReads, graph: _Graph, root: str | None) -> str:
    if root is not None:
        found = store.find_entity(root)
        if not found:
            raise NotFoundError(f"no entity named {root!r} (see `scholargraph entities`)")
        if found[0] not in graph.neighbours:
            raise NotFoundError(f"entity {root!r} has no relations to summarise around")
        return found[0]
    ranked = sorted(graph.neighbours, key=lambda n: (-graph.degree(n), n))
    for start in range(0, len(ranked), 50):  # the most connected research theme
        page = ranked[start:start + 50]
        entities = store.get_entities(page)
        off = off_theme(store, [entities[n] for n in page if n in entities])
        for n in page:
            if n in entities and n not in off:
                return n
    raise NotFoundError("the graph has no research theme to summarise (only persons, organisations, places)")


# -- 2. subtopics --------------------------------------------------------------------------------------


def _subtopics(graph: _Graph, nodes: list[str], algorithm: str, seed: int,
               resolution: float) -> tuple[list[list[str]], list[str]]:
    """The communities of ``nodes`` (two or more members each, largest first) and the nodes left alone."""
    index = {n: i for i, n in enumerate(nodes)}
    pairs: dict[tuple[int, int], float] = {}
    for a in nodes:
        for b, w in graph.neighbours.get(a, {}).items():
            if b in index and index[a] < index[b]:
                pairs[(index[a], index[b])] = w
    keys = sorted(pairs)
    g = ig.Graph(n=len(nodes), edges=keys)
    g.es["weight"] = [pairs[k] for k in keys]
    rng = random.Random(seed)
    membership = louvain(g, resolution, rng) if algorithm == "louvain" else leiden(g, resolution, rng)
    groups: dict[int, list[str]] = {}
    for node, part in zip(nodes, membership, strict=True):
        groups.setdefault(part, []).append(node)
    found = [sorted(m, key=lambda n: (-graph.degree(n), n)) for m in groups.values() if len(m) > 1]
    alone = sorted((m[0] for m in groups.values() if len(m) == 1), key=lambda n: (-graph.degree(n), n))
    found.sort(key=lambda m: (-len(m), -sum(graph.degree(n) for n in m), m[0]))
    return found, alone


# -- 3. information compilation ------------------------------------------------------------------------


class _NodeText(LenientModel):
    id: int
    summary: Annotated[str, BeforeValidator(lambda v: str(v or "").strip() or _blank())]


def _blank() -> str:
    raise ValueError("blank summary")


class _TopicReply(LenientModel):
    title: Annotated[str, BeforeValidator(lambda v: str(v or "").strip() or _blank())]
    nodes: Items[_NodeText] = []


TOPIC_SCHEMA = output_schema(_TopicReply)


def _read_topic(text: str) -> _TopicReply:
    try:
        return validate(parse_json(text), _TopicReply)
    except Invalid:
        raise ModelOutputError("the subtopic summary has no title", text) from None


class _Compiler:
    def __init__(self, store: PaperReads, graph: _Graph, entities: dict[str, Entity], llm: Any | None,
                 off: set[str] | frozenset[str] = frozenset()):
        self.off = off  # persons, organisations, places: never shown, not even in relations
        self.store = store
        self.graph = graph
        self.entities = entities
        self.llm = llm
        self.sources: list[dict[str, str]] = []
        self._source_no: dict[tuple[str, str], int] = {}
        self.notes: list[str] = []

    def node(self, node_id: str, text: str | None = None) -> NodeSummary:
        e = self.entities[node_id]
        return NodeSummary(e.id, e.name, e.type, self.graph.degree(node_id), text or e.description.strip(),
                           self._citations(e))

    def _citations(self, e: Entity) -> list[int]:
        chunks = self.store.get_chunks(e.chunk_ids[:2])
        titles = {d: r.title for d, r in self.store.documents_by_id({c.document_id for c in chunks.values()}).items()}
        out = []
        for cid in e.chunk_ids[:2]:
            c = chunks.get(cid)
            if c is None:
                continue
            key = (c.document_id, (c.section or "").split(" / ")[0])
            if key not in self._source_no:
                self.sources.append({"document": c.document_id, "title": titles.get(c.document_id, c.document_id),
                                     "section": key[1]})
                self._source_no[key] = len(self.sources)
            if self._source_no[key] not in out:
                out.append(self._source_no[key])
        return out

    def relations(self, members: Sequence[str]) -> list[str]:
        lines = []
        for m in members:
            near = sorted(self.graph.neighbours.get(m, {}).items(), key=lambda kv: (-kv[1], kv[0]))
            for other, _ in near[:RELATIONS_PER_NODE]:
                if other in self.entities and other not in self.off:
                    lines.append(f"{self.entities[m].name} — {self.entities[other].name}")
        return list(dict.fromkeys(lines))

    async def topic(self, root: str, members: list[str], extractive_title: str, named: bool = True) -> Subtopic:
        """A subtopic's title (the model's when ``named``) and node summaries."""
        if self.llm is None:
            return Subtopic(extractive_title, [self.node(m) for m in members])
        numbered = "\n".join(f"[{i}] {self.entities[m].name} ({self.entities[m].type or 'entity'}): "
                             f"{self.entities[m].description.strip()[:400]}" for i, m in enumerate(members, 1))
        messages = load_prompt("kg_summary").messages(topic=self.entities[root].name, nodes=numbered,
                                                      relations="\n".join(self.relations(members)) or "(none)")
        result = await self.llm.chat(messages, purpose="kg_summary", schema=TOPIC_SCHEMA, schema_name="kg_summary",
                                     parse=_read_topic)
        if result.error is not None:
            self.notes.append(f"subtopic '{extractive_title}': the model's answer was unusable ({result.error}); "
                              "its nodes keep their stored descriptions")
            return Subtopic(extractive_title, [self.node(m) for m in members])
        reply: _TopicReply = result.parsed
        texts = {n.id: n.summary for n in reply.nodes}
        title = reply.title if named else extractive_title
        return Subtopic(title, [self.node(m, texts.get(i)) for i, m in enumerate(members, 1)])


def _extractive_title(names: list[str]) -> str:
    top = names[:3]
    return top[0] if len(top) == 1 else ", ".join(top[:-1]) + " and " + top[-1]


async def summarize_graph(store: PaperReads, llm: Any | None = None, *, algorithm: str = "louvain", depth: int = DEPTH,
                          max_nodes: int = MAX_NODES, root: str | None = None, seed: int = 42,
                          resolution: float = 1.0) -> KGSummary:
    """The §III.D summary of the workspace graph (``llm`` None: extractive)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown community algorithm {algorithm!r}; use louvain or leiden")
    graph = _Graph(store.all_edges())
    if not graph.neighbours:
        raise NotFoundError("the graph has no relations yet: index papers first")
    centre = _central(store, graph, root)
    distance = graph.around(centre, depth)
    # the closest, most connected candidates (a large graph's depth-3 subgraph can be most of it):
    # enough of them that dropping persons, organisations and places still leaves max_nodes
    ranked = sorted((n for n in distance if n != centre), key=lambda n: (distance[n], -graph.degree(n), n))
    entities = store.get_entities([centre, *ranked[: CANDIDATES * max_nodes]])
    off = off_theme(store, [e for n, e in entities.items() if n != centre])
    dropped = sorted(entities[n].name for n in off)
    kept = [n for n in ranked if n in entities and n not in off][: max(1, max_nodes - 1)]
    groups, alone = _subtopics(graph, kept, algorithm, seed, resolution)
    topics = groups + ([alone] if alone else [])
    titles = [_extractive_title([entities[n].name for n in t]) for t in groups] + ([FURTHER] if alone else [])
    compiler = _Compiler(store, graph, entities, llm, off)
    built = await asyncio.gather(compiler.topic(centre, [centre], entities[centre].name, named=False),
                                 *(compiler.topic(centre, t, title, named=t is not alone)
                                   for t, title in zip(topics, titles, strict=True)))
    overview, subtopics = built[0], list(built[1:])
    return KGSummary(overview.nodes[0], subtopics, depth, algorithm, "llm" if llm is not None else "extractive",
                     len(distance), dropped, compiler.sources, compiler.notes)
