"""A CSV of many rows, streamed: peak memory and rows/s of `index` on a CSV of N
short rows against one of N/10 rows. Rows are documents read as the file is indexed, registered and
committed in batches with a bounded number waiting, so the peak memory must not grow with the rows
(before: a 1M-row file held every row's Document at once, 2.2 GB after 300 s and nothing committed).

    .venv/bin/python -m benchmarks.bench_csv_stream [--rows 100000]

Profile ``none`` (chunks and vectors only: the pipeline, not an extractor, is measured); the
embeddings are 64-d vectors drawn from each text's hash, so no model is loaded or timed. Each size runs in its
own process; peak RSS = VmHWM at the end, rows/s over the whole `index` call. Prints JSON and writes
benchmarks/results/csv_stream.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import machine, write_result

POOL = 200
WORDS = ("graph neural network retrieval protein gene disease model language embedding citation corpus "
         "entity relation knowledge inhibitor expression cohort trial biomarker pathway").split()

CHILD = r"""
import hashlib, json, re, sys, time
from pathlib import Path
import numpy as np
import scholargraph.app.workspace as workspace
from scholargraph import KnowledgeBase
from scholargraph.llm.embeddings import Embedder

class HashEmbedder(Embedder):  # 64-d vectors from the text's hash: the pipeline is measured, not a model
    name, dim = "bench:hash", 64
    async def _embed_uncached(self, texts):
        seeds = [int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little") for t in texts]
        return np.stack([np.random.default_rng(s).standard_normal(64) for s in seeds]).astype(np.float32)

# the workspace makes its embedder with this (a property of KnowledgeBase overridden here would not be used)
workspace.make_embedder = lambda settings, cache=None: HashEmbedder(cache)

def hwm_mb():
    return int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024

path, workdir = sys.argv[1:3]
with KnowledgeBase(workdir, extraction={"profile": "none"}, communities={"auto_update": False}) as kb:
    kb.stats()
    before = hwm_mb()
    started = time.perf_counter()
    report = kb.insert([path])
    seconds = time.perf_counter() - started
    assert kb.store.get_meta("embedding_dim") == "64", "the hash embedder was not used"
print(json.dumps({"processed": len(report.added), "seconds": round(seconds, 1),
                  "rss_before_mb": round(before, 1), "peak_rss_mb": round(hwm_mb(), 1)}))
"""


def write_csv(path: Path, rows: int, seed: int = 7) -> None:
    """Rows with their own id; the abstracts come from a pool of ``POOL`` texts, so after
    the first ones every chunk's vector is an embedding-cache hit and the pipeline is measured."""
    rng = random.Random(seed)
    pool = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 30))).capitalize() + "." for _ in range(POOL)]
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["paper_id", "abstract"])  # the title: the abstract's first sentence (chunks repeat too)
        for i in range(rows):
            out.writerow([f"r{i}", pool[i % POOL]])


def measure(rows: int, folder: Path) -> dict:
    path = folder / f"rows{rows}.csv"
    write_csv(path, rows)
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(folder / f"ws{rows}")],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result.update(rows=rows, file_mb=round(path.stat().st_size / 2**20, 1),
                  rows_per_s=round(result["processed"] / result["seconds"], 1))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the large file (the small one: a tenth)")
    parser.add_argument("--out", default=None, help="result file (default benchmarks/results/csv_stream.json)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_csv_stream_") as tmp:
        small, large = (measure(n, Path(tmp)) for n in (args.rows // 10, args.rows))
    growth = round(large["peak_rss_mb"] - small["peak_rss_mb"], 1)
    write_result("csv_stream", {"machine": machine(), "small": small, "large": large,
                                "peak_rss_growth_mb": growth,
                                "peak_rss_growth_bytes_per_extra_row": round(growth * 2**20 / (large["rows"] - small["rows"]))},
                 args.out)


if __name__ == "__main__":
    main()
