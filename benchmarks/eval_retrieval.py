"""Retrieval quality: recall@k of gold evidence for every query mode, with naive and BM25 baselines
run in the same script, on HotpotQA, 2WikiMultihopQA, QASPER and PubMedQA dev data.

    .venv/bin/python -m benchmarks.eval_retrieval [--datasets hotpotqa,2wiki,qasper,pubmedqa]
        [--modes naive,local,subgraph,global,hybrid] [--k 10] [--profile offline] [--max-2wiki 1500]

Matching rules (a gold item is found when):
* HotpotQA / 2Wiki: a retrieved source (chunk, or the chunk an entity/relation source points at)
  belongs to the gold supporting passage's document (one passage = one document, id = title).
  recall@k = found gold passages / gold passages, averaged over questions.
* QASPER: a gold evidence paragraph (whitespace/case-normalised, FLOAT SELECTED captions skipped) is
  contained in, or contains, a retrieved chunk's text (chunks are sentence-aligned and may hold
  several paragraphs or part of a long one: we count containment either way, with at least 60%
  of the paragraph's characters when the chunk holds only part of it).
* PubMedQA: the question's own abstract (document id = PMID) is among the retrieved documents.
Two readings for graph modes: the first k numbered sources of the context in order (entities and
relations come first, each resolved to its supporting chunk's document), and the first k text
units (chunks) the mode selected. BM25 ranks the same chunks the engine indexed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.bm25 import BM25
from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase
from scholargraph.ingest.identity import paper_id


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


async def run_dataset(name: str, docs: list[dict], qs: list[dict], modes: list[str], k: int, profile: str) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix=f"sg-retr-{name}-"))
    try:
        kb = KnowledgeBase(workdir, extraction={"profile": profile}, progress=False)
        t0 = time.perf_counter()
        report = await kb.ainsert(texts=docs)
        index_s = time.perf_counter() - t0
        texts = list(kb.store.iter_chunk_texts())  # in storage order (BM25 breaks ties by it)
        docs_of = kb.store.get_chunks(cid for cid, _ in texts)
        chunks = [(cid, docs_of[cid].document_id, text) for cid, text in texts]
        bm25 = BM25([c[0] for c in chunks], [c[2] for c in chunks])
        by_id = {c[0]: (c[1], c[2]) for c in chunks}
        rows: dict[str, list[float]] = {m: [] for m in ["bm25", *modes]}
        units: dict[str, list[float]] = {m: [] for m in modes}
        latency: dict[str, list[float]] = {m: [] for m in modes}
        for q in qs:
            hits = bm25.search(q["question"], k)
            rows["bm25"].append(score(name, q, [by_id[h][0] for h, _ in hits], [by_id[h][1] for h, _ in hits]))
            for mode in modes:
                # "hybrid-thesis" = hybrid exactly as thesis §3.4 (subgraph + global, no direct passages)
                kb.settings.query.hybrid_passages = mode != "hybrid-thesis"
                t = time.perf_counter()
                r = await kb.aretrieve(q["question"], mode=mode.replace("-thesis", ""), top_k=k)
                latency[mode].append(time.perf_counter() - t)
                srcs = r.sources[:k]
                rows[mode].append(score(name, q, [s.document_id for s in srcs], [s.text for s in srcs]))
                texts = [s for s in r.sources if s.kind == "chunk"][:k]
                units[mode].append(score(name, q, [s.document_id for s in texts], [s.text for s in texts]))
        stats = kb.stats()
        await kb.aclose_clients()
        kb.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "documents": len(docs), "questions": len(qs), "indexed": len(report.added), "index_s": round(index_s, 1),
        "chunks": stats["chunks"], "entities": stats["entities"], "relations": stats["relations"],
        f"recall@{k}": {m: round(sum(v) / len(v), 4) for m, v in rows.items()},
        f"recall@{k}_text_units": {"bm25": round(sum(rows["bm25"]) / len(rows["bm25"]), 4),
                                   **{m: round(sum(v) / len(v), 4) for m, v in units.items()}},
        "retrieval_ms_mean": {m: round(1000 * sum(v) / len(v), 1) for m, v in latency.items()},
    }


def markdown(result: dict) -> str:
    k = result["k"]
    lines = []
    for name, r in result["datasets"].items():
        modes = list(r[f"recall@{k}"])
        lines.append(f"\n**{name}** ({r['documents']} documents, {r['questions']} questions; "
                     f"{r['entities']} entities, {r['relations']} relations)\n")
        lines.append("| " + " | ".join(["metric", *modes]) + " |")
        lines.append("|" + "---|" * (len(modes) + 1))
        lines.append("| " + " | ".join([f"recall@{k}, first {k} sources", *(f"{r[f'recall@{k}'][m]:.3f}" for m in modes)]) + " |")
        lines.append("| " + " | ".join([f"recall@{k}, first {k} text units",
                                        *(f"{r[f'recall@{k}_text_units'][m]:.3f}" for m in modes)]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default="hotpotqa,2wiki,qasper,pubmedqa")
    parser.add_argument("--modes", default="naive,local,subgraph,global,hybrid-thesis,hybrid")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--profile", default="offline")
    parser.add_argument("--max-2wiki", type=int, default=1500, help="2Wiki corpus size (gold passages always kept)")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    dev = require_dev()
    modes = args.modes.split(",")
    result = {"benchmark": "retrieval", "machine": machine(), "k": args.k, "profile": args.profile, "datasets": {}}
    for name in args.datasets.split(","):
        docs, qs = DATASETS[name](dev, args.max_2wiki if name == "2wiki" else None)
        result["datasets"][name] = asyncio.run(run_dataset(name, docs, qs, modes, args.k, args.profile))
        print(f"{name}: {json.dumps(result['datasets'][name][f'recall@{args.k}'])} "
              f"text units: {json.dumps(result['datasets'][name][f'recall@{args.k}_text_units'])}", flush=True)
    result["markdown"] = markdown(result)
    write_result("retrieval", result, args.json_out)


if __name__ == "__main__":
    main()
