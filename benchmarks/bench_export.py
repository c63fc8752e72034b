"""Streamed export of a large workspace: peak memory of `scholargraph export` in every format on a
synthetic 100k-entity graph, against the same export of a graph 10x smaller, and against the size of
what was written. A streamed export's memory does not grow with the graph; one that built the whole
graph (or the whole output) in memory would grow by at least the size of its output.

    .venv/bin/python -m benchmarks.bench_export [--entities 100000] [--relations 150000]

The graph is bench_communities' synthetic one (planted groups, degree-skewed endpoints, seeded),
every relation with one provenance record. Each export runs in its own process; memory = growth
of its peak RSS (VmHWM) over the peak before the export began (store open, modules imported),
and the process's peak RSS itself.
Prints JSON and writes benchmarks/results/export.json (``--formats`` measures some formats again and
keeps the others' figures).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_communities import synthetic
from benchmarks.common import RESULTS, machine, write_result
from scholargraph.models import EntityRecord, RelationRecord
from scholargraph.store import open_store

FORMATS = ("turtle", "jsonld", "graphml", "neo4j-csv", "json")

CHILD = r"""
import json, re, sys, time
from pathlib import Path
from scholargraph.export import export_workspace
from scholargraph.store import open_store
import scholargraph.export.rdf, scholargraph.export.graphml, scholargraph.export.neo4j_csv, scholargraph.export.nodelink
workdir, fmt, out = sys.argv[1:4]
store = open_store(Path(workdir))
def hwm():  # peak RSS of this process in kB (ru_maxrss would carry the parent's from before exec)
    return int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1))
before = hwm()
t = time.perf_counter()
report = export_workspace(store, fmt, out)
seconds = time.perf_counter() - t
after = hwm()
store.close()
path = Path(out)
size = sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size
print(json.dumps({"seconds": round(seconds, 1), "rss_before_mb": round(before / 1024, 1),
                  "peak_rss_mb": round(after / 1024, 1), "peak_growth_mb": round((after - before) / 1024, 1),
                  "output_mb": round(size / 2**20, 1), "triples": report.get("triples"),
                  "nodes": report.get("nodes"), "edges": report.get("edges"), "rows": report.get("rows")}))
"""


def build(workdir: Path, entities: int, relations: int) -> None:
    edges = synthetic(entities, relations)
    ends = [f"e{i:06d}" for i in range(entities)]
    store = open_store(workdir)
    try:
        store.write(lambda: (
            store.write_entities([EntityRecord(f"Entity {e}", "Concept", f"A synthetic concept {e}.", "c", id=e, key=e,
                                               document_id="d") for e in ends]),
            store.write_relations([RelationRecord(s, t, f"{s} relates to {t}.", "c", keywords=["relates to"],
                                                  id=r, source_id=s, target_id=t, document_id="d", strength=w)
                                   for r, s, t, w in edges])))
    finally:
        store.close()


def export(workdir: Path, fmt: str, out: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(workdir), fmt, str(out)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"export --format {fmt} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--relations", type=int, default=150_000)
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS),
                        help="some formats only; their figures replace those in an earlier result of the same graph")
    args = parser.parse_args()
    result: dict = {"benchmark": "export", "machine": machine(), "formats": {}}
    earlier = RESULTS / "export.json"
    if earlier.exists():
        before = json.loads(earlier.read_text())
        if before.get("large_graph", {}).get("entities") == args.entities and \
                before.get("large_graph", {}).get("relations") == args.relations:
            result["formats"] = {f: v for f, v in before.get("formats", {}).items() if f not in args.formats}
    with tempfile.TemporaryDirectory(prefix="sg-export-") as tmp:
        sizes = {"small": (args.entities // 10, args.relations // 10), "large": (args.entities, args.relations)}
        for name, (n, m) in sizes.items():
            workdir = Path(tmp) / name
            t = time.perf_counter()
            build(workdir, n, m)
            result[f"{name}_graph"] = {"entities": n, "relations": m, "build_s": round(time.perf_counter() - t, 1)}
            for fmt in args.formats:
                out = Path(tmp) / f"{name}.{fmt}"
                result["formats"].setdefault(fmt, {})[name] = export(workdir, fmt, out)
                if out.is_dir():
                    for p in out.iterdir():
                        p.unlink()
                    out.rmdir()
                else:
                    out.unlink()
                write_result("export", result)  # after each export: a long run keeps what it measured


if __name__ == "__main__":
    main()
