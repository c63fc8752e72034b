"""Retrieval quality: recall@5 and recall@10 of gold evidence for every query mode, with the bm25s
baseline and per-mode query latency, on HotpotQA, 2WikiMultihopQA, QASPER and PubMedQA dev data,
in one run.

    .venv/bin/python -m benchmarks.eval_retrieval [--datasets hotpotqa,2wiki,qasper,pubmedqa]
        [--modes bm25s,lexical,naive-dense,naive,local,subgraph,global,hybrid,ppr] [--profile offline]
        [--max-2wiki 600] [--keep-workspaces DIR] [--merge-into results.json]

Rows: ``bm25s`` = the bm25s library (Lucene BM25, k1 1.5, b 0.75, English stopwords and Snowball
stemmer, as its README recommends) over the same chunks the engine indexed: the recognised lexical
baseline. ``lexical`` = the product's own full-text search alone (``query.passages = lexical``);
``naive-dense`` = chunk vectors alone (``query.passages = dense``, the former naive mode); every
other row is a query mode with default settings (passages fused by RRF).

Matching rules (a gold item is found when):
* HotpotQA / 2Wiki: a retrieved source (chunk, or the chunk an entity/relation source points at)
  belongs to the gold supporting passage's document (one passage = one document, id = title).
  recall@k = found gold passages / gold passages, averaged over questions.
* QASPER: a gold evidence paragraph (whitespace/case-normalised, FLOAT SELECTED captions skipped) is
  contained in, or contains, a retrieved chunk's text (chunks are sentence-aligned and may hold
  several paragraphs or part of a long one: we count containment either way, with at least 60%
  of the paragraph's characters when the chunk holds only part of it).
* PubMedQA: the question's own abstract (document id = PMID) is among the retrieved documents.
Two readings: the first k text units (chunks) a mode returns, and the first k numbered sources in
order (entities and relations resolved to their supporting chunk's document). Every mode numbers
its top_k text units first, so the two readings agree unless a mode returns fewer text units.
Latency: wall time of ``retrieve`` per question (no LLM: offline keywords), mean / p50 / p95.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import bm25s
import Stemmer

from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase
from scholargraph.ingest.identity import paper_id

KS = (5, 10)
MODES = ("bm25s", "lexical", "naive-dense", "naive", "local", "subgraph", "global", "hybrid", "ppr")
# row -> (query mode, query settings it runs with)
VARIANTS = {"lexical": ("naive", {"passages": "lexical"}), "naive-dense": ("naive", {"passages": "dense"})}


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


# --- datasets: (documents to insert, questions with gold) -------------------------------------


def hotpotqa(dev: Path, limit: int | None) -> tuple[list[dict], list[dict]]:
    corpus = json.loads((dev / "multihop/hotpotqa/hotpotqa_train_corpus.json").read_text())
    docs = [{"id": title, "title": title, "text": " ".join(sents)} for title, sents in corpus.items()]
    items = json.loads((dev / "multihop/hotpotqa/hotpotqa_train_q000-049.json").read_text())
    qs = [{"question": it["question"], "gold": sorted({t for t, _ in it["supporting_facts"]})} for it in items]
    return docs, qs


def twowiki(dev: Path, limit: int | None) -> tuple[list[dict], list[dict]]:
    corpus = json.loads((dev / "multihop/2wikimultihopqa/2wikimultihopqa_corpus.json").read_text())
    items = json.loads((dev / "multihop/2wikimultihopqa/2wikimultihopqa_101_q000-049.json").read_text())
    gold = {i for it in items for i in it["gold_corpus_idx"]}
    keep = list(range(len(corpus)))
    if limit and limit < len(corpus):  # every gold passage + the first distractors up to the limit
        others = [i for i in keep if i not in gold][: max(0, limit - len(gold))]
        keep = sorted(gold | set(others))
    docs = [{"id": corpus[i]["title"], "title": corpus[i]["title"], "text": corpus[i]["text"]} for i in keep]
    qs = [{"question": it["question"], "gold": list(dict.fromkeys(it["gold_titles"]))} for it in items]
    return docs, qs


def qasper(dev: Path, limit: int | None) -> tuple[list[dict], list[dict]]:
    papers = json.loads((dev / "qasper/qasper_dev_part.json").read_text())
    docs, qs = [], []
    for pid, p in papers.items():
        text = "\n\n".join(f"{s['section_name']}\n\n" + "\n\n".join(s["paragraphs"]) for s in p["full_text"])
        docs.append({"id": pid, "title": p["title"], "text": f"{p['abstract']}\n\n{text}"})
        for qa in p["qas"]:
            evidence = {e for a in qa["answers"] for e in a["answer"]["evidence"] if not e.startswith("FLOAT SELECTED")}
            if evidence:
                qs.append({"question": qa["question"], "gold": sorted(evidence), "paper": pid})
    return docs, qs


def pubmedqa(dev: Path, limit: int | None) -> tuple[list[dict], list[dict]]:
    items = json.loads((dev / "pubmedqa/pqal_dev.json").read_text())
    docs = [{"id": f"pmid{pmid}", "title": f"PMID {pmid}", "text": " ".join(it["CONTEXTS"])}
            for pmid, it in items.items()]
    qs = [{"question": it["QUESTION"], "gold": [f"pmid{pmid}"]} for pmid, it in items.items()]
    return docs, qs


DATASETS = {"hotpotqa": hotpotqa, "2wiki": twowiki, "qasper": qasper, "pubmedqa": pubmedqa}


# --- scoring ------------------------------------------------------------------------------


def found_docs(gold: list[str], doc_ids: list[str]) -> float:
    got = set(doc_ids)  # document ids are normalised titles/PMIDs (ingest.identity.paper_id)
    return sum(1 for g in gold if paper_id(g) in got) / len(gold)


def found_paragraphs(gold: list[str], texts: list[str]) -> float:
    chunks = [_norm(t) for t in texts]
    hits = 0
    for paragraph in gold:
        p = _norm(paragraph)
        if not p:
            continue
        if any(p in c or (c in p and len(c) >= 0.6 * len(p)) for c in chunks):
            hits += 1
    return hits / len(gold)


def score(dataset: str, q: dict, doc_ids: list[str], texts: list[str]) -> float:
    return found_paragraphs(q["gold"], texts) if dataset == "qasper" else found_docs(q["gold"], doc_ids)


class BM25sBaseline:
    """bm25s over (chunk id, text): English stopwords + Snowball stemmer, Lucene BM25."""

    def __init__(self, ids: list[str], texts: list[str]):
        self.ids = ids
        self.stemmer = Stemmer.Stemmer("english")
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False),
                             show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self.retriever.retrieve(tokens, k=min(k, len(self.ids)), show_progress=False)
        return [self.ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=False).stdout.strip()
    except OSError:
        return ""


def _latency(values: list[float]) -> dict:
    ms = sorted(1000 * v for v in values)
    return {"mean": round(statistics.fmean(ms), 1), "p50": round(ms[len(ms) // 2], 1),
            "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1)}


async def run_dataset(name: str, docs: list[dict], qs: list[dict], modes: list[str], profile: str,
                      keep: Path | None = None, overrides: dict | None = None) -> dict:
    """Index ``docs`` into a fresh workspace (or reuse ``keep/<name>`` when an earlier run with
    ``--keep-workspaces`` indexed it there) and score every mode on ``qs``."""
    k = max(KS)
    workdir = keep / f"{name}-{profile}" if keep else Path(tempfile.mkdtemp(prefix=f"sg-retr-{name}-"))
    marker = workdir / "eval_retrieval_indexed.json"
    try:
        kb = KnowledgeBase(workdir, extraction={"profile": profile}, progress=False)
        if marker.exists():  # indexed by an earlier run: only the queries are measured again
            indexed = json.loads(marker.read_text())
        else:
            t0 = time.perf_counter()
            report = await kb.ainsert(texts=docs)
            indexed = {"indexed": len(report.added), "index_s": round(time.perf_counter() - t0, 1)}
            if keep:
                marker.write_text(json.dumps(indexed))
        pairs = list(kb.store.iter_chunk_texts())
        chunk_rows = kb.store.get_chunks(cid for cid, _ in pairs)
        by_id = {cid: (chunk_rows[cid].document_id, text) for cid, text in pairs}
        bm25 = BM25sBaseline([cid for cid, _ in pairs], [text for _, text in pairs])
        units: dict[str, dict[int, list[float]]] = {m: {kk: [] for kk in KS} for m in modes}
        sources: dict[str, dict[int, list[float]]] = {m: {kk: [] for kk in KS} for m in modes}
        latency: dict[str, list[float]] = {m: [] for m in modes}
        defaults = {**kb.settings.query.model_dump(), **(overrides or {})}  # --set: every row runs with them
        for q in qs:
            for row in modes:
                t = time.perf_counter()
                if row == "bm25s":
                    hits = bm25.search(q["question"], k)
                    latency[row].append(time.perf_counter() - t)
                    ranked = [(by_id[h][0], by_id[h][1]) for h in hits]
                    unit_list = source_list = ranked
                else:
                    mode, overrides = VARIANTS.get(row, (row, {}))
                    for key, value in {**defaults, **overrides}.items():
                        if getattr(kb.settings.query, key) != value:
                            setattr(kb.settings.query, key, value)
                    r = await kb.aretrieve(q["question"], mode=mode, top_k=k)
                    latency[row].append(time.perf_counter() - t)
                    source_list = [(s.document_id, s.text) for s in r.sources]
                    unit_list = [(s.document_id, s.text) for s in r.sources if s.kind == "chunk"]
                for kk in KS:
                    units[row][kk].append(score(name, q, [d for d, _ in unit_list[:kk]], [x for _, x in unit_list[:kk]]))
                    sources[row][kk].append(score(name, q, [d for d, _ in source_list[:kk]],
                                                  [x for _, x in source_list[:kk]]))
        stats = kb.stats().to_json()
        await kb.workspace.aclose_clients()
        kb.close()
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)

    def mean(v: list[float]) -> float:
        return round(sum(v) / len(v), 4)

    out = {"commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "documents": len(docs),
           "questions": len(qs), **indexed, "chunks": stats["chunks"], "entities": stats["entities"], "relations": stats["relations"]}
    for kk in KS:
        out[f"recall@{kk}_text_units"] = {m: mean(units[m][kk]) for m in modes}
        out[f"recall@{kk}_sources"] = {m: mean(sources[m][kk]) for m in modes}
    out["latency_ms"] = {m: _latency(v) for m, v in latency.items()}
    return out


def merge_rows(earlier: dict | None, fresh: dict) -> dict:
    """``fresh`` with the rows (modes) of ``earlier`` it did not run (``--merge-into`` with
    ``--modes``: re-measure some modes, keep the others); per-row commit ids say which run made each."""
    if not earlier:
        return {**fresh, "row_commits": {m: fresh["commit"] for m in fresh["latency_ms"]}}
    out = dict(fresh)
    commits = dict(earlier.get("row_commits") or {m: earlier.get("commit", "") for m in earlier["latency_ms"]})
    for key, value in fresh.items():
        if isinstance(value, dict) and isinstance(earlier.get(key), dict) and key not in ("row_commits", "settings"):
            out[key] = {**earlier[key], **value}
    commits.update({m: fresh["commit"] for m in fresh["latency_ms"]})
    out["row_commits"] = commits
    return out


def targets(result: dict) -> dict:
    """The issue-15 targets, checked on this run (only for the rows that were run)."""
    checks: dict[str, bool] = {}
    for name, r in result["datasets"].items():
        for reading in ("text_units", "sources"):
            rec = r[f"recall@10_{reading}"]
            if {"hybrid", "bm25s", "naive"} <= set(rec):
                checks[f"{name}: hybrid >= max(bm25s, naive), recall@10 {reading}"] = (
                    rec["hybrid"] >= max(rec["bm25s"], rec["naive"]))
            if {"naive", "bm25s"} <= set(rec):
                checks[f"{name}: naive >= bm25s, recall@10 {reading}"] = rec["naive"] >= rec["bm25s"]
        if name == "2wiki":
            rec = r["recall@10_text_units"]
            best = max(rec.get("hybrid", 0.0), rec.get("ppr", 0.0))
            checks["2wiki: hybrid or ppr recall@10 >= 0.85"] = best >= 0.85
    return checks


def markdown(result: dict) -> str:
    lines = []
    for name, r in result["datasets"].items():
        modes = list(r["recall@10_text_units"])
        lines.append(f"\n**{name}** — {r['documents']} documents ({r['chunks']} chunks), {r['questions']} questions; "
                     f"offline graph: {r['entities']:,} entities, {r['relations']:,} relations\n")
        lines.append("| reading | " + " | ".join(modes) + " |")
        lines.append("|---|" + "---:|" * len(modes))
        for kk in KS:
            for reading, label in (("text_units", "text units"), ("sources", "sources")):
                vals = r[f"recall@{kk}_{reading}"]
                lines.append(f"| recall@{kk}, first {kk} {label} | " + " | ".join(f"{vals[m]:.3f}" for m in modes) + " |")
        lat = r["latency_ms"]
        lines.append("| latency p50 / p95 ms | " + " | ".join(f"{lat[m]['p50']:.0f} / {lat[m]['p95']:.0f}" for m in modes)
                     + " |")
    return "\n".join(lines)


def _setting(item: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``--set``: the value read as JSON (numbers, true/false), else as text."""
    key, _, raw = item.partition("=")
    try:
        return key.strip(), json.loads(raw)
    except json.JSONDecodeError:
        return key.strip(), raw


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default="qasper,2wiki,pubmedqa,hotpotqa")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--profile", default="offline")
    parser.add_argument("--max-2wiki", type=int, default=600, help="2Wiki corpus size (gold passages always kept)")
    parser.add_argument("--json-out")
    parser.add_argument("--keep-workspaces", type=Path,
                        help="keep each data set's indexed workspace here and reuse it on the next run")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a [query] setting every row runs with (repeatable), e.g. lexical_weight=2")
    parser.add_argument("--merge-into", type=Path,
                        help="an earlier result file: its data sets not run now are kept (one table for all four)")
    args = parser.parse_args()
    dev = require_dev()
    modes = args.modes.split(",")
    overrides = dict(_setting(item) for item in args.set)
    result = {"benchmark": "retrieval", "machine": machine(), "k": list(KS), "profile": args.profile,
              "max_2wiki": args.max_2wiki, "datasets": {}}
    if args.merge_into:
        result["datasets"] = json.loads(args.merge_into.read_text()).get("datasets", {})
    for name in args.datasets.split(","):
        docs, qs = DATASETS[name](dev, args.max_2wiki if name == "2wiki" else None)
        fresh = asyncio.run(run_dataset(name, docs, qs, modes, args.profile, args.keep_workspaces, overrides))
        if overrides:
            fresh["settings"] = overrides
        result["datasets"][name] = merge_rows(result["datasets"].get(name), fresh)
        r = result["datasets"][name]
        print(f"{name}: recall@10 text units {json.dumps(r['recall@10_text_units'])}", flush=True)
        if args.json_out:  # partial results survive an interrupted run
            Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n")
    result["targets"] = targets(result)
    result["markdown"] = markdown(result)
    write_result("retrieval", result, args.json_out)


if __name__ == "__main__":
    main()
