"""What `communities.hybrid_reports` adds to hybrid retrieval: for corpus-level questions, community
reports widen the context to more papers; specific questions are left as they are.

    .venv/bin/python -m benchmarks.bench_hybrid_reports [--workdir WS] [--reports 3]

Indexes the dev ASKG papers and PMC JATS full texts offline into WS (default
benchmarks/.work/ws_hybrid_reports, reused when present), computes the communities, then runs
the questions below in hybrid mode without and with reports in the same process: distinct papers
reachable from the context (chunks' papers + reports' passages), sources, context tokens and
retrieval seconds. No LLM (offline keywords): a retrieval-side measure, not answer quality.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchmarks.common import REPO, machine, require_dev, write_result
from scholargraph import KnowledgeBase

BROAD = [
    "What are the main research directions in these papers and how do they connect?",
    "Give an overview of the main themes across the collection.",
    "What are the key findings across these papers?",
    "What trends in the literature do these papers show?",
    "Summarise the research landscape of this corpus.",
]
SPECIFIC = [
    "What does the curcuminoid submicron particle do in Alzheimer's disease mouse models?",
    "How does J2RM map JSON data to RDF?",
    "How are graphene nanofibers used in sensors?",
]


def papers(retrieval) -> set[str]:
    out = set()
    for s in retrieval.sources:
        if s.kind == "community":
            out.update(p.document_id for p in s.supporting if p.document_id)
        elif s.document_id:
            out.add(s.document_id)
    return out


def measure(kb: KnowledgeBase, questions: list[str]) -> dict:
    rows = []
    for q in questions:
        t = time.perf_counter()
        r = kb.retrieve(q, mode="hybrid")
        rows.append({"papers": len(papers(r)), "sources": len(r.sources),
                     "reports": sum(1 for s in r.sources if s.kind == "community"),
                     "context_tokens": kb.tokenizer.count(r.context), "seconds": time.perf_counter() - t})
    return {k: round(statistics.mean(row[k] for row in rows), 3) for k in rows[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default=str(REPO / "benchmarks" / ".work" / "ws_hybrid_reports"))
    ap.add_argument("--reports", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    dev = require_dev()
    ws = Path(args.workdir)
    with KnowledgeBase(ws, progress=None) as kb:
        if not kb.store.count("documents"):
            kb.insert([dev / "pdfs" / "jats", dev / "askg" / "papers"])
        kb.update_communities()
        kb.retrieve(BROAD[0], mode="hybrid")  # warm: model loaded, graph in memory
    result = {"benchmark": "hybrid_reports", "machine": machine(),
              "note": "shared 2-core machine, other helpers' tests running: loaded-machine timings", "workspace": str(ws)}
    for reports in (0, args.reports):
        with KnowledgeBase(ws, communities={"hybrid_reports": reports}) as kb:
            result[f"reports_{reports}"] = {"broad": measure(kb, BROAD), "specific": measure(kb, SPECIFIC)}
    write_result("hybrid_reports", result, args.out)


if __name__ == "__main__":
    main()
