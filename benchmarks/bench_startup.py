"""Start-up cost of the CLI: CPU time (user + sys) of whole `scholargraph` processes.

    .venv/bin/python -m benchmarks.bench_startup [--workdir WS] [--repeats 3]

Each command runs ``--repeats`` times as a fresh process; its CPU time comes from
``resource.getrusage(RUSAGE_CHILDREN)`` (the median is reported; wall time is printed too but not
comparable on a shared machine). ``ask``/``retrieve`` run once with the default embedding runtime
(numpy for the question) and once with ``embeddings.runtime = "torch"`` (sentence-transformers,
the runtime before the numpy runtime). Without ``--workdir`` a small workspace is indexed first from two
papers of the bundled demo corpus (offline profile; not measured). Also reported: whether torch
was imported by each command (``-X importtime``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, write_result

QUESTION = "What are the risk factors for malaria?"
HEAVY = ("torch", "sentence_transformers", "transformers")


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv: list[str], env: dict[str, str]) -> dict:
    before, started = _cpu_children(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scholargraph.cli", *argv], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr[-2000:]}")
    return {"cpu_s": _cpu_children() - before, "wall_s": time.perf_counter() - started}


def heavy_imports(argv: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "scholargraph.cli", *argv],
                          capture_output=True, text=True, env=env)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return [m for m in HEAVY if m in imported]


def small_workspace(root: Path) -> Path:
    corpus = Path(__file__).resolve().parents[1] / "src" / "scholargraph" / "demo_corpus"
    papers = root / "papers"
    papers.mkdir()
    for name in ("pntd.0002065.nxml", "pone.0046493.nxml"):
        (papers / name).write_bytes((corpus / name).read_bytes())
    ws = root / "ws"
    subprocess.run([sys.executable, "-m", "scholargraph.cli", "index", str(papers), "-w", str(ws), "--profile",
                    "offline", "--quiet"], check=True, capture_output=True)
    return ws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="an indexed workspace (default: index two demo papers into a temp dir)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="result JSON (default benchmarks/results/startup.json)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(args.workdir) if args.workdir else small_workspace(Path(tmp))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARGRAPH_")}
        torch_env = {**env, "SCHOLARGRAPH_EMBEDDINGS__RUNTIME": "torch"}
        cases = {
            "--help": (["--help"], env),
            "status": (["status", "-w", str(ws)], env),
            "stats": (["stats", "-w", str(ws)], env),
            "retrieve": (["retrieve", QUESTION, "-w", str(ws)], env),
            "ask": (["ask", QUESTION, "--no-stream", "-w", str(ws)], env),
            "retrieve (runtime=torch)": (["retrieve", QUESTION, "-w", str(ws)], torch_env),
            "ask (runtime=torch)": (["ask", QUESTION, "--no-stream", "-w", str(ws)], torch_env),
        }
        commands = {}
        for name, (argv, case_env) in cases.items():
            runs = [run_once(argv, case_env) for _ in range(args.repeats)]
            commands[name] = {
                "cpu_s_median": round(statistics.median(r["cpu_s"] for r in runs), 2),
                "cpu_s": [round(r["cpu_s"], 2) for r in runs],
                "wall_s_median": round(statistics.median(r["wall_s"] for r in runs), 2),
                "imports": heavy_imports(argv, case_env),
            }
            print(f"{name}: {commands[name]}", file=sys.stderr)
        papers = subprocess.run([sys.executable, "-m", "scholargraph.cli", "stats", "-w", str(ws), "--json"],
                                capture_output=True, text=True, env=env).stdout
    write_result("startup", {"machine": machine(), "workspace": str(ws) if args.workdir else "two demo papers (offline)",
                             "workspace_stats": papers.strip()[:400], "question": QUESTION, "repeats": args.repeats,
                             "commands": commands}, args.out)


if __name__ == "__main__":
    main()
