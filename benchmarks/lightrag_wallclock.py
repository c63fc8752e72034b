"""Simulated wall clock of indexing, LightRAG vs scholargraph, for ``benchmarks.lightrag_compare``.

fastbmRAG's headline is time, not tokens. Both systems index the same papers against a scripted
server whose latency grows with the request's prompt tokens and the reply's completion tokens, at
the measured speed of a 7-8B model on one local GPU, one request at a time (a llama.cpp server
with one slot; the others queue, which the client sees as latency):

    latency = prompt tokens / prompt rate + completion tokens / generation rate

Rate sets (llama-bench figures, Llama 3.1 8B Q4_K_M):

* ``rtx3080``: 3,806.89 prompt tok/s, 111.95 generated tok/s on an NVIDIA RTX 3080 (llama.cpp
  build 93bc3839) — https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/12
* ``m4``: 224.81 prompt tok/s (pp512), 20.87 generated tok/s (tg128) on a Mac mini M4, 16 GB
  (llama.cpp, Metal) — https://github.com/brand-o/normiebench/issues/3

The sets named in ``--wallclock`` run for real (the server sleeps); every run also reports what
the other rate sets would give for the same calls (one request at a time, the LLM time is the
sum of the calls' latencies: prompt/rate + completion/rate, exact for this server model; the
measured wall adds what the client itself spends). Tokens are counted with o200k_base when
``toktok-rs`` is available (closer to a Llama tokenizer than WordPiece), else the embedding tokenizer.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.lightrag_papers import PaperSet
from benchmarks.lightrag_responder import combined_rules
from scholargraph.testing.llm_server import ScriptedLLMServer

Runners = tuple[Callable[..., Any], Callable[..., Any]]  # lightrag_compare's run_lightrag, run_ours


@dataclass(frozen=True)
class Rates:
    hardware: str
    prompt_per_s: float
    completion_per_s: float
    source: str

    def seconds(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens / self.prompt_per_s + completion_tokens / self.completion_per_s


RATES = {
    "rtx3080": Rates("llama.cpp, Llama 3.1 8B Q4_K_M, NVIDIA RTX 3080", 3806.89, 111.95,
                     "https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/12"),
    "m4": Rates("llama.cpp (Metal), Llama 3.1 8B Q4_K_M, Mac mini M4 16 GB", 224.81, 20.87,
                "https://github.com/brand-o/normiebench/issues/3"),
}


def _server(rates: Rates, count) -> ScriptedLLMServer:
    return ScriptedLLMServer(rules=combined_rules(), count_tokens=count, max_parallel=1,
                             latency_per_prompt_token=1.0 / rates.prompt_per_s,
                             latency_per_completion_token=1.0 / rates.completion_per_s)


def _row(server: ScriptedLLMServer, wall: float, papers: int) -> dict[str, Any]:
    stats = server.stats.to_json()
    prompt, completion = stats["prompt_tokens"], stats["completion_tokens"]
    return {"calls": stats["calls"], "prompt_tokens": prompt, "completion_tokens": completion,
            "wall_s": round(wall, 1), "wall_s_per_paper": round(wall / papers, 1),
            "llm_s_per_paper": {name: round(r.seconds(prompt, completion) / papers, 1) for name, r in RATES.items()}}


def _timed(pset: PaperSet, profile: str, gleaning: int, rates: Rates, count, tmp: Path,
           args: argparse.Namespace, runners: Runners) -> dict[str, Any]:
    run_lightrag, run_ours = runners
    tmp.mkdir(parents=True, exist_ok=True)
    papers = len(pset.texts)
    out: dict[str, Any] = {}
    with _server(rates, count) as server:
        started = time.perf_counter()
        run_lightrag(server, pset, args.venv, tmp, args, gleaning)
        out["lightrag"] = _row(server, time.perf_counter() - started, papers)
    with _server(rates, count) as server:
        started = time.perf_counter()
        run_ours(server, pset, profile, tmp, args, gleaning)
        out[f"scholargraph.{profile}"] = _row(server, time.perf_counter() - started, papers)
    ours, theirs = out[f"scholargraph.{profile}"], out["lightrag"]
    out["ratio_wall"] = round(ours["wall_s"] / theirs["wall_s"], 3) if theirs["wall_s"] else None
    return out


def wallclock(sets: list[PaperSet], args: argparse.Namespace, tmp: Path, count, counter: str,
              runners: Runners) -> dict[str, Any]:
    """Timed runs: academic on the first set at each gleaning; fastbio on the fastbm set."""
    names = [n.strip() for n in args.wallclock.split(",") if n.strip()]
    unknown = [n for n in names if n not in RATES]
    if unknown:
        raise SystemExit(f"unknown --wallclock rate set(s) {unknown}; choose from {', '.join(RATES)} or 'none'")
    result: dict[str, Any] = {"server": "one request at a time; latency = prompt/prompt rate + completion/generation rate",
                              "token_counter": counter,
                              "rates": {n: r.__dict__ for n, r in RATES.items()}, "runs": {}}
    work = tmp / "wallclock"
    work.mkdir(exist_ok=True)
    plan = [(s, "academic", g) for s in sets if "academic" in s.profiles and s.name != "fastbm" for g in args.gleaning]
    plan += [(s, "fastbio", 1) for s in sets if "fastbio" in s.profiles and 1 in args.gleaning]
    for name in names:
        for pset, profile, gleaning in plan:
            key = f"{name}:{pset.name}:{profile}@gleaning{gleaning}"
            result["runs"][key] = _timed(pset, profile, gleaning, RATES[name], count, work / key.replace(":", "-"), args,
                                            runners)
    return result
