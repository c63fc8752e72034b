"""Building incrementally gives the graph building at once gives (issue 27, item 11): the same
papers indexed in one ``index`` run (twice: concurrent papers commit in any order), one run per
paper, and one run per paper in reverse order,
with the offline profile (no LLM), for each embedding runtime; compares the entity and relation
counts and the sets of entity names (with their aliases) and relation endpoints (by name).

    .venv/bin/python -m benchmarks.bench_resolution_order [--papers DIR] [--runtimes numpy,torch]

The issue's corpus: the six ASKG papers of the dev data (``askg/papers``, JSON); it measured
749/637 (one by one) against 754/638 (together) entities/relations. Prints JSON and writes
benchmarks/results/resolution_order.json.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase


def _graph(kb: KnowledgeBase) -> dict:
    store = kb.store
    entities = store.get_entities(store.all_entity_ids(), sources=False)
    edges = [r for r, *_ in store.all_edges()]
    relations = store.get_relations(edges, sources=False)
    name = {e.id: e.name for e in entities.values()}
    return {"entities": {e.id: (e.name, tuple(sorted(e.aliases))) for e in entities.values()},
            "relations": {r.id: (name.get(r.source_id, r.source_id), name.get(r.target_id, r.target_id))
                          for r in relations.values()}}


def build(workdir: Path, runtime: str, runs: list[list[Path]]) -> dict:
    settings = {"extraction": {"profile": "offline"}, "embeddings": {"runtime": runtime},
                "communities": {"auto_update": False}}
    started = time.perf_counter()
    for files in runs:  # one KnowledgeBase and one insert per run, as separate `index` commands are
        with KnowledgeBase(workdir, **settings) as kb:
            kb.insert([str(f) for f in files])
    with KnowledgeBase(workdir, **settings) as kb:
        graph = _graph(kb)
    graph["seconds"] = round(time.perf_counter() - started, 1)
    return graph


def compare(a: dict, b: dict) -> dict:
    names_a, names_b = set(a["entities"].values()), set(b["entities"].values())
    rel_a, rel_b = set(a["relations"].values()), set(b["relations"].values())
    return {"same_ids": a["entities"].keys() == b["entities"].keys() and a["relations"].keys() == b["relations"].keys(),
            "entities_only_here": sorted(map(list, names_a - names_b))[:20],
            "entities_only_there": sorted(map(list, names_b - names_a))[:20],
            "relations_only_here": sorted(map(list, rel_a - rel_b))[:20],
            "relations_only_there": sorted(map(list, rel_b - rel_a))[:20]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=Path, default=None, help="folder of papers (default: dev data askg/papers)")
    parser.add_argument("--runtimes", default="numpy,torch")
    args = parser.parse_args()
    folder = args.papers or require_dev() / "askg" / "papers"
    files = sorted(p for p in folder.iterdir() if p.is_file())
    out: dict = {"machine": machine(), "papers": [f.name for f in files], "runtimes": {}}
    with tempfile.TemporaryDirectory(prefix="bench_resolution_order_") as tmp:
        for runtime in args.runtimes.split(","):
            orders = {"together": [files], "together_again": [files], "one_by_one": [[f] for f in files],
                      "reverse_one_by_one": [[f] for f in reversed(files)]}
            graphs = {label: build(Path(tmp) / f"{runtime}-{label}", runtime, runs) for label, runs in orders.items()}
            together = graphs["together"]
            out["runtimes"][runtime] = {
                label: {"entities": len(g["entities"]), "relations": len(g["relations"]), "seconds": g["seconds"],
                        **({} if label == "together" else {"vs_together": compare(g, together)})}
                for label, g in graphs.items()}
    write_result("resolution_order", out)


if __name__ == "__main__":
    main()
