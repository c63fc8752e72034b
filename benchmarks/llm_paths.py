"""Every LLM path of the product, run once against the real local model, with each call recorded.

    .venv/bin/python -m benchmarks.llm_paths [--model qwen2.5-coder-0.5b] [--out DIR] [--only STEP,...]

Runs the CLI as a user would (index with the academic profile and gleaning, ask in every mode,
community reports, summary mode, fastbio with the bio mode, localkg on a short paper, question
synthesis, the judge, kg2text and kgqa) against llama.cpp. A recording proxy on loopback (the
scripted server of scholargraph.testing with a forwarding responder, which also serves llama.cpp's
``/props``) sits between the CLI and llama.cpp, so every request and the model's real reply (with
its finish_reason) land in ``<out>/calls.jsonl``; each step's exit code, output and duration land
in ``<out>/steps.json``. Real replies found here become the offline regression fixtures under
``tests/fixtures/real_model/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import DEV
from benchmarks.eval_offline_ner import load_biored, load_scierc
from benchmarks.local_model import DEFAULT_CACHE, MODELS, Recorder, local_server
from scholargraph.testing.llm_server import ScriptedLLMServer, llama_props

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "scholargraph.cli"]


def _corpus(folder: Path) -> dict[str, Path]:
    """Small real inputs: three SciERC abstracts, two BioRED abstracts, the shortest ASKG paper."""
    sci = folder / "sci"
    bio = folder / "bio"
    sci.mkdir(parents=True, exist_ok=True)
    bio.mkdir(parents=True, exist_ok=True)
    for d in load_scierc(DEV / "scierc" / "dev.json")[:3]:
        (sci / f"{d.doc_id}.txt").write_text(d.text, encoding="utf-8")
    for d in load_biored(DEV / "biored" / "Dev.PubTator")[:2]:
        (bio / f"{d.doc_id}.txt").write_text(d.text, encoding="utf-8")
    papers = sorted((DEV / "askg" / "papers").glob("*.json"), key=lambda p: p.stat().st_size)
    return {"sci": sci, "bio": bio, "askg": papers[0] if papers else sci}  # the shortest ASKG paper


def steps(corpus: dict[str, Path], ws: Path, llm: list[str]) -> list[tuple[str, list[str]]]:
    sci, bio, lkg = ws / "sci", ws / "bio", ws / "lkg"
    question = "Which methods are proposed, and what are they evaluated on?"
    out: list[tuple[str, list[str]]] = [
        ("index-academic", ["index", str(corpus["sci"]), "-w", str(sci), "--profile", "academic", *llm]),
    ]
    for mode in ("naive", "local", "subgraph", "global", "hybrid", "ppr", "summary"):
        out.append((f"ask-{mode}", ["ask", question, "-w", str(sci), "--mode", mode, "--no-stream", "--json", *llm]))
    out += [
        ("communities", ["communities", "-w", str(sci), "--json", *llm]),
        ("eval-questions", ["eval", "questions", "-w", str(sci), "--users", "1", "--tasks", "1", "--per-task", "2",
                            "--out", str(ws / "questions.json"), *llm]),
        ("eval-winrate", ["eval", "winrate", "-w", str(sci), "--a", "naive", "--b", "hybrid", "--questions",
                          str(ws / "questions.json"), "--trials", "1", *llm]),
        ("index-fastbio", ["index", str(corpus["bio"]), "-w", str(bio), "--profile", "fastbio", *llm]),
        ("ask-bio", ["ask", "Which genes are associated with which diseases?", "-w", str(bio), "--mode", "bio",
                     "--no-stream", "--json", *llm]),
        ("index-localkg", ["index", str(corpus["askg"]), "-w", str(lkg), "--profile", "localkg", *llm]),
        ("eval-kg2text", ["eval", "kg2text", "-w", str(lkg), *llm]),
        ("eval-kgqa", ["eval", "kgqa", "-w", str(lkg), "--count", "2", *llm]),
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-0.5b")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path("llm-paths"))
    parser.add_argument("--only", help="comma-separated step names (default: all)")
    parser.add_argument("--step-timeout", type=float, default=3600)
    parser.add_argument("--nice", type=int, default=0, help="llama.cpp's nice value (negative: ahead of other work)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if out.exists() and not args.only:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    corpus = _corpus(out / "corpus")
    results: list[dict[str, Any]] = []
    with local_server(args.model, args.cache, slots=1, log_path=out / "llama.log", nice=args.nice) as server:
        recorder = Recorder(server.base_url, out / "calls.jsonl")
        with ScriptedLLMServer(recorder, models=[args.model], props=llama_props(1, 8192)) as proxy:
            llm = ["--llm-url", proxy.base_url, "--llm-model", args.model]
            wanted = set(args.only.split(",")) if args.only else None
            for name, cli_args in steps(corpus, out / "ws", llm):
                if wanted and name not in wanted:
                    continue
                print(f"== {name}", file=sys.stderr, flush=True)
                started = time.perf_counter()
                env = {**os.environ, "SCHOLARGRAPH_LLM__TIMEOUT": "3600"}
                try:
                    done = subprocess.run([*CLI, *cli_args], capture_output=True, text=True, env=env,
                                          timeout=args.step_timeout, check=False)
                    code, stdout, stderr = done.returncode, done.stdout, done.stderr
                except subprocess.TimeoutExpired as exc:
                    code, stdout, stderr = "timeout", str(exc.stdout or ""), str(exc.stderr or "")
                record = {"step": name, "exit": code, "seconds": round(time.perf_counter() - started, 1),
                          "stdout": stdout[-6000:], "stderr": stderr[-4000:]}
                results.append(record)
                print(json.dumps({k: record[k] for k in ("step", "exit", "seconds")}), file=sys.stderr, flush=True)
                (out / "steps.json").write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
