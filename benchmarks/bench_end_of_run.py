"""End-of-run work of `index` against the size of the knowledge base: a run that adds
the same N passages to knowledge bases of K1 and K2 passages (2WikiMultihopQA dev corpus, offline
profile). The work after the last document (graph rebuild, entity resolution, citations,
communities) must cost in proportion to what the run touched, not to K.

    .venv/bin/python -m benchmarks.bench_end_of_run [--base 500,1000] [--add 50] [--profile-to FILE]
    .venv/bin/python -m benchmarks.bench_end_of_run --synthetic 10000,40000 --add 500

``--synthetic K1,K2``: the resolution pass alone (the end-of-run phase found growing with
the graph) over a synthetic knowledge base of K entities (made-up names, random 384-d vectors, no
extraction or embedding model), with N new entities queued as a run's commits queue them; it
reports the pass's seconds, the entities it compared (its candidates) and the time of the
neighbour search per new entity. Minutes, where the 2WikiMultihopQA runs take hours on a busy
two-core machine.

Each knowledge base is built once (the larger from a copy of the smaller), copied, and the N
passages are added to the copy; seconds per phase come from the run's progress phases, the
end-of-run seconds are from its last document to its end, ``resolved`` is how many entities the
resolution pass compared (its queue). Prints JSON and writes benchmarks/results/end_of_run.json.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase

SETTINGS = {"extraction": {"profile": "offline"}}


class PhaseClock:
    """The Progress protocol, recording when each phase began and when the last document ended."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = [("indexing", time.perf_counter())]
        self.last_document = time.perf_counter()

    def start(self, total: int) -> None: ...
    def add_total(self, more: int) -> None: ...
    def read(self, records: int) -> None: ...
    def log(self, message: str) -> None: ...
    def finish(self) -> None: ...

    def advance(self) -> None:
        self.last_document = time.perf_counter()

    def phase(self, name: str) -> None:
        self.marks.append((name, time.perf_counter()))

    def seconds(self, end: float) -> dict[str, float]:
        out: dict[str, float] = {}
        for (name, at), (_, until) in zip(self.marks, [*self.marks[1:], ("end", end)], strict=True):
            out[name] = round(out.get(name, 0.0) + until - at, 2)
        return out


def write_passages(path: Path, passages: list[dict]) -> Path:
    path.write_text(json.dumps(passages), encoding="utf-8")
    return path


def add_run(workdir: Path, added: Path, profile_to: str | None) -> dict:
    clock = PhaseClock()
    with KnowledgeBase(workdir, progress=clock, **SETTINGS) as kb:
        queued_before = len(kb.store.pending_maintenance("resolve"))
        started = time.perf_counter()
        profiler = cProfile.Profile() if profile_to else None
        if profiler:
            profiler.enable()
        report = kb.insert([added])
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile_to)
        end = time.perf_counter()
        stats = kb.stats().to_json()
    return {"added": len(report.added), "seconds": round(end - started, 2),
            "end_of_run_s": round(end - clock.last_document, 2), "phases": clock.seconds(end),
            "queued_before": queued_before, "entities": stats["entities"], "relations": stats["relations"]}


def synthetic_store(workdir: Path, total: int, new: int, dim: int = 384):
    """K entities with made-up names and random vectors, the last ``new`` queued for resolution."""
    import random

    import numpy as np

    from scholargraph.graph.merge import entity_id_for
    from scholargraph.models import EntityRecord
    from scholargraph.store import open_store

    store = open_store(workdir)
    store.set_meta("embedding_dim", str(dim))
    store.set_meta("embedding_model", "bench:random")
    rng, vectors = random.Random(1), np.random.default_rng(1)
    syllables = "ka lo mi nu pe ra si to vu xe ba de fi go hu".split()
    records = []
    for i in range(total):
        name = " ".join("".join(rng.choice(syllables) for _ in range(3)) for _ in range(2)) + f" {i}"
        records.append(EntityRecord(name, "Concept", f"made-up entity {i}", f"c{i // 10}", id=entity_id_for(name.lower()),
                                    key=name.lower(), document_id=f"d{i // 10}"))
    store.write(lambda: store.write_entities(records))
    ids = [r.id for r in records]
    for start in range(0, total, 20000):
        store.put_vectors("entity", ids[start:start + 20000],
                          vectors.standard_normal((len(ids[start:start + 20000]), dim)).astype(np.float32))
    store.finish_maintenance("resolve", store.pending_maintenance("resolve"))
    store.queue_maintenance("resolve", ids[-new:])
    return store


def synthetic_run(total: int, new: int, folder: Path) -> dict:
    from scholargraph.graph import resolution_pass
    from scholargraph.graph.resolve import ResolutionSettings

    store = synthetic_store(folder / f"synthetic{total}", total, new)
    compared: list[int] = []
    link_pairs = resolution_pass.link_pairs

    def counting(cands, settings=None):
        compared.append(len(cands))
        return link_pairs(cands, settings)

    resolution_pass.link_pairs = counting
    try:
        store.vector_index("entity")  # loaded once per process (O(K)), as the first query of a run does
        started = time.perf_counter()
        groups = resolution_pass.resolve_pending(store, ResolutionSettings())
        seconds = time.perf_counter() - started
    finally:
        resolution_pass.link_pairs = link_pairs
        store.close()
    return {"entities": total, "new": new, "resolution_s": round(seconds, 2), "compared": sum(compared),
            "groups": len(groups), "ms_per_new_entity": round(1000 * seconds / new, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="500,1000", help="knowledge-base sizes K (passages), ascending")
    parser.add_argument("--add", type=int, default=50, help="passages each run adds (N)")
    parser.add_argument("--profile-to", help="cProfile the largest K's add run into this file")
    parser.add_argument("--keep", help="build the knowledge bases in this folder (kept) instead of a temporary one")
    parser.add_argument("--synthetic", help="K1,K2: the resolution pass over synthetic knowledge bases of K entities")
    args = parser.parse_args()
    if args.synthetic:
        with tempfile.TemporaryDirectory(prefix="bench_end_of_run_") as tmp:
            runs = [synthetic_run(int(k), args.add, Path(tmp)) for k in args.synthetic.split(",")]
        write_result("end_of_run_synthetic", {"machine": machine(), "runs": runs})
        return
    corpus = json.loads((require_dev() / "multihop" / "2wikimultihopqa" / "2wikimultihopqa_corpus.json").read_text())
    sizes = sorted(int(k) for k in args.base.split(","))
    added_passages = corpus[-args.add:]
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench_end_of_run_"))
    folder.mkdir(parents=True, exist_ok=True)
    added = write_passages(folder / "added.json", added_passages)
    runs, built, previous = [], 0, None
    for k in sizes:
        base = folder / f"kb{k}"
        if not base.exists():
            if previous is not None:
                shutil.copytree(previous, base)
            started = time.perf_counter()
            with KnowledgeBase(base, **SETTINGS) as kb:
                kb.insert([write_passages(folder / f"base{built}-{k}.json", corpus[built:k])])
            print(json.dumps({"built": k, "seconds": round(time.perf_counter() - started, 1)}), flush=True)
        built, previous = k, base
        victim = folder / f"kb{k}+{args.add}"
        shutil.rmtree(victim, ignore_errors=True)
        shutil.copytree(base, victim)
        run = add_run(victim, added, args.profile_to if k == sizes[-1] else None)
        run["base_passages"] = k
        runs.append(run)
        print(json.dumps(run), flush=True)
    write_result("end_of_run", {"machine": machine(), "add": args.add, "runs": runs})
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
