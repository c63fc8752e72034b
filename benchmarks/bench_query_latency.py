"""Retrieval latency per query mode on a synthetic workspace of 100k chunks.

    .venv/bin/python -m benchmarks.bench_query_latency [--chunks 100000] [--queries 40]
        [--modes naive,naive-dense,naive-lexical,local,subgraph,global,hybrid,ppr]

The workspace (5k documents, 100k chunks, 80k entities, 240k relations, 150k content keywords,
384-d vectors) is written into a fresh store through the storage protocol. Texts are bags of words from a
20k-word vocabulary and vectors are sums of fixed random word vectors, so a question built from
vocabulary words has real neighbours. The bag-of-words embedder stands in for the model so the
figure measures the engine (vector search, graph traversal, ranking, context); the cost of
embedding a question with the default local model is measured separately and reported beside
it. No LLM: keywords come from clues and the question's own terms. Every mode searches the
question's passages both ways (chunk vectors and the store's full-text index) and fuses them. The
first query of each mode (index and graph load; for ppr the entity + passage matrix) is reported
apart from the steady-state p50/p95.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import machine, write_result
from scholargraph.config import EmbeddingSettings, QuerySettings, Settings
from scholargraph.llm.embeddings import Embedder, LocalEmbedder
from scholargraph.models import (
    Chunk,
    DocStatus,
    Document,
    Entity,
    EntityRecord,
    KeywordRecord,
    Relation,
    RelationRecord,
)
from scholargraph.query.engine import QueryEngine
from scholargraph.store import Store, open_store

DIM = 384
VOCAB = 20_000


class BagOfWords(Embedder):
    name = "bench:bag-of-words"
    dim = DIM

    def __init__(self, words: np.ndarray):
        super().__init__(None)
        self.words = words

    async def _embed_uncached(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), np.float32)
        for i, text in enumerate(texts):
            for w in text.replace("?", " ").replace(",", " ").split():
                if w.startswith("w") and w[1:].isdigit() and int(w[1:]) < VOCAB:
                    out[i] += self.words[int(w[1:])]
        return out


class Chars:
    def count(self, text: str) -> int:
        return len(text) // 4


def _bow(words: np.ndarray, lists: list[np.ndarray]) -> np.ndarray:
    out = np.stack([words[ids].sum(0) for ids in lists]).astype(np.float32)
    return out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-9)


def build(path: Path, n_chunks: int, rng: np.random.Generator, words: np.ndarray) -> Store:
    n_docs, n_ent, n_rel, n_kw = n_chunks // 20, int(n_chunks * 0.8), int(n_chunks * 2.4), int(n_chunks * 1.5)
    vocab = [f"w{i}" for i in range(VOCAB)]
    store = open_store(path)
    store.set_meta("embedding_dim", str(DIM))
    store.set_meta("embedding_model", BagOfWords.name)
    chunk_w = [rng.integers(0, VOCAB, 25) for _ in range(n_chunks)]
    ent_w = [rng.integers(0, VOCAB, rng.integers(1, 3)) for _ in range(n_ent)]
    src = (n_ent * rng.random(n_rel) ** 2).astype(int)  # skewed degrees, like real graphs
    tgt = rng.integers(0, n_ent, n_rel)
    kw_w = [rng.integers(0, VOCAB, 2) for _ in range(n_kw)]
    ent_names = [" ".join(vocab[w] for w in ws) for ws in ent_w]

    def source(i: int) -> dict[str, str]:  # the chunk (and its document) a record came from
        return {"chunk_id": f"c{i % n_chunks}", "document_id": f"d{(i % n_chunks) % n_docs}"}

    def fill() -> None:  # through the storage protocol, so every backend can be measured the same way
        for i in range(n_docs):
            store.add_pending(Document(id=f"d{i}", title=f"Paper {i}", sections=[]), "full", "bench")
            store.set_status(f"d{i}", DocStatus.PROCESSED)
        store.insert_chunks([Chunk(f"c{i}", f"d{i % n_docs}", i // n_docs, " ".join(vocab[w] for w in ws) * 8, 200,
                                   page_start=1, page_end=1) for i, ws in enumerate(chunk_w)])
        store.write_entities([EntityRecord("n", "Concept", "", id=f"e{i}", key=ent_names[i], **source(i * 7 + k))
                              for i in range(n_ent) for k in range(2)])
        store.write_relations([RelationRecord(f"e{src[j]}", f"e{tgt[j]}", "", id=f"r{j}", source_id=f"e{src[j]}",
                                              target_id=f"e{tgt[j]}", **source(j)) for j in range(n_rel)])
        store.write_keywords([KeywordRecord(" ".join(vocab[w] for w in ws), id=f"k{i}", **source(i))
                              for i, ws in enumerate(kw_w)])
        versions = store.versions("entities", [f"e{i}" for i in range(n_ent)])
        for i in range(n_ent):
            store.update_entity(Entity(f"e{i}", ent_names[i], "Concept", "a described concept " * 10), versions[f"e{i}"])
        versions = store.versions("relations", [f"r{j}" for j in range(n_rel)])
        for j in range(n_rel):
            store.update_relation(Relation(f"r{j}", f"e{src[j]}", f"e{tgt[j]}", "how the two relate " * 6, [], [],
                                           1.0 + j % 3), versions[f"r{j}"])

    store.write(fill)
    store.put_vectors("chunk", [f"c{i}" for i in range(n_chunks)], _bow(words, chunk_w))
    store.put_vectors("entity", [f"e{i}" for i in range(n_ent)], _bow(words, ent_w))
    store.put_vectors("relation", [f"r{j}" for j in range(n_rel)],
                      _bow(words, [np.concatenate([ent_w[s], ent_w[t]]) for s, t in zip(src, tgt, strict=True)]))
    store.put_vectors("keyword", [f"k{i}" for i in range(n_kw)], _bow(words, kw_w))
    return store


# row -> (query mode, the query settings it runs with): every core mode with the default fused
# passages (dense + full-text, RRF), plus naive on each passage list alone to show fusion's cost
ROWS = {"naive": ("naive", {}), "naive-dense": ("naive", {"passages": "dense"}),
        "naive-lexical": ("naive", {"passages": "lexical"}), "local": ("local", {}), "subgraph": ("subgraph", {}),
        "global": ("global", {}), "hybrid": ("hybrid", {}), "ppr": ("ppr", {})}


async def measure(engine: QueryEngine, rng: np.random.Generator, queries: int, rows: list[str]) -> dict:
    out = {}
    defaults = engine.settings.query.model_dump()
    for row in rows:
        mode, overrides = ROWS[row]
        for key, value in {**defaults, **overrides}.items():
            setattr(engine.settings.query, key, value)
        first, lat = None, []
        for i in range(queries + 1):
            w = rng.integers(0, VOCAB, 4)
            t = time.perf_counter()
            await engine.retrieve(f"What links w{w[0]} w{w[1]} and w{w[2]} w{w[3]}?", mode)
            elapsed = time.perf_counter() - t
            first, lat = (elapsed, lat) if i == 0 else (first, lat + [elapsed])
        lat.sort()
        out[row] = {"first_ms": round(1000 * first, 1), "p50_ms": round(1000 * lat[len(lat) // 2], 1),
                     "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1), "max_ms": round(1000 * lat[-1], 1)}
    return out


async def question_embedding_ms() -> float:
    embedder = LocalEmbedder(EmbeddingSettings())
    await embedder._embed_uncached(["warm up"])
    times = []
    for i in range(20):
        t = time.perf_counter()
        await embedder._embed_uncached([f"Which methods improve retrieval for question {i}?"])
        times.append(time.perf_counter() - t)
    return round(1000 * sorted(times)[len(times) // 2], 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--modes", default=",".join(ROWS), help="rows to measure (default: all)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    words = rng.standard_normal((VOCAB, DIM)).astype(np.float32)
    words /= np.linalg.norm(words, axis=1, keepdims=True)
    tmp = Path(tempfile.mkdtemp(prefix="sg-latency-"))
    try:
        t = time.perf_counter()
        store = build(tmp / "ws", args.chunks, rng, words)
        build_s = time.perf_counter() - t
        engine = QueryEngine(store, Settings(workdir=tmp / "ws", query=QuerySettings(clue_threshold=0.5)),
                             BagOfWords(words), Chars(), None)
        modes = asyncio.run(measure(engine, rng, args.queries, args.modes.split(",")))
        counts = {t: store.count(t) for t in ("chunks", "entities", "relations", "keywords")}
        store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {"benchmark": "query_latency", "machine": machine(), "workspace": counts, "build_s": round(build_s, 1),
              "queries_per_mode": args.queries, "modes": modes,
              "question_embedding_ms_local_model_p50": asyncio.run(question_embedding_ms()),
              "target": "p95 < 300 ms (everything but LLM calls)"}
    write_result("query_latency", result, args.json_out)


if __name__ == "__main__":
    main()
