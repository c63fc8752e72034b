"""QA against gold answers on the ASKG papers (paper2lkg §5.3 "evaluation via application").

    .venv/bin/python -m benchmarks.eval_askg_qa [--modes naive,hybrid] [--llm-url URL --llm-model M]

The 6 ASKG papers are indexed (offline profile, or academic when an LLM is given); each of the 50
gold question/answer pairs (QA file i belongs to paper i) is asked in every mode. Reported per mode:
* paper_precision@k: share of the first k retrieved sources that come from the question's paper;
* support: cosine (our embedder) between the gold answer and the best-matching retrieved chunk —
  how well the retrieved text contains what the answer needs;
* answer_similarity: cosine between our answer and the gold answer (extractive without an LLM,
  labelled as such), next to the paper2lkg baseline answers shipped with the data
  (qa_actual_i_LKG_g/l: graph-RAG over local KGs built with GPT / LLaMA), scored with the SAME
  embedder, and their own reported similarity_score for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase


def load_qa(dev: Path) -> list[dict]:
    rows = []
    for i in range(1, 6):
        for qa in json.loads((dev / f"askg/qa/qa_expected_{i}.json").read_text()):
            rows.append({"paper": i, "question": qa["question"], "answer": qa["answer"]})
    return rows


def baselines(dev: Path) -> dict[str, dict]:
    out = {}
    for tag in ("g", "l"):
        answers, reported = {}, []
        for i in range(1, 6):
            for row in json.loads((dev / f"askg/baseline_answers/qa_actual_{i}_LKG_{tag}.json").read_text()):
                answers[row["question"]] = row["LLM_answer"]
                reported.append(float(row["similarity_score"]))
        out[f"paper2lkg_{'gpt' if tag == 'g' else 'llama'}"] = {"answers": answers, "reported_mean": float(np.mean(reported))}
    return out


async def run(args) -> dict:
    dev = require_dev()
    qa = load_qa(dev)
    workdir = Path(tempfile.mkdtemp(prefix="sg-askg-"))
    llm = {"base_url": args.llm_url, "model": args.llm_model} if args.llm_url else {}
    kb = KnowledgeBase(workdir, llm=llm, extraction={"profile": "academic" if llm else "offline"}, progress=False)
    try:
        papers = sorted((dev / "askg" / "papers").glob("kg_ASKG_*.json"))
        report = await kb.ainsert(papers)
        by_path = {Path(r.source_path).name: r.id for r in kb.status()}
        doc_of_paper = {int(p.stem.rsplit("_", 1)[1]): by_path[p.name] for p in papers}
        embed = kb.embedder.embed
        gold_vecs = await embed([q["answer"] for q in qa])
        result: dict = {"questions": len(qa), "profile": report.profile, "llm": bool(llm), "modes": {}}
        for mode in args.modes.split(","):
            precision, support, sims = [], [], []
            for q, gv in zip(qa, gold_vecs, strict=True):
                answer = await kb.aquery(q["question"], mode=mode, top_k=args.k)
                srcs = answer.context_sources[: args.k]  # the context, not only the cited ones
                precision.append(sum(s.document_id == doc_of_paper[q["paper"]] for s in srcs) / max(1, len(srcs)))
                chunk_texts = [s.text for s in srcs if s.kind == "chunk"] or [s.text for s in srcs]
                if chunk_texts:
                    support.append(float(np.max(await embed(chunk_texts) @ gv)))
                text = answer.text.split("\n", 1)[1] if answer.extractive and "\n" in answer.text else answer.text
                sims.append(float((await embed([text]))[0] @ gv))
            result["modes"][mode] = {
                f"paper_precision@{args.k}": round(float(np.mean(precision)), 4),
                "support": round(float(np.mean(support)), 4),
                "answer_similarity": round(float(np.mean(sims)), 4),
                "answer_kind": "llm" if llm else "extractive",
            }
        result["baselines"] = {}
        for name, b in baselines(dev).items():
            vecs = await embed([b["answers"].get(q["question"], "") for q in qa])
            result["baselines"][name] = {"answer_similarity": round(float(np.mean(np.sum(vecs * gold_vecs, axis=1))), 4),
                                         "their_reported_similarity": round(b["reported_mean"], 4)}
        await kb.workspace.aclose_clients()
        return result
    finally:
        kb.close()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", default="naive,local,subgraph,global,hybrid")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--llm-url")
    parser.add_argument("--llm-model")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    result.update({"benchmark": "askg_qa", "machine": machine(), "k": args.k})
    write_result("askg_qa", result, args.json_out)


if __name__ == "__main__":
    main()
