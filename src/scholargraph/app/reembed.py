"""Recompute every vector of a workspace with the configured embedding model (after a model
change). Chunks and keywords are re-embedded from their text; entities and relations are
marked for rebuild, which embeds them again. Nothing is re-extracted."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..llm.embeddings import make_embedder

if TYPE_CHECKING:
    from .workspace import Workspace

BATCH = 512


async def reembed_vectors(ws: Workspace) -> dict[str, int]:
    """Every vector again with the configured model (the caller holds the indexing lock)."""
    store = ws.store
    embedder = make_embedder(ws.settings.embeddings, store)

    def reset() -> None:
        store.clear_vectors()
        store.set_meta("embedding_model", embedder.name)
        store.set_meta("embedding_dim", str(embedder.dim))
        store.mark_all_dirty()

    await store.awrite(reset)
    counts = {}
    for namespace, rows in (("chunk", list(store.iter_chunk_texts())), ("keyword", list(store.iter_keyword_texts()))):
        for i in range(0, len(rows), BATCH):
            part = rows[i : i + BATCH]
            vectors = await embedder.embed([text for _, text in part])
            ids = [id_ for id_, _ in part]
            await store.awrite(functools.partial(store.put_vectors, namespace, ids, vectors))
        counts[namespace] = len(rows)
    ws.use_embedder(embedder)
    entities, relations = await ws.refresher().refresh()
    counts.update({"entity": entities, "relation": relations})
    return counts
