"""A scale run from one command: PubMed-like abstracts, the fastbio profile,
PostgreSQL, several indexing workers, several scripted LLM endpoints with a realistic latency.

    .venv/bin/python -m benchmarks.bench_scale --docs 2000 [--workers 2] [--compare-one-worker]
        [--endpoints 4] [--latency 2.0] [--limit 4] [--queries 20] [--profile-end-of-run] [--json-out FILE]

* Abstracts are generated at benchmark time (never committed): each one takes as many sentences as
  a real abstract of the dev sets has (BioRED train+dev, PubMedQA dev: ``../shared/data/dev``),
  drawn from all their sentences, under a title drawn from theirs; a third of the capitalised terms
  (genes, diseases, drugs...) are replaced by names drawn from a Zipf law over ten million names, so
  new entities keep appearing as the corpus grows (as in PubMed) and the graph grows with it instead
  of saturating on the few thousand terms of the dev sets. Seeded: the same ``--docs`` gives the
  same corpus.
* ``--endpoints`` scripted OpenAI-compatible servers (``scholargraph.testing``), each in a process of
  its own, answer the fastbio draft prompt with the abstract's own terms (tests/support/canned_bio.py:
  the replies vary with the abstract), after ``--latency`` seconds, at most ``--server-parallel``
  requests at once. When the settings have ``llm.endpoints`` every worker uses all
  of them; otherwise worker i uses endpoint i (the per-worker LLM limit ``--limit`` bounds both).
* The documents are registered PENDING first, then ``--workers`` worker processes (``KnowledgeBase
  .insert()``: claim, index, end-of-run work shared) index them into one PostgreSQL database
  (``scholargraph.testing.postgres``, fsync on). The parent samples each worker's RSS every
  ``--sample-s``; documents/s over time comes from the documents' ``processed_at``.
* Queries: one fresh process per mode (cold start: import, open, first retrieval = what the mode
  loads, RSS before/after), then ``--queries`` retrievals per mode (p50/p95). Retrieval only, against
  a zero-latency scripted server: the LLM's answer time is not in these figures.
* Each worker's end-of-run work by phase (rebuild, resolution, citations, communities: seconds
  from its progress phases, ``end_of_run_per_worker``); ``--profile-end-of-run`` adds the functions
  a stack sampler over all its threads found busiest then (``benchmarks/phases.py``).
* ``--compare-one-worker``: the same corpus indexed again by one worker into a second database,
  for the speed-up of ``--workers`` workers over one.
* ``--keep-db DIR`` keeps the PostgreSQL cluster of the run in DIR (moved there after a clean
  shutdown); ``--reuse-db DIR`` starts that cluster again and runs only the queries (same ``--docs``,
  so the questions are the same): a change on the query path re-measured without indexing again.

Prints JSON and writes ``benchmarks/results/scale_<docs>.json``; docs/scale.md reads the figures.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty

import numpy as np

from benchmarks.common import machine, require_dev, write_result
from scholargraph.models import Document, Section

MODES = ["naive", "local", "subgraph", "global", "hybrid", "ppr", "bio"]
SERVER_SETTINGS = {"shared_buffers": "512MB", "maintenance_work_mem": "512MB"}
_TERM = re.compile(r"\b(?:[A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*|[A-Z][a-z]{3,}(?: [A-Z][a-z]{3,})?)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
PREFIXES = ["SLC", "KCN", "ZNF", "TMEM", "CYP", "IL", "CD", "ABC", "HOX", "TNF", "MAPK", "CDK", "NR", "GPR", "FAM"]
NAME_SPACE = 10_000_000
REPLACE_SHARE = 0.33


# -- the corpus ---------------------------------------------------------------------------------------


def _sources(dev: Path) -> tuple[list[str], list[list[str]]]:
    """(titles, abstracts as sentence lists) of BioRED (train + dev) and PubMedQA dev."""
    titles: list[str] = []
    abstracts: list[list[str]] = []
    for name in ("Train.PubTator", "Dev.PubTator"):
        path = dev / "biored" / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split("|", 2)
            if len(parts) == 3 and parts[1] == "t":
                titles.append(parts[2].strip())
            elif len(parts) == 3 and parts[1] == "a":
                abstracts.append(_SENTENCE.split(parts[2].strip()))
    qa = dev / "pubmedqa" / "pqal_dev.json"
    if qa.exists():
        for item in json.loads(qa.read_text(encoding="utf-8")).values():
            titles.append(item["QUESTION"].strip())
            abstracts.append([s for c in item["CONTEXTS"] for s in _SENTENCE.split(c.strip())])
    if not abstracts:
        raise SystemExit(f"no BioRED or PubMedQA abstracts under {dev}")
    return titles, abstracts


class AbstractGenerator:
    """PubMed-like abstracts resampled from the dev sets (see the module docstring)."""

    def __init__(self, dev: Path, seed: int = 28):
        self.titles, abstracts = _sources(dev)
        self.lengths = [len(a) for a in abstracts]
        self.sentences = [s for a in abstracts for s in a if len(s) > 20]
        self.seed = seed

    def _name(self, rng: np.random.Generator) -> str:
        k = int(min(rng.zipf(1.3), NAME_SPACE))
        return f"{PREFIXES[k % len(PREFIXES)]}{k}"

    def document(self, i: int) -> Document:
        rng = np.random.default_rng((self.seed, i))
        pick = random.Random(f"{self.seed}:{i}")
        n = self.lengths[pick.randrange(len(self.lengths))]
        sentences = [self.sentences[pick.randrange(len(self.sentences))] for _ in range(max(3, n))]

        def swap(match: re.Match[str]) -> str:
            return self._name(rng) if pick.random() < REPLACE_SHARE else match.group(0)

        text = " ".join(_TERM.sub(swap, s) for s in sentences)
        title = _TERM.sub(swap, self.titles[pick.randrange(len(self.titles))])
        pmid = str(40_000_000 + i)
        return Document(id=f"pmid:{pmid}", title=title, pmid=pmid, abstract=text,
                        sections=[Section("Abstract", text, kind="abstract")], source_path="(bench_scale)")


def register(dsn: str, workdir: Path, gen: AbstractGenerator, n: int) -> dict:
    from scholargraph.store import open_store

    store = open_store(workdir, "postgres", dsn=dsn)
    started = time.perf_counter()
    words = 0
    try:
        for start in range(0, n, 500):
            docs = [gen.document(i) for i in range(start, min(n, start + 500))]
            words += sum(len(d.abstract.split()) for d in docs)
            store.write(lambda docs=docs: [store.add_pending(d, "full", "fastbio") for d in docs])
    finally:
        store.close()
    return {"documents": n, "mean_words": round(words / max(1, n), 1), "seconds": round(time.perf_counter() - started, 1)}


# -- scripted LLM endpoints -----------------------------------------------------------------------------


def _serve(conn, latency: float, parallel: int | None) -> None:
    from scholargraph.testing.llm_server import ScriptedLLMServer
    from tests.support.canned import default_rules
    from tests.support.canned_bio import bio_query_rules, fastbio_rules

    server = ScriptedLLMServer(rules=fastbio_rules() + bio_query_rules() + default_rules(), latency=latency,
                               max_parallel=parallel).start()
    conn.send(server.base_url)
    signal.pause()


class Endpoints:
    """``n`` scripted servers, each in a process of its own (as real LLM servers would be)."""

    def __init__(self, n: int, latency: float, parallel: int | None):
        ctx = multiprocessing.get_context("fork")
        self._procs, self.urls = [], []
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, latency, parallel), daemon=True)
            proc.start()
            self._procs.append(proc)
            self.urls.append(parent.recv())

    def stop(self) -> None:
        for proc in self._procs:
            proc.terminate()
            proc.join(5)


def llm_settings(urls: list[str], index: int, limit: int) -> dict:
    """All endpoints when the settings know several (``llm.endpoints``), else endpoint ``index``."""
    from scholargraph.config import LLMSettings

    if "endpoints" in LLMSettings.model_fields:
        return {"endpoints": [{"base_url": u, "model": "scripted-model", "max_concurrency": max(1, limit // len(urls))}
                              for u in urls], "model": "scripted-model", "max_concurrency": limit}
    return {"base_url": urls[index % len(urls)], "model": "scripted-model", "max_concurrency": limit}


def worker_settings(dsn: str, urls: list[str], index: int, limit: int, reports: bool = False) -> dict:
    return {"store": {"backend": "postgres", "dsn": dsn}, "llm": llm_settings(urls, index, limit),
            "extraction": {"profile": "fastbio"}, "communities": {"reports_on_index": reports},
            "embeddings": {"provider": "openai", "base_url": urls[index % len(urls)], "model": "scripted-embed",
                           "dimension": 384, "batch_size": 256}}


# -- indexing workers -----------------------------------------------------------------------------------


def _worker(settings: dict, workdir: str, out, profile: bool = False) -> None:
    from benchmarks.phases import EndOfRunClock
    from scholargraph import KnowledgeBase

    clock = EndOfRunClock(sample=profile)
    kb = KnowledgeBase(workdir, progress=clock, **settings)
    start = time.time()
    report = kb.insert()
    clock.end()
    end = time.time()
    kb.close()
    out.put({"start": start, "end": end, "processed": len(report.added), "failed": len(report.failed),
             "end_of_run": clock.summary(),
             "notes": report.notes, "warnings": report.warnings[:5],
             "usage": {purpose: {"calls": u.calls, "cached_calls": u.cached_calls} for purpose, u in report.usage.items()}})


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (``/proc/PID/stat``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_s(root: int | None) -> float | None:
    """CPU seconds of a process and its children now running (the database server and its backends)."""
    if root is None:
        return None
    total = _cpu_s(root) or 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _sample(pids: list[int], every: float, stop: threading.Event, rows: list, t0: float, db_pid: int | None = None) -> None:
    while not stop.wait(every):
        db = _tree_cpu_s(db_pid)
        rows.append({"t": round(time.time() - t0, 1), "rss_mb": [round(r, 1) if (r := _rss_mb(p)) else None for p in pids],
                     "cpu_s": [round(c, 1) if (c := _cpu_s(p)) is not None else None for p in pids],
                     **({"db_cpu_s": round(db, 1)} if db is not None else {})})


def run_workers(dsn: str, urls: list[str], workers: int, limit: int, tmp: Path, sample_s: float,
                reports: bool = False, profile: bool = False, checkpoint=None, checkpoint_s: float = 600.0,
                db_pid: int | None = None) -> dict:
    """Run the workers until each has finished its ``insert``; ``checkpoint(t0, samples)`` is called every
    ``checkpoint_s`` meanwhile (a long run leaves its figures so far if it is stopped)."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(worker_settings(dsn, urls, i, limit, reports), str(tmp / f"w{workers}-{i}"),
                                               queue, profile))
             for i in range(workers)]
    t0 = time.time()
    for p in procs:
        p.start()
    rss: list = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=([p.pid for p in procs], sample_s, stop, rss, t0, db_pid), daemon=True)
    sampler.start()
    rows: list = []
    while len(rows) < len(procs):
        try:
            rows.append(queue.get(timeout=checkpoint_s if checkpoint else 24 * 3600))
        except Empty:
            if checkpoint is None or not any(p.is_alive() for p in procs):
                raise
            checkpoint(t0, list(rss))
    for p in procs:
        p.join()
    stop.set()
    sampler.join()
    return {"t0": t0, "rows": rows, "rss": rss}


# -- what the database says ------------------------------------------------------------------------------


def throughput(dsn: str, t0: float, window: int) -> dict:
    """Documents/s over time from the documents' ``processed_at``: per window of ``window`` documents,
    the first and last windows, and the slope of the rate against the documents already indexed."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        times = [r[0] for r in conn.execute(
            "SELECT processed_at FROM documents WHERE status = 'PROCESSED' ORDER BY processed_at").fetchall()]
    if len(times) < 2 * window:
        window = max(1, len(times) // 4)
    ts = np.array(times) - t0
    curve = []
    for start in range(0, len(ts) - window + 1, window):
        span = ts[start + window - 1] - (ts[start - 1] if start else 0.0)
        curve.append({"documents": start + window, "t_s": round(float(ts[start + window - 1]), 1),
                      "documents_per_s": round(window / max(span, 1e-9), 2)})
    xs = np.array([c["documents"] for c in curve], dtype=float)
    ys = np.array([c["documents_per_s"] for c in curve])
    slope = float(np.polyfit(xs / 1000, ys, 1)[0]) if len(curve) >= 2 else 0.0
    first, last = curve[0]["documents_per_s"], curve[-1]["documents_per_s"]
    return {"window_documents": window, "curve": curve, "first_window_docs_per_s": first,
            "last_window_docs_per_s": last, "last_vs_first": round(last / first, 3) if first else None,
            "slope_docs_per_s_per_1k_docs": round(slope, 4), "all_processed_at_s": round(float(ts[-1]), 1)}


def database_size(dsn: str, documents: int) -> dict:
    import psycopg

    with psycopg.connect(dsn) as conn:
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        tables = conn.execute(
            """SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY 2 DESC LIMIT 12""").fetchall()
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("chunks", "entities", "relations", "entity_sources", "relation_sources")}
    return {"database_mb": round(total / 1e6, 1), "bytes_per_document": round(total / max(1, documents)),
            "largest_tables_mb": {name: round(size / 1e6, 1) for name, size in tables}, "rows": counts}


# -- queries from a cold start ------------------------------------------------------------------------------


def _profile_top(stats_source, limit: int = 15) -> list[str]:
    """The ``limit`` functions with the most cumulative time (after the timed questions: timings unaffected)."""
    import io
    import pstats

    buffer = io.StringIO()
    pstats.Stats(stats_source, stream=buffer).sort_stats("cumulative").print_stats(limit)
    return [line.strip() for line in buffer.getvalue().splitlines() if line.strip()][-limit:]


def _query_process(dsn: str, url: str, mode: str, questions: list[str], workdir: str, out,
                   profile: bool = False, query: dict | None = None) -> None:
    """One mode from a cold start, on the async API in one event loop (as the HTTP server runs it: the
    sync API's clients are made and closed around every call)."""
    import asyncio

    t_start = time.perf_counter()
    from scholargraph import KnowledgeBase

    kb = KnowledgeBase(workdir, progress=False, **worker_settings(dsn, [url], 0, 4), query=query or {})
    opened = time.perf_counter()
    rss_open = _rss_mb(os.getpid())
    result: dict = {"mode": mode}

    async def run() -> None:
        await kb.aretrieve(questions[0], mode)
        result["cold_start_to_first_retrieval_s"] = round(time.perf_counter() - t_start, 2)
        result["open_s"] = round(opened - t_start, 2)
        result["first_retrieval_s"] = round(time.perf_counter() - opened, 2)
        rss_first = _rss_mb(os.getpid())
        result["rss_open_mb"], result["rss_after_first_mb"] = rss_open, rss_first
        result["loaded_mb"] = round((rss_first or 0) - (rss_open or 0), 1)
        times = []
        for q in questions[1:]:
            t = time.perf_counter()
            await kb.aretrieve(q, mode)
            times.append(1000 * (time.perf_counter() - t))
        result["p50_ms"] = round(float(np.percentile(times, 50)), 1)
        result["p95_ms"] = round(float(np.percentile(times, 95)), 1)
        if profile:  # three more questions under cProfile, after the timed ones
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
            for q in questions[1:4]:
                await kb.aretrieve(q, mode)
            profiler.disable()
            result["profile_top_cumulative"] = _profile_top(profiler)
        await kb.workspace.aclose_clients()

    try:
        asyncio.run(run())
    except Exception as exc:  # a mode that cannot answer at this size says why
        result["error"] = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        kb.close()
    out.put(result)


def questions(gen: AbstractGenerator, n_docs: int, count: int) -> list[str]:
    from tests.support.canned_terms import terms

    rng = random.Random(7)
    out = []
    while len(out) < count:
        doc = gen.document(rng.randrange(n_docs))
        found = [t for t in terms(doc.abstract, 6) if len(t) > 2]
        if len(found) >= 2:
            out.append(f"How is {found[0]} related to {found[1]}?")
    return out


def query_modes(dsn: str, url: str, qs: list[str], tmp: Path, profile: bool = False,
                query: dict | None = None) -> list[dict]:
    ctx = multiprocessing.get_context("spawn")
    results = []
    for mode in MODES:
        queue = ctx.Queue()
        proc = ctx.Process(target=_query_process, args=(dsn, url, mode, qs, str(tmp / f"q-{mode}"), queue, profile,
                                                        query))
        proc.start()
        try:
            results.append(queue.get(timeout=3600))
        except Exception as exc:  # noqa: BLE001 - the process died: say so, go on with the next mode
            results.append({"mode": mode, "error": f"no result: {exc}"})
        proc.join(60)
    return results


# -- main ----------------------------------------------------------------------------------------------------


def cpu_per_document(rate: dict, rss: list) -> list[dict]:
    """Worker CPU (all workers) per document in each window of the throughput curve: the per-document cost
    over the run, robust to a busy machine where documents/s is not."""
    if not rss or not rate.get("curve"):
        return []
    ts = np.array([0.0] + [s["t"] for s in rss])  # the workers start at t0 with no CPU spent
    total = np.array([0.0] + [sum(c or 0.0 for c in s.get("cpu_s", [])) for s in rss])
    db = [s["db_cpu_s"] for s in rss if "db_cpu_s" in s]
    db_total = np.array([db[0]] + db) if len(db) == len(rss) else None  # the server's CPU before t0 is not the run's
    out, prev_t, prev_docs = [], 0.0, 0
    for point in rate["curve"]:
        n = max(1, point["documents"] - prev_docs)
        row = {"documents": point["documents"],
               "cpu_ms_per_document": round(1000 * float(np.interp(point["t_s"], ts, total) - np.interp(prev_t, ts, total)) / n, 1)}
        if db_total is not None:
            row["db_cpu_ms_per_document"] = round(
                1000 * float(np.interp(point["t_s"], ts, db_total) - np.interp(prev_t, ts, db_total)) / n, 1)
        out.append(row)
        prev_t, prev_docs = point["t_s"], point["documents"]
    return out


def index_run(pg, name: str, gen: AbstractGenerator, args, urls: list[str], workers: int, tmp: Path,
              result: dict | None = None) -> dict:
    dsn = pg.create_database(name)
    registered = register(dsn, tmp / f"reg-{name}", gen, args.docs)
    window = min(10_000, max(1, args.docs // 10))

    def so_far(t0: float, rss: list) -> None:
        """The figures of an unfinished run, written as ``run_so_far`` (replaced by ``run`` at its end)."""
        result["run_so_far"] = {"elapsed_s": round(time.time() - t0, 1), "throughput": throughput(dsn, t0, window),
                                "rss_samples": rss[:: max(1, len(rss) // 60)]}
        result["run_so_far"]["worker_cpu_ms_per_document_curve"] = cpu_per_document(result["run_so_far"]["throughput"], rss)
        write_result(f"scale_{args.docs}", result, args.json_out)

    run = run_workers(dsn, urls, workers, args.limit, tmp, args.sample_s, args.reports, args.profile_end_of_run,
                      checkpoint=so_far if result is not None else None, checkpoint_s=args.checkpoint_s, db_pid=pg.pid)
    if result is not None:
        result.pop("run_so_far", None)
    t0, rows = run["t0"], run["rows"]
    wall = max(r["end"] for r in rows) - t0
    processed = sum(r["processed"] for r in rows)
    rate = throughput(dsn, t0, window)
    rss = run["rss"]
    peaks = [max((s["rss_mb"][i] or 0) for s in rss) if rss else None for i in range(workers)]
    cpu = sum(max((s.get("cpu_s", [None] * workers)[i] or 0) for s in rss) for i in range(workers)) if rss else 0.0
    out = {"workers": workers, "registered": registered, "processed": processed,
           "failed": sum(r["failed"] for r in rows), "per_worker": [r["processed"] for r in rows],
           "wall_s": round(wall, 1), "documents_per_s": round(processed / wall, 2),
           "documents_per_s_until_last_processed": round(processed / rate["all_processed_at_s"], 2),
           "end_of_run_s": round(wall - rate["all_processed_at_s"], 1),
           "per_worker_span_s": [[round(r["start"] - t0, 1), round(r["end"] - t0, 1)] for r in rows],
           "end_of_run_per_worker": [r["end_of_run"] for r in rows],
           "notes": [r["notes"] for r in rows], "llm_usage": [r.get("usage") for r in rows], "warnings": [r["warnings"] for r in rows],
           "throughput": rate, "rss_peak_mb": peaks, "worker_cpu_s": round(cpu, 1),
           "worker_cpu_ms_per_document": round(1000 * cpu / max(1, processed), 1),
           "worker_cpu_ms_per_document_curve": cpu_per_document(rate, rss),
           "rss_samples": rss[:: max(1, len(rss) // 60)], "database": database_size(dsn, processed)}
    return {"dsn": dsn, **out}


def finish_run(pg, dsn: str, args, urls: list[str], tmp: Path) -> dict:
    """``--reuse-db DIR --finish``: the end-of-run work a kept knowledge base still owes (its workers were
    stopped once every document was processed), done by ``--workers`` workers with this code: what
    they did phase by phase, their RSS, and the database afterwards."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        owed = {"dirty_entities": conn.execute("SELECT count(*) FROM entities WHERE dirty").fetchone()[0],
                "dirty_relations": conn.execute("SELECT count(*) FROM relations WHERE dirty").fetchone()[0],
                "maintenance": dict(conn.execute("SELECT task, count(*) FROM maintenance GROUP BY 1").fetchall())}
        processed = conn.execute("SELECT count(*) FROM documents WHERE status = 'PROCESSED'").fetchone()[0]
    run = run_workers(dsn, urls, args.workers, args.limit, tmp, args.sample_s, args.reports, args.profile_end_of_run,
                      db_pid=pg.pid)
    t0, rows, rss = run["t0"], run["rows"], run["rss"]
    return {"owed": owed, "workers": args.workers, "wall_s": round(max(r["end"] for r in rows) - t0, 1),
            "per_worker_span_s": [[round(r["start"] - t0, 1), round(r["end"] - t0, 1)] for r in rows],
            "end_of_run_per_worker": [r["end_of_run"] for r in rows], "notes": [r["notes"] for r in rows],
            "warnings": [r["warnings"] for r in rows], "llm_usage": [r.get("usage") for r in rows],
            "rss_peak_mb": [max((s["rss_mb"][i] or 0) for s in rss) if rss else None for i in range(args.workers)],
            "rss_samples": rss[:: max(1, len(rss) // 60)], "database": database_size(dsn, processed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compare-one-worker", action="store_true")
    parser.add_argument("--endpoints", type=int, default=4)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per LLM call (a served 7-8B model)")
    parser.add_argument("--server-parallel", type=int, default=8, help="requests one endpoint works on at once")
    parser.add_argument("--limit", type=int, default=4, help="LLM calls in flight per worker (llm.max_concurrency)")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--sample-s", type=float, default=5.0)
    parser.add_argument("--checkpoint-s", type=float, default=600.0,
                        help="while indexing, write the figures so far (run_so_far) this often")
    parser.add_argument("--no-queries", action="store_true")
    parser.add_argument("--profile-queries", action="store_true",
                        help="after each mode's timed questions, profile three more and record the top functions")
    parser.add_argument("--profile-end-of-run", action="store_true",
                        help="sample every worker thread's stack during the end-of-run work; the top functions in the JSON")
    parser.add_argument("--reports", action="store_true",
                        help="community reports written by the LLM at the end of the run (index --reports), shared by the workers")
    parser.add_argument("--max-graph-relations", type=int,
                        help="query.max_graph_relations of the query processes (0: every graph mode reads only the "
                             "part of the graph a question touches)")
    parser.add_argument("--keep-db", type=Path, help="keep the PostgreSQL cluster in this (new) folder")
    parser.add_argument("--reuse-db", type=Path, help="a cluster kept by --keep-db: run the queries only")
    parser.add_argument("--finish", action="store_true",
                        help="with --reuse-db: first the end-of-run work the kept knowledge base owes, by --workers workers")
    parser.add_argument("--db-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="a PostgreSQL server setting for this run (e.g. maintenance_work_mem=2GB)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if args.keep_db is not None and args.keep_db.exists():
        parser.error(f"--keep-db {args.keep_db}: already exists")

    from scholargraph.testing.postgres import TempPostgres

    tmp = Path(tempfile.mkdtemp(prefix="sg-bench-scale-"))
    result: dict = {"benchmark": "scale", "machine": machine(), "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}
    gen = AbstractGenerator(require_dev())
    result["corpus"] = {"source_abstracts": len(gen.lengths), "source_sentences": len(gen.sentences),
                        "mean_source_sentences": round(sum(gen.lengths) / len(gen.lengths), 1)}
    settings = {**SERVER_SETTINGS, **dict(item.split("=", 1) for item in args.db_setting)}
    result["db_settings"] = settings
    pg = TempPostgres(durable=True, settings=settings).start(existing=args.reuse_db)
    endpoints = Endpoints(args.endpoints, args.latency, args.server_parallel)
    query_server = Endpoints(1, 0.0, None)
    try:
        if args.reuse_db is not None:
            dsn = pg.dsn("scale")
            if args.finish:
                result["finish"] = finish_run(pg, dsn, args, endpoints.urls, tmp)
                write_result(f"scale_{args.docs}", result, args.json_out)
        else:
            main_run = index_run(pg, "scale", gen, args, endpoints.urls, args.workers, tmp, result)
            dsn = main_run.pop("dsn")
            result["run"] = main_run
            write_result(f"scale_{args.docs}", result, args.json_out)  # each phase written as it ends
        if not args.no_queries:
            query = {} if args.max_graph_relations is None else {"max_graph_relations": args.max_graph_relations}
            result["queries"] = query_modes(dsn, query_server.urls[0], questions(gen, args.docs, args.queries), tmp,
                                            args.profile_queries, query)
            write_result(f"scale_{args.docs}", result, args.json_out)
        if args.compare_one_worker and args.reuse_db is None:
            one = index_run(pg, "scale_one", gen, args, endpoints.urls, 1, tmp)
            one.pop("dsn")
            result["one_worker"] = one
            result["speedup"] = round(main_run["documents_per_s"] / one["documents_per_s"], 2)
            result["speedup_until_last_processed"] = round(
                main_run["documents_per_s_until_last_processed"] / one["documents_per_s_until_last_processed"], 2)
    finally:
        endpoints.stop()
        query_server.stop()
        pg.stop(keep=args.keep_db)
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(f"scale_{args.docs}", result, args.json_out)


if __name__ == "__main__":
    main()
