"""How many slow requests the scripted LLM server overlaps (the timing the tests no longer assert).

    .venv/bin/python -m benchmarks.bench_scripted_server [--requests 128] [--latency 0.5] [--repeats 3]

A burst of ``--requests`` chat requests, each held ``--latency`` seconds by the server, sent at
once from one asyncio client. Ideal wall time = one latency; one-at-a-time would be
requests x latency. Reports wall seconds, peak and mean requests in flight, per repeat and the
median. Writes benchmarks/results/scripted_server.json.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx

from benchmarks.common import machine, write_result
from scholargraph.testing.llm_server import ScriptedLLMServer


async def _burst(base_url: str, n: int) -> float:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    body = {"model": "scripted-model", "messages": [{"role": "user", "content": "x"}]}
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        started = time.perf_counter()
        responses = await asyncio.gather(*(client.post(f"{base_url}/chat/completions", json=body) for _ in range(n)))
        elapsed = time.perf_counter() - started
    if any(r.status_code != 200 for r in responses):
        raise SystemExit("the scripted server answered an error")
    return elapsed


def run_once(n: int, latency: float) -> dict:
    with ScriptedLLMServer("ok", latency=latency) as server:
        elapsed = asyncio.run(_burst(server.base_url, n))
        return {"wall_s": round(elapsed, 3), "peak_in_flight": server.stats.peak_concurrency,
                "mean_in_flight": round(server.stats.mean_concurrency(), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=128)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args(argv)
    runs = [run_once(args.requests, args.latency) for _ in range(args.repeats)]
    median = statistics.median(r["wall_s"] for r in runs)
    write_result("scripted_server", {
        "benchmark": "scripted_server", "machine": machine(), "requests": args.requests, "latency_s": args.latency,
        "ideal_wall_s": args.latency, "serial_wall_s": args.requests * args.latency, "runs": runs,
        "median_wall_s": median, "median_over_ideal": round(median / args.latency, 2)}, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
