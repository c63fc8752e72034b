"""Run every benchmark in turn (`make bench`); each writes benchmarks/results/<name>.json.

    .venv/bin/python -m benchmarks.run_all [--only vector_search,pdf,...]

Needs ../shared/data/dev beside the checkout. The LightRAG comparison installs lightrag-hku in
its own venv on first use (benchmarks/.lightrag-venv; package index needed once).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

SCRIPTS = {
    "vector_search": ["benchmarks.bench_vector_search"],
    "pdf": ["benchmarks.bench_pdf"],
    "offline_ner": ["benchmarks.eval_offline_ner"],
    "json_repair": ["benchmarks.eval_json_repair"],
    "entity_resolution": ["benchmarks.eval_resolution"],
    "extraction_cost": ["benchmarks.bench_extraction_cost"],
    "indexing": ["benchmarks.bench_indexing"],
    "query_latency": ["benchmarks.bench_query_latency"],
    "askg_qa": ["benchmarks.eval_askg_qa"],
    "retrieval": ["benchmarks.eval_retrieval", "--max-2wiki", "600"],
    "lightrag_compare": ["benchmarks.lightrag_compare"],
    "scripted_server": ["benchmarks.bench_scripted_server"],
    "server_load": ["benchmarks.bench_server_load"],
    "localkg": ["benchmarks.bench_localkg"],
    "export": ["benchmarks.bench_export"],
    "startup": ["benchmarks.bench_startup"],
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="comma-separated subset of: " + ", ".join(SCRIPTS))
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(SCRIPTS)
    failed = []
    for name in names:
        started = time.perf_counter()
        print(f"== {name}", flush=True)
        code = subprocess.call([sys.executable, "-m", *SCRIPTS[name]], stdout=subprocess.DEVNULL)
        print(f"   {'ok' if code == 0 else f'FAILED ({code})'} in {time.perf_counter() - started:.0f}s", flush=True)
        if code:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
