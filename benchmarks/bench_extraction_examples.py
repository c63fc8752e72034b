"""What domain examples in the extraction prompt cost (thesis 000 §5.2, ``extraction.examples``):
prompt tokens per SciERC dev abstract with examples none / cs / bio, in both reply formats, through
the scripted server (canned answers: completions and quality do not depend on the prompt here, so
only the prompt cost is measured; quality needs a real model, see ``benchmarks.bench_llm``).

    .venv/bin/python -m benchmarks.bench_extraction_examples [--papers 20]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from benchmarks.common import machine, require_dev, write_result
from benchmarks.eval_offline_ner import load_scierc
from scholargraph import KnowledgeBase
from scholargraph.ingest.tokenizer import load_tokenizer
from scholargraph.testing.llm_server import ScriptedLLMServer
from tests.support.canned import default_rules


def run(texts: list[dict], fmt: str, examples: str, count) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="sg-examples-"))
    with ScriptedLLMServer(rules=default_rules(), count_tokens=count) as server:
        embeddings = {"provider": "openai", "base_url": server.base_url, "model": "scripted-embed", "dimension": 384}
        try:
            with KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model"},
                               embeddings=embeddings, communities={"auto_update": False}, progress=False,
                               extraction={"profile": "academic", "gleaning": 0, "format": fmt,
                                           "examples": examples}) as kb:
                report = kb.insert([], texts=texts)
                assert report.ok, report.failed[:2]
                chunks = kb.stats().chunks
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        extract = server.stats.by_kind.get("extract", {})
    return {"format": fmt, "examples": examples, "papers": len(texts), "chunks": chunks,
            "extract_calls": extract.get("calls", 0), "extract_prompt_tokens": extract.get("prompt_tokens", 0),
            "prompt_tokens_per_chunk": round(extract.get("prompt_tokens", 0) / max(chunks, 1), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=20)
    args = parser.parse_args()
    dev = require_dev()
    docs = load_scierc(dev / "scierc" / "dev.json")[: args.papers]
    texts = [{"id": d.doc_id, "title": d.doc_id, "text": d.text} for d in docs]
    count = load_tokenizer().count
    runs = [run(texts, fmt, examples, count) for fmt in ("json", "records") for examples in ("none", "cs", "bio")]
    for r in runs:
        base = next(b for b in runs if b["format"] == r["format"] and b["examples"] == "none")
        r["extra_prompt_tokens_per_chunk"] = round(r["prompt_tokens_per_chunk"] - base["prompt_tokens_per_chunk"], 1)
        r["prompt_cost_vs_none"] = round(r["extract_prompt_tokens"] / max(base["extract_prompt_tokens"], 1), 3)
    write_result("extraction_examples", {"benchmark": "extraction_examples", "machine": machine(),
                                         "corpus": f"SciERC dev, first {len(texts)} abstracts",
                                         "token_counter": "MiniLM WordPiece (offline)", "runs": runs})


if __name__ == "__main__":
    main()
