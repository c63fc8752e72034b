"""A CSV of many rows, streamed: peak memory and rows/s of `index` on a CSV of N
short rows against one of N/10 rows. Rows are documents read as the file is indexed, registered and
committed in batches with a bounded number waiting, so the peak memory must not grow with the rows
(before: a 1M-row file held every row's Document at once, 2.2 GB after 300 s and nothing committed).

    .venv/bin/python -m benchmarks.bench_csv_stream [--rows 100000]

Profile ``none`` (chunks and vectors only: the pipeline, not an extractor, is measured); the
embeddings are 64-d vectors drawn from each text's hash, so no model is loaded or timed. Each size runs in its
own process; peak RSS = VmHWM at the end, rows/s over the whole `index` call. Where the growth is and
is not: each child also reports SQLite's allocator (``sqlite3_memory_used``), RSS after ``malloc_trim``
(memory freed but not returned) and which vector indexes the run loaded into memory; and the bytes per
row of what the run keeps for every document (the report's file ledger, ``report.added``, the CSV
reader's duplicate-id map) are measured apart with tracemalloc on 100k ids: the report lists the
first ``REPORT_IDS`` ids and counts the others, the ledger and the CSV reader keep an 8-byte digest
per row (``digests.DigestMap``). Prints JSON and writes
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
import ctypes, gc, hashlib, json, re, sys, time
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

def status_mb(key="VmHWM"):
    return int(re.search(key + r":\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024

def hwm_mb():
    return status_mb()

def sqlite_mb():  # what SQLite's allocator holds now (page caches, statements), all connections together
    try:
        lib = ctypes.CDLL("libsqlite3.so.0")
    except OSError:
        return None
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return round(lib.sqlite3_memory_used() / 2**20, 1)

path, workdir = sys.argv[1:3]
with KnowledgeBase(workdir, extraction={"profile": "none"}, communities={"auto_update": False}) as kb:
    kb.stats()
    before = hwm_mb()
    started = time.perf_counter()
    report = kb.insert([path])
    seconds = time.perf_counter() - started
    assert kb.store.get_meta("embedding_dim") == "64", "the hash embedder was not used"
    # where the growth is not: vector indexes loaded into memory by the run (none: they load on a query)
    loaded = sorted(getattr(kb.store, "_indexes", {}))
    rss_end, sqlite_end = status_mb("VmRSS"), sqlite_mb()
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed but not returned to the system (fragmentation)
    print(json.dumps({"processed": report.total("added"), "report_ids_listed": len(report.added),
                      "file_ids_listed": sum(len(f.documents) for f in report.files), "seconds": round(seconds, 1),
                      "rss_before_mb": round(before, 1), "peak_rss_mb": round(hwm_mb(), 1),
                      "rss_end_mb": round(rss_end, 1), "rss_after_malloc_trim_mb": round(status_mb("VmRSS"), 1),
                      "sqlite_memory_mb": sqlite_end, "vector_indexes_loaded": loaded}))
"""


LEDGER = r"""
import json, tracemalloc
from scholargraph.digests import DigestMap
from scholargraph.report import REPORT_IDS, FileLedger, IndexReport
n = 100_000
ids = [f"r{i}" for i in range(n)]
tracemalloc.start()  # numpy's arrays are traced too (their own domain, counted in the total)
ledger = FileLedger()
for i in ids:  # registered, then processed soon after (the pipeline keeps a bounded number waiting)
    ledger.document("rows.csv", i, "queued")
    ledger.settled(i, "indexed")
held = tracemalloc.get_traced_memory()[0]
report = IndexReport(profile="none")
for i in range(n):
    report.keep("added", "".join(("r", str(i))))  # the ids as the claim reads them (new strings)
added_held = tracemalloc.get_traced_memory()[0] - held
seen = DigestMap()  # the CSV reader's paper id -> first row (duplicates)
for row, i in enumerate(ids, start=1000):
    seen.setdefault(i, row)
seen_held = tracemalloc.get_traced_memory()[0] - held - added_held
print(json.dumps({"rows": n, "report_ids": REPORT_IDS, "file_ledger": round(held / n, 1),
                  "file_ledger_digests": round(ledger._first_path.nbytes() / n, 1),
                  "report_added": round(added_held / n, 1), "csv_duplicate_map": round(seen_held / n, 1),
                  "id_string": 56}))
"""


def held_per_row() -> dict:
    """Bytes per row of what the run keeps for every document (tracemalloc, 100k made-up ids)."""
    done = subprocess.run([sys.executable, "-c", LEDGER], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


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
                                "peak_rss_growth_mb": growth, "python_bytes_held_per_row": held_per_row(),
                                "peak_rss_growth_bytes_per_extra_row": round(growth * 2**20 / (large["rows"] - small["rows"]))},
                 args.out)


if __name__ == "__main__":
    main()
