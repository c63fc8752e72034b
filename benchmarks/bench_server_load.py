"""HTTP server under load: many concurrent askers while one job indexes.

    .venv/bin/python -m benchmarks.bench_server_load [--askers 50] [--questions 4] [--latency 0.5]

Three processes, as in production: the scripted OpenAI-compatible LLM server (``--latency`` seconds
per call), ``scholargraph serve`` on loopback, and this client. The workspace is seeded with the dev
corpus (3 PMC JATS + 6 ASKG papers, academic profile). Then, in the same run:

1. baseline: one asker, ``--baseline`` questions one after another, nothing indexing;
2. idle load: ``--askers`` clients each ask ``--questions`` questions back to back
   (``POST /api/ask``, ``"stream": false``), nothing indexing;
3. load while indexing: an index job over the 6 dev PDFs is started and the ``--askers`` clients
   ask back to back until it has finished (so the load covers parsing, extraction, embedding and
   the graph rebuild), at least ``--questions`` each.

Every question is distinct (no LLM cache hits). Reports p50/p95/max latency, answers per second
and the error count for each phase, and the p95 ratios. Writes benchmarks/results/server_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.bench_indexing import RemoteServer
from benchmarks.common import machine, require_dev, write_result

QUESTIONS = [
    "What does the curcuminoid submicron particle do in Alzheimer's disease mouse models?",
    "How does J2RM map JSON data to RDF?",
    "How are graphene nanofibers used in sensors?",
    "Which population structure do urban crows show?",
    "What knowledge graph construction methods are described?",
    "Which evaluation metrics are reported for entity extraction?",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(workdir: Path, llm_url: str, concurrency: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "scholargraph.cli", "serve", "--port", str(port), "-w", str(workdir),
           "--llm-url", llm_url, "--llm-model", "scripted-model", "--llm-concurrency", str(concurrency),
           "--log-level", "warning"]
    env = {**os.environ, "SCHOLARGRAPH_EXTRACTION__PROFILE": "academic"}
    proc = subprocess.Popen(cmd, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/info", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("scholargraph serve did not start")


def upload(url: str, paths: list[Path], wait: float) -> dict:
    files = [("files", (p.name, p.read_bytes(), "application/octet-stream")) for p in paths]
    response = httpx.post(f"{url}/api/uploads?wait={wait}", files=files, timeout=wait + 60)
    response.raise_for_status()
    return response.json()["job"]


async def ask(client: httpx.AsyncClient, question: str) -> tuple[float, bool]:
    started = time.perf_counter()
    try:
        response = await client.post("/api/ask", json={"question": question, "stream": False})
        ok = response.status_code == 200 and bool(response.json().get("answer"))
    except httpx.HTTPError:
        ok = False
    return time.perf_counter() - started, ok


async def asker(client: httpx.AsyncClient, n: int, questions: int, out: list, busy: asyncio.Event | None) -> None:
    j = 0
    while j < questions or (busy is not None and busy.is_set()):
        out.append(await ask(client, f"{QUESTIONS[(n + j) % len(QUESTIONS)]} (reader {n}, question {j})"))
        j += 1


async def watch_job(client: httpx.AsyncClient, job_id: str, busy: asyncio.Event, limit: float) -> None:
    """Clears ``busy`` when the job ends, or after ``limit`` seconds (a cap on the load phase)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and \
            (await client.get(f"/api/jobs/{job_id}")).json()["job"]["status"] in ("queued", "running"):
        await asyncio.sleep(0.5)
    busy.clear()


async def run_phase(url: str, askers: int, questions: int, job_id: str | None = None,
                    limit: float = 600.0) -> tuple[list, float]:
    """``askers`` clients asking back to back: ``questions`` each, or (``job_id``) until that job ends."""
    limits = httpx.Limits(max_connections=askers + 5, max_keepalive_connections=askers + 5)
    results: list[tuple[float, bool]] = []
    busy = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
        started = time.perf_counter()
        watcher = None
        if job_id:
            busy.set()
            watcher = asyncio.create_task(watch_job(client, job_id, busy, limit))
        await asyncio.gather(*(asker(client, i, questions, results, busy if job_id else None) for i in range(askers)))
        if watcher:
            await watcher
    return results, time.perf_counter() - started


def summary(results: list[tuple[float, bool]], wall: float) -> dict:
    times = sorted(t for t, _ in results)
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    return {"requests": len(results), "errors": sum(not ok for _, ok in results), "wall_s": round(wall, 2),
            "p50_s": round(statistics.median(times), 3), "p95_s": round(p95, 3), "max_s": round(times[-1], 3),
            "answers_per_s": round(len(results) / wall, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--askers", type=int, default=50)
    ap.add_argument("--questions", type=int, default=4, help="questions per asker under load")
    ap.add_argument("--baseline", type=int, default=10, help="questions of the one-asker baseline")
    ap.add_argument("--latency", type=float, default=0.5, help="seconds per scripted LLM call")
    ap.add_argument("--llm-concurrency", type=int, default=64)
    ap.add_argument("--max-load-seconds", type=float, default=600, help="cap on the load-while-indexing phase")
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args(argv)
    dev = require_dev()
    seed = sorted((dev / "pdfs" / "jats").glob("*.nxml")) + sorted((dev / "askg" / "papers").glob("*.json"))
    pdfs = sorted((dev / "pdfs").glob("*.pdf"))
    workdir = Path(tempfile.mkdtemp(prefix="sg-bench-server-"))
    with RemoteServer(latency=args.latency) as llm:
        proc, url = start_server(workdir / "ws", llm.base_url, args.llm_concurrency)
        try:
            t0 = time.perf_counter()
            seeded = upload(url, seed, wait=1800)
            seed_s = time.perf_counter() - t0
            if seeded["status"] != "done":
                raise SystemExit(f"seeding did not finish: {seeded}")
            base, base_wall = asyncio.run(run_phase(url, 1, args.baseline))
            idle, idle_wall = asyncio.run(run_phase(url, args.askers, args.questions))
            job = upload(url, pdfs, wait=0)
            load, load_wall = asyncio.run(run_phase(url, args.askers, args.questions, job["id"],
                                                    args.max_load_seconds))
            status_after = httpx.get(f"{url}/api/jobs/{job['id']}", timeout=30).json()["job"]["status"]
            final = httpx.get(f"{url}/api/jobs/{job['id']}?wait=1800", timeout=1900).json()["job"]
        finally:
            proc.terminate()
            proc.wait(30)
    baseline, idle_load, loaded = summary(base, base_wall), summary(idle, idle_wall), summary(load, load_wall)
    write_result("server_load", {
        "benchmark": "server_load", "machine": machine(), "llm_latency_s": args.latency,
        "llm_concurrency": args.llm_concurrency, "askers": args.askers, "questions_per_asker": args.questions,
        "seed_documents": len(seed), "seed_index_s": round(seed_s, 1), "baseline_one_asker": baseline,
        "load_no_indexing": idle_load, "load_while_indexing": loaded,
        "p95_ratio_idle_load_over_baseline": round(idle_load["p95_s"] / baseline["p95_s"], 2),
        "p95_ratio_indexing_load_over_idle_load": round(loaded["p95_s"] / idle_load["p95_s"], 2),
        "index_job_status_when_load_ended": status_after, "index_job": {
            "status": final["status"], "documents": len(final["result"]["processed"]) if final["result"] else 0,
            "seconds": final["result"]["seconds"] if final["result"] else None},
    }, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
