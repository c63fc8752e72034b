"""Recompute every vector of a workspace with the configured embedding model (after a model
change). Chunks and keywords are re-embedded from their text; entities and relations are
marked for rebuild, which embeds them again. Nothing is re-extracted."""

from __future__ import annotations

from .llm.embeddings import make_embedder

BATCH = 512


async def reembed(kb) -> dict[str, int]:
    store = kb.store
    embedder = make_embedder(kb.settings.embeddings, store)
    counts = {}
    with store.transaction() as conn:
        conn.execute("DELETE FROM vectors")
        store._indexes.clear()
        store.set_meta("embedding_model", embedder.name)
        store.set_meta("embedding_dim", str(embedder.dim))
        conn.execute("UPDATE entities SET dirty = 1, updated_at = updated_at + 0.000001")
        conn.execute("UPDATE relations SET dirty = 1, updated_at = updated_at + 0.000001")
    for namespace, sql in (("chunk", "SELECT id, text FROM chunks"), ("keyword", "SELECT id, text FROM keywords")):
        rows = store.conn.execute(sql).fetchall()
        for i in range(0, len(rows), BATCH):
            part = rows[i : i + BATCH]
            vectors = await embedder.embed([r[1] for r in part])
            store.put_vectors(namespace, [r[0] for r in part], vectors)
        counts[namespace] = len(rows)
    kb._embedder = embedder
    entities, relations = await kb._refresher().refresh()
    counts.update({"entity": entities, "relation": relations})
    return counts
