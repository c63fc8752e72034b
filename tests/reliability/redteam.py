"""What the red-team suite shares: the `scholargraph` command run in this process or in a
subprocess against a scripted OpenAI-compatible server (chat and embeddings, so no embedding model
is loaded), small corpora, and a snapshot of a workspace to compare two of them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from support.canned import default_rules

from scholargraph.cli import main
from scholargraph.store import open_store
from scholargraph.testing.llm_server import ScriptedLLMServer, word_vector

MODEL = "scripted-model"

# variants the resolution pass merges across papers (acronyms, plurals, hyphens)
SENTENCES = [
    "Graph Neural Networks learn node embeddings from the Citation Graph.",
    "A GNN encoder is trained on the SciERC Dataset with Contrastive Learning.",
    "Retrieval-Augmented Generation grounds Large Language Models in retrieved passages.",
    "The RAG pipeline uses a Large Language Model and a Knowledge Graph.",
    "Knowledge Graphs link the IL1B Gene to Endometriosis.",
    "Contrastive learning improves Sentence Embeddings on the STS Benchmark.",
    "An LLM answers questions over the Knowledge Graph.",
]


def write_papers(folder: Path, n: int, sentences_per_paper: int = 12) -> Path:
    """``n`` small text papers, each a different rotation of ``SENTENCES``."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        body = " ".join(SENTENCES[(i + j) % len(SENTENCES)] for j in range(sentences_per_paper))
        (folder / f"p{i:02d}.txt").write_text(f"Paper number {i}\n\n{body}\n", encoding="utf-8")
    return folder


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out.strip().splitlines()[-1])


@dataclass
class Scholar:
    """Runs `scholargraph` on one workspace with the scripted server as LLM and embedding provider."""

    server: ScriptedLLMServer
    workdir: Path
    capsys: Any = None
    env: dict[str, str] = field(default_factory=dict)

    def args(self, argv: tuple[str, ...], llm: bool) -> list[str]:
        extra = ["--llm-url", self.server.base_url, "--llm-model", MODEL] if llm else []
        return [*argv, "-w", str(self.workdir), "--json", *extra]

    def __call__(self, *argv: str, llm: bool = True) -> Result:
        """In this process (fast): exit code and captured output."""
        self.capsys.readouterr()
        code = main(self.args(argv, llm))
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def subprocess(self, *argv: str, llm: bool = True, timeout: float = 300) -> Result:
        proc = subprocess.run([sys.executable, "-m", "scholargraph.cli", *self.args(argv, llm)], env=self.full_env(),
                              capture_output=True, text=True, timeout=timeout)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def full_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def at(self, workdir: Path) -> Scholar:
        return Scholar(self.server, workdir, self.capsys, self.env)


def scripted_env(server: ScriptedLLMServer) -> dict[str, str]:
    """Settings (as SCHOLARGRAPH_* variables) that point embeddings at the scripted server and make
    LLM retries quick."""
    return {
        "SCHOLARGRAPH_EMBEDDINGS__PROVIDER": "openai",
        "SCHOLARGRAPH_EMBEDDINGS__BASE_URL": server.base_url,
        "SCHOLARGRAPH_EMBEDDINGS__MODEL": "scripted-embedding",
        "SCHOLARGRAPH_EMBEDDINGS__DIMENSION": "64",
        "SCHOLARGRAPH_LLM__BACKOFF_BASE": "0.01",
        "SCHOLARGRAPH_LLM__BACKOFF_MAX": "0.05",
        "SCHOLARGRAPH_LLM__RETRIES": "1",
        "SCHOLARGRAPH_LLM__TIMEOUT": "10",
        "SCHOLARGRAPH_CHUNKING__SIZE": "64",
        "SCHOLARGRAPH_CHUNKING__OVERLAP": "8",
    }


def start_server(**kwargs: Any) -> ScriptedLLMServer:
    kwargs.setdefault("rules", default_rules())
    kwargs.setdefault("embedding_fn", word_vector)
    kwargs.setdefault("embedding_dim", 64)
    return ScriptedLLMServer(**kwargs).start()


# -- workspace snapshots --------------------------------------------------------------------------


def _digest(vectors: dict[str, np.ndarray]) -> dict[str, str]:
    return {i: hashlib.sha1(np.round(v, 4).astype(np.float32).tobytes()).hexdigest()[:12] for i, v in vectors.items()}


def snapshot(workdir: Path, dsn: str | None = None) -> dict[str, Any]:
    """Everything a user can see of a workspace, without timestamps: documents and status, chunks,
    merged entities and relations (with their sources), keywords, vectors per namespace, what is
    left to rebuild, unrepaired chunk failures, communities (with their members) and their reports.
    Read through the Store protocol (``dsn``: of the workspace's PostgreSQL knowledge base)."""
    store = open_store(workdir, "postgres", dsn=dsn) if dsn else open_store(workdir)
    try:
        docs = {d.id: (d.status.value, d.scope, d.chunks) for d in store.list_documents()}
        chunks = {doc: [c.id for c in store.chunks_of(doc)] for doc in sorted(docs)}
        entity_ids = sorted(store.all_entity_ids())
        entities = {e.id: (e.name, e.type, e.description, sorted(e.aliases), e.weight, sorted(e.chunk_ids))
                    for e in store.get_entities(entity_ids).values()}
        relation_ids = sorted(r for r, *_ in store.all_edges())
        relations = {r.id: (r.source_id, r.target_id, r.description, sorted(r.keywords), r.weight, sorted(r.chunk_ids))
                     for r in store.get_relations(relation_ids).values()}
        # a keyword's stored text is the surface of the paper committed first ("large language model(s)"),
        # which concurrent papers make vary between two clean runs: compared by id only
        keywords = sorted(i for i, _ in store.iter_keyword_texts())
        vectors = {ns: _digest(dict(store.iter_vectors(ns))) for ns in ("chunk", "entity", "relation")}
        vectors["keyword"] = sorted(i for i, _ in store.iter_vectors("keyword"))
        communities = {c.id: (c.level, c.parent_id, c.signature, sorted(c.members))
                       for c in store.list_communities(None, True)}
        reports = {s: (r.method, r.title, r.summary, r.entities, r.documents)
                   for s, r in store.community_reports().items()}
        return {
            "documents": docs, "chunks": chunks, "entities": entities, "relations": relations, "keywords": keywords,
            "vectors": vectors,
            "dirty": {kind: store.dirty_ids(kind) for kind in ("entities", "relations")},
            "chunk_failures": {d: sorted(f.chunk_id for f in fs) for d, fs in store.chunk_failures().items()},
            "communities": communities, "community_reports": reports,
        }
    finally:
        store.close()


def differences(got: dict[str, Any], want: dict[str, Any], ignore: tuple[str, ...] = ()) -> list[str]:
    """Readable differences between two snapshots (empty when equal), leaving out the ``ignore`` parts."""
    out = []
    for part in want:
        if part in ignore:
            continue
        a, b = got.get(part), want[part]
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            missing, extra = sorted(set(b) - set(a)), sorted(set(a) - set(b))
            changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
            out.append(f"{part}: {len(missing)} missing {missing[:3]}, {len(extra)} extra {extra[:3]}, "
                       f"{len(changed)} changed {[(k, a[k], b[k]) for k in changed[:2]]}")
        else:
            out.append(f"{part}: {a!r} != {b!r}")
    return out
