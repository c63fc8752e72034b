"""Recompute every vector of a workspace with the configured embedding model (after a model
change). Chunks and keywords are re-embedded from their text; entities and relations are
marked for rebuild, which embeds them again. Nothing is re-extracted."""

from __future__ import annotations

from .llm.embeddings import make_embedder

BATCH = 512


async def reembed(kb, wait: bool = True) -> dict[str, int]:
    async with kb.exclusive_indexing(wait):  # no indexing run may add vectors of the old model meanwhile
        return await _reembed(kb)


async def _reembed(kb) -> dict[str, int]:
    store = kb.store
    embedder = make_embedder(kb.settings.embeddings, store)

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
            await store.awrite(lambda ids=ids, vectors=vectors, namespace=namespace: store.put_vectors(namespace, ids, vectors))
        counts[namespace] = len(rows)
    kb._embedder = embedder
    entities, relations = await kb._refresher().refresh()
    counts.update({"entity": entities, "relation": relations})
    return counts
