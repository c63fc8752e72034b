"""A workspace holding the planted graph of planted.py: one paper per group, one chunk per subgroup
whose sentences name its entities, so reports have passages to cite."""

from __future__ import annotations

import asyncio
from pathlib import Path

from planted import GROUPS, SIZE, SUBGROUPS, group_of, node, planted_edges

from scholargraph.models import Chunk, DocStatus, Document, EntityRecord, RelationRecord, Section
from scholargraph.store import Store, open_store


def chunk_id(g: int, s: int) -> str:
    return f"c{g}_{s}"


def _text(g: int, s: int) -> str:
    names = [node(g, s, i) for i in range(SIZE)]
    return " ".join(f"The study shows that {a} strongly interacts with {b} in every tested condition."
                    for a, b in zip(names, names[1:], strict=False))


def add_paper(store: Store, g: int, subgroups: range = range(SUBGROUPS)) -> None:
    doc_id = f"paper{g}"
    chunks = [Chunk(chunk_id(g, s), doc_id, s, _text(g, s), 100, section=f"Results {s}", page_start=s + 1,
                    page_end=s + 1) for s in subgroups]
    store.add_pending(Document(doc_id, f"Paper about group {g}", [Section("Results", "x")], year=2020 + g), "full", "t")
    store.insert_chunks(chunks)
    store.set_status(doc_id, DocStatus.PROCESSED)


def write_graph(store: Store, edges: list[tuple[str, str, str, float]]) -> None:
    ends = sorted({x for _, s, t, _ in edges for x in (s, t)})

    def chunk(e: str) -> tuple[str, str]:
        g, s = group_of(e) if e.startswith("e") else (0, 0)
        return chunk_id(g, s), f"paper{g}"

    def work() -> None:
        store.write_entities([EntityRecord(e, "Concept", f"{e} is an entity of the planted graph.", chunk(e)[0],
                                           id=e, key=e, document_id=chunk(e)[1]) for e in ends])
        store.write_relations([RelationRecord(s, t, f"{s} interacts with {t}.", chunk(s)[0], ["interaction"], w,
                                              id=rid, source_id=s, target_id=t, document_id=chunk(s)[1])
                               for rid, s, t, w in edges])

    store.write(work)


def planted_store(workdir: Path) -> Store:
    store = open_store(workdir)
    for g in range(GROUPS):
        add_paper(store, g)
    write_graph(store, planted_edges())
    from scholargraph.graph.refresh import GraphRefresher
    from scholargraph.llm.embeddings import Embedder

    class _NoEmbedder(Embedder):  # descriptions only; the planted graph needs no vectors
        name, dim = "none", 4

        def __init__(self) -> None:
            super().__init__(None)

        async def _embed_uncached(self, texts):
            import numpy as np

            return np.ones((len(texts), 4), dtype=np.float32) / 2

    asyncio.run(GraphRefresher(store, _NoEmbedder(), lambda t: len(t.split()), 600).refresh())
    return store
