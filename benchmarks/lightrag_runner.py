"""Index text files with LightRAG through an OpenAI-compatible server. Runs INSIDE the LightRAG venv.

    benchmarks/.lightrag-venv/bin/python benchmarks/lightrag_runner.py \\
        --base-url http://127.0.0.1:PORT/v1 --workdir /tmp/lr --chunk-size 1200 --chunk-overlap 100 \\
        paper1.txt paper2.txt ...

It imports ``lightrag`` (never ``scholargraph``). The LLM is LightRAG's own OpenAI binding
(``lightrag.llm.openai.openai_complete_if_cache``) pointed at ``--base-url`` with model
``scripted-model``; embeddings are requested from ``--base-url``/embeddings (the scripted server
answers deterministic unit vectors, dimension ``--embedding-dim``). Everything else is LightRAG's
default (fixed-token chunking with tiktoken's gpt-4o-mini encoding, gleaning 1 unless
``--gleaning`` says otherwise, JSON-free
delimiter extraction, summaries on merge). The working dir is wiped first, so LightRAG's LLM
cache starts empty and hides no calls. Run it with ``TIKTOKEN_CACHE_DIR`` pointing at the cache
that ``benchmarks/lightrag_env.py`` prepared (tiktoken cannot download here).

Prints one JSON object on stdout's last line: elapsed seconds, documents (processed/failed),
chunks, LLM calls and embedding calls seen by the client, graph size, and LightRAG's settings.

Answers (benchmarks/bench_llm_answers.py): ``--reuse`` keeps an indexed working dir (no files: no
insert), ``--questions FILE`` (a JSON list of strings) are asked in ``--mode`` with LightRAG's own
``aquery_llm`` (its keyword call, its context, its answer prompt); each answer, with the references
and chunks LightRAG gave the model, is appended as one JSON line to ``--answers-out``. Its context
budget is ``--max-total-tokens`` (default 30,000 does not fit an 8K local model; the entity and
relation budgets keep LightRAG's default proportions).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path

MODEL = "scripted-model"
API_KEY = "scripted-key"  # the scripted server accepts any key; the OpenAI client insists on one


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Index text files with LightRAG via a scripted server")
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--workdir", required=True, type=Path)
    ap.add_argument("--chunk-size", type=int, default=1200)
    ap.add_argument("--chunk-overlap", type=int, default=100)
    ap.add_argument("--gleaning", type=int, default=1, help="entity_extract_max_gleaning (LightRAG's default: 1)")
    ap.add_argument("--embedding-dim", type=int, default=384)
    ap.add_argument("--max-async", type=int, default=None, help="LLM concurrency (default: LightRAG's)")
    ap.add_argument("--model", default=MODEL, help="model name the server serves (default: the scripted server's)")
    ap.add_argument("--embedding-base-url", help="OpenAI-compatible embeddings server (default: --base-url)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per LLM call")
    ap.add_argument("--max-tokens", type=int, help="completion budget per LLM call (LightRAG sends none by default)")
    ap.add_argument("--dump-graph", type=Path, help="write the graph's nodes and edges (with file_path) here as JSON")
    ap.add_argument("--log-level", default="WARNING")
    ap.add_argument("--reuse", action="store_true", help="keep an existing working dir (its index and LLM cache)")
    ap.add_argument("--questions", type=Path, help="JSON list of questions to answer after indexing")
    ap.add_argument("--mode", default="mix", help="LightRAG query mode for --questions")
    ap.add_argument("--max-total-tokens", type=int, default=30000, help="LightRAG's query context budget")
    ap.add_argument("--answers-out", type=Path, help="one JSON line per answer (with --questions)")
    ap.add_argument("files", nargs="*", type=Path)
    return ap.parse_args(argv)


async def run(args: argparse.Namespace) -> dict:
    # Imported here so --help works anywhere; this script needs the LightRAG venv.
    import numpy as np
    from lightrag import LightRAG
    from lightrag.base import DocStatus
    from lightrag.llm.openai import openai_complete_if_cache
    from lightrag.utils import EmbeddingFunc
    from lightrag.utils import logger as lr_logger
    from openai import AsyncOpenAI

    lr_logger.setLevel(getattr(logging, args.log_level.upper(), logging.WARNING))

    counters = {"llm_calls": 0, "embedding_calls": 0, "embedding_inputs": 0}

    async def llm_model_func(prompt, system_prompt=None, history_messages=None, **kwargs):
        counters["llm_calls"] += 1
        kwargs.setdefault("timeout", args.timeout)
        if args.max_tokens:
            kwargs.setdefault("max_tokens", args.max_tokens)
        return await openai_complete_if_cache(
            args.model,
            prompt,
            system_prompt=system_prompt,
            history_messages=history_messages or [],
            base_url=args.base_url,
            api_key=API_KEY,
            **kwargs,
        )

    client = AsyncOpenAI(base_url=args.embedding_base_url or args.base_url, api_key=API_KEY, max_retries=0,
                         timeout=120)

    async def embed(texts: list[str], **_: object) -> np.ndarray:
        counters["embedding_calls"] += 1
        counters["embedding_inputs"] += len(texts)
        resp = await client.embeddings.create(model="scripted-embedding", input=list(texts), encoding_format="float")
        return np.array([d.embedding for d in resp.data], dtype=np.float32)

    if args.workdir.exists() and not args.reuse:
        shutil.rmtree(args.workdir)  # fresh storages: an empty LLM cache, nothing already indexed
    args.workdir.mkdir(parents=True, exist_ok=True)

    texts = [p.read_text(encoding="utf-8") for p in args.files]
    extra = {"llm_model_max_async": args.max_async} if args.max_async else {}
    rag = LightRAG(
        working_dir=str(args.workdir),
        llm_model_func=llm_model_func,
        llm_model_name=args.model,
        default_llm_timeout=int(args.timeout),
        default_embedding_timeout=max(60, int(args.timeout)),
        embedding_func=EmbeddingFunc(embedding_dim=args.embedding_dim, max_token_size=8192, func=embed),
        chunk_token_size=args.chunk_size,
        entity_extract_max_gleaning=args.gleaning,
        chunk_overlap_token_size=args.chunk_overlap,
        **extra,
    )
    started = time.perf_counter()
    await rag.initialize_storages()
    answers = 0
    try:
        if texts:
            await rag.ainsert(texts, file_paths=[p.name for p in args.files])
        elapsed = time.perf_counter() - started
        if args.questions is not None:
            answers = await answer_questions(rag, args, counters)
        counts = await rag.doc_status.get_status_counts()
        failed = await rag.doc_status.get_docs_by_statuses([DocStatus.FAILED]) if counts.get("failed") else {}
        chunk_total = 0
        processed = await rag.doc_status.get_docs_by_statuses([DocStatus.PROCESSED])
        for doc in processed.values():
            chunk_total += int(getattr(doc, "chunks_count", 0) or 0)
        graph = rag.chunk_entity_relation_graph
        all_nodes = await graph.get_all_nodes() if hasattr(graph, "get_all_nodes") else None
        all_edges = await graph.get_all_edges() if hasattr(graph, "get_all_edges") else None
        nodes = len(all_nodes) if all_nodes is not None else None
        edges = len(all_edges) if all_edges is not None else None
        if args.dump_graph is not None:
            args.dump_graph.write_text(json.dumps({"nodes": all_nodes or [], "edges": all_edges or []}, default=str),
                                       encoding="utf-8")
    finally:
        await rag.finalize_storages()
        await client.close()

    import importlib.metadata as md

    return {
        "system": "lightrag",
        "lightrag_version": md.version("lightrag-hku"),
        "elapsed_s": round(elapsed, 2),
        "documents": {"inserted": len(texts), "status_counts": counts,
                      "failed": {k: str(getattr(v, "error_msg", ""))[:300] for k, v in failed.items()}},
        "chunks": chunk_total,
        "graph": {"nodes": nodes, "edges": edges},
        "answers": answers,
        "client": counters,
        "settings": {
            "chunk_token_size": rag.chunk_token_size,
            "chunk_overlap_token_size": rag.chunk_overlap_token_size,
            "tiktoken_model_name": rag.tiktoken_model_name,
            "entity_extract_max_gleaning": rag.entity_extract_max_gleaning,
            "entity_extraction_use_json": rag.entity_extraction_use_json,
            "force_llm_summary_on_merge": rag.force_llm_summary_on_merge,
            "llm_model_max_async": rag.llm_model_max_async,
            "enable_llm_cache": rag.enable_llm_cache,
        },
        "tiktoken_cache_dir": os.environ.get("TIKTOKEN_CACHE_DIR"),
    }


def budgets(total: int) -> dict[str, int]:
    """LightRAG's entity / relation / total context budgets (6,000 / 8,000 / 30,000 tokens by
    default) scaled to ``total``."""
    return {"max_total_tokens": total, "max_entity_tokens": total * 6000 // 30000,
            "max_relation_tokens": total * 8000 // 30000}


async def answer_questions(rag, args: argparse.Namespace, counters: dict[str, int]) -> int:
    """Ask every question of ``--questions`` in ``--mode``; one JSON line per answer."""
    from lightrag import QueryParam

    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    for question in questions:
        calls_before = counters["llm_calls"]
        started = time.perf_counter()
        param = QueryParam(mode=args.mode, enable_rerank=False, include_references=True, **budgets(args.max_total_tokens))
        result = await rag.aquery_llm(question, param=param)
        seconds = time.perf_counter() - started
        data = result.get("data") or {}
        llm = result.get("llm_response") or {}
        row = {"question": question, "mode": args.mode, "status": result.get("status"),
               "message": result.get("message"), "answer": llm.get("content") or "",
               "llm_generated": bool(llm.get("llm_generated")), "seconds": round(seconds, 2),
               "llm_calls": counters["llm_calls"] - calls_before,
               "references": data.get("references") or [],
               "chunks": [{k: c.get(k) for k in ("reference_id", "file_path", "content")}
                          for c in data.get("chunks") or []],
               "entities": len(data.get("entities") or []), "relationships": len(data.get("relationships") or []),
               "keywords": (result.get("metadata") or {}).get("keywords")}
        with args.answers_out.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(questions)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if "scholargraph" in sys.modules:  # pragma: no cover - guard against running in the wrong venv
        raise SystemExit("run this in the LightRAG venv, not scholargraph's")
    result = asyncio.run(run(args))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
