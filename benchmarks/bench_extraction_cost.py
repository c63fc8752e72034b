"""LLM calls and tokens of indexing, per call purpose, per chunk and per paper, through the
scripted server (deterministic canned answers; prompt tokens are real, completions are the
canned answers' size).

    .venv/bin/python -m benchmarks.bench_extraction_cost

* academic profile on the 6 ASKG papers and the 3 PMC JATS papers, gleaning 0 and 1;
* academic profile on the 6 dev PDFs, gleaning 0 and 1 (every input in its native format);
* academic vs fastbio on the fastbmRAG demo CSVs (same papers);
* the fixed instruction tokens of each prompt (what every chunk pays before its text).
Tokens are counted by the server with the default offline tokenizer (MiniLM WordPiece), the
same counter for every configuration.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase
from scholargraph.ingest.tokenizer import load_tokenizer
from scholargraph.prompts import load_prompt
from scholargraph.testing.llm_server import ScriptedLLMServer
from tests.support.canned import default_rules


def run(paths: list[Path], profile: str, gleaning: int, count, reports: str = "extractive") -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="sg-cost-"))
    with ScriptedLLMServer(rules=default_rules(), count_tokens=count) as server:
        embeddings = {"provider": "openai", "base_url": server.base_url, "model": "scripted-embed", "dimension": 384}
        kb = KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model"}, embeddings=embeddings,
                           extraction={"profile": profile, "gleaning": gleaning},
                           communities={"reports": reports}, progress=False)
        try:
            report = kb.insert(paths)
            assert report.ok, report.failed[:2]
            chunks = kb.stats().chunks
            papers = len(report.added)
        finally:
            kb.close()
            shutil.rmtree(workdir, ignore_errors=True)
        stats = server.stats
        by_kind = {k: dict(v) for k, v in stats.by_kind.items()}
        total = stats.prompt_tokens + stats.completion_tokens
    return {"profile": profile, "gleaning": gleaning, "community_reports": reports, "papers": papers, "chunks": chunks, "calls": stats.calls,
            "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "calls_per_chunk": round(stats.calls / chunks, 2), "prompt_tokens_per_chunk": round(stats.prompt_tokens / chunks),
            "calls_per_paper": round(stats.calls / papers, 2), "prompt_tokens_per_paper": round(stats.prompt_tokens / papers),
            "completion_tokens_per_paper": round(stats.completion_tokens / papers),
            "total_tokens_per_paper": round(total / papers), "by_kind": by_kind,
            "unmatched_calls": by_kind.get("other", {}).get("calls", 0)}


def instruction_tokens(count) -> dict:
    out = {}
    for name in ("extract", "glean", "keywords", "answer", "summarise", "fastbio_draft", "fastbio_refine"):
        package = "scholargraph.profiles.fastbio" if name.startswith("fastbio") else None  # the plug-in's prompts
        try:
            prompt = load_prompt(name, package)
        except FileNotFoundError:
            continue
        fixed = prompt.system + "\n" + prompt.user
        for field in ("{text}", "{header}", "{context}", "{question}", "{found}", "{types}", "{history}", "{language}",
                      "{descriptions}", "{kind}", "{name}", "{clues}", "{abstract}", "{title}", "{passages}"):
            fixed = fixed.replace(field, "")
        out[name] = count(fixed)
    return out


def main() -> None:
    dev = require_dev()
    count = load_tokenizer().count
    askg = sorted((dev / "askg" / "papers").glob("*.json"))
    jats = sorted((dev / "pdfs" / "jats").glob("*.nxml"))
    pdfs = sorted((dev / "pdfs").glob("*.pdf"))
    fastbm = [dev / "fastbm" / "demo1.csv", dev / "fastbm" / "demo2.csv"]
    result = {"benchmark": "extraction_cost", "machine": machine(), "token_counter": "MiniLM WordPiece (offline)",
              "instruction_tokens": instruction_tokens(count), "runs": []}
    for gleaning in (0, 1):
        result["runs"].append({"corpus": "askg+jats", **run(askg + jats, "academic", gleaning, count)})
    for gleaning in (0, 1):
        result["runs"].append({"corpus": "pdfs", **run(pdfs, "academic", gleaning, count)})
    # community reports written by the LLM at the end of indexing (seed 001 §III.D): their own cost
    result["runs"].append({"corpus": "askg+jats", **run(askg + jats, "academic", 1, count, reports="llm")})
    for profile in ("academic", "fastbio"):
        result["runs"].append({"corpus": "fastbm demo1+demo2", **run(fastbm, profile, 1, count)})
    fb = {r["profile"]: r for r in result["runs"] if r["corpus"].startswith("fastbm")}
    result["fastbio_vs_academic_total_tokens"] = round(fb["fastbio"]["total_tokens_per_paper"] /
                                                       fb["academic"]["total_tokens_per_paper"], 3)
    write_result("extraction_cost", result)


if __name__ == "__main__":
    main()
