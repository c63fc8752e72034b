"""Answers written by a real local model: HotpotQA EM/F1, PubMedQA accuracy and grounding, per mode.

    .venv/bin/python -m benchmarks.bench_llm_answers [--model qwen2.5-coder-1.5b] [--hotpotqa 10]
        [--pubmedqa 10] [--modes naive,hybrid,ppr] [--no-judge] [--keep DIR] [--json-out FILE]

The retrieval corpora are indexed with the offline profile (no LLM call at indexing: the 994
HotpotQA passages and the 500 PubMedQA PQA-L dev abstracts, or with ``--corpus small`` HotpotQA's
distractor setting and the first ``--corpus-size`` abstracts); then the first N questions of each
set are asked in every mode with llama.cpp (xllamacpp) writing the answers, as a user's `ask` does
(LLM query keywords, the product's answer prompt, citation checking). Every call goes through a
recording proxy, so calls, tokens (llama.cpp's own counts) and seconds are exact.

Scores (one reader for every system: the same model, prompt and settings):
* HotpotQA: the model reduces the long cited answer to a short one (benchmarks/data/
  short_answer_prompt.txt), scored with SQuAD/HotpotQA normalisation (lower case, no punctuation,
  no articles) by exact match and token F1 (HippoRAG's metric); ``contains`` = the normalised gold
  answer appears in the normalised long answer; ``gold_in_context`` = share of gold supporting
  passages among the sources the answer was written from.
* PubMedQA: the reader maps the answer to yes/no/maybe; accuracy against ``final_decision``.
* Grounding: ``citations_resolve`` = cited numbers that resolve to a source / all numbers the model
  wrote (the product removes the others and says so); ``cites_nothing`` = share of LLM answers with
  no citation; ``supported`` = share of (sentence, cited passage) pairs the same model judges as
  supported (benchmarks/data/support_judge_prompt.txt).
2WikiMultihopQA has no gold answers in the dev data (SOURCES.md), so it is not scored here
(eval_retrieval measures its retrieval).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import string
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import DEV
from benchmarks.local_model import DEFAULT_CACHE, MODELS, Recorder, local_server, recorded_calls, recording_proxy

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "real_model_answers.json"
SHORT = "Reply with the final answer only: a few words (a name, a date, a number, or yes/no). No sentence, no citation."
DECIDE = "Does the answer say yes, no or maybe? Reply with one word: yes, no or maybe."
CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def _prompt(name: str) -> str:
    text = (HERE / "data" / name).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.startswith("#")).strip()


# -- data ---------------------------------------------------------------------------------------


def hotpotqa(limit: int, corpus_size: int | None = None) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """``corpus_size`` None: the whole 994-passage corpus; otherwise HotpotQA's distractor setting —
    the questions' own context passages (2 gold + 8 distractors each)."""
    items = json.loads((DEV / "multihop/hotpotqa/hotpotqa_train_q000-049.json").read_text(encoding="utf-8"))
    corpus = json.loads((DEV / "multihop/hotpotqa/hotpotqa_train_corpus.json").read_text(encoding="utf-8"))
    if corpus_size is not None:
        own = {title for it in items[:limit] for title, _ in it["context"]}
        corpus = {t: s for t, s in corpus.items() if t in own}
    docs = [{"id": title, "title": title, "text": " ".join(sents)} for title, sents in corpus.items()]
    questions = [{"question": it["question"], "answer": it["answer"],
                  "gold_titles": sorted({t for t, _ in it["supporting_facts"]})} for it in items[:limit]]
    return docs, questions


def pubmedqa(limit: int, corpus_size: int | None = None) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """``corpus_size`` None: all 500 PQA-L dev abstracts; otherwise the first ``corpus_size``."""
    items = json.loads((DEV / "pubmedqa/pqal_dev.json").read_text(encoding="utf-8"))
    docs = [{"id": f"pmid{pmid}", "title": f"PMID {pmid}", "text": " ".join(it["CONTEXTS"])}
            for pmid, it in list(items.items())[: corpus_size or None]]
    questions = [{"question": it["QUESTION"], "answer": it["final_decision"], "gold_titles": [f"PMID {pmid}"]}
                 for pmid, it in list(items.items())[:limit]]
    return docs, questions


# -- scoring (pure) -----------------------------------------------------------------------------


def normalise_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalise_answer(prediction) == normalise_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    pred, ref = normalise_answer(prediction).split(), normalise_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def decision(reply: str) -> str:
    words = normalise_answer(reply).split()
    return next((w for w in words if w in ("yes", "no", "maybe")), "")


def cited_sentences(text: str) -> list[tuple[str, list[int]]]:
    """(sentence without its markers, the numbers it cites) for every sentence that cites something."""
    from scholargraph.text.sentences import split_sentences

    out = []
    for sentence in split_sentences(text):
        numbers = [int(n) for group in CITATION.findall(sentence) for n in re.split(r"\s*[,;]\s*", group)]
        if numbers:
            bare = re.sub(r"\s+([.,;:!?])", r"\1", CITATION.sub("", sentence)).strip()
            out.append((bare, list(dict.fromkeys(numbers))))
    return out


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


# -- the model as reader and judge ----------------------------------------------------------------


async def _chat(client: httpx.AsyncClient, base_url: str, model: str, prompt: str, max_tokens: int) -> str:
    response = await client.post(f"{base_url}/chat/completions", json={
        "model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "max_tokens": max_tokens})
    response.raise_for_status()
    return response.json()["choices"][0]["message"].get("content") or ""


async def read_short(client: httpx.AsyncClient, base_url: str, model: str, question: str, answer: str,
                     instruction: str) -> str:
    prompt = _prompt("short_answer_prompt.txt").format(question=question, answer=answer[:4000], instruction=instruction)
    if not answer.strip():
        return ""
    lines = (await _chat(client, base_url, model, prompt, 24)).strip().splitlines()
    return lines[0] if lines else ""


async def judge_support(client: httpx.AsyncClient, base_url: str, model: str, answer: Any) -> list[bool]:
    verdicts = []
    for sentence, numbers in cited_sentences(answer.text):
        for n in numbers:
            if not 1 <= n <= len(answer.sources):
                continue
            prompt = _prompt("support_judge_prompt.txt").format(passage=answer.sources[n - 1].text[:3000],
                                                                sentence=sentence)
            verdicts.append(decision(await _chat(client, base_url, model, prompt, 3)) == "yes")
    return verdicts


# -- one set -------------------------------------------------------------------------------------


def index_offline(workdir: Path, docs: list[dict[str, str]]) -> dict[str, Any]:
    from scholargraph import KnowledgeBase

    started = time.perf_counter()
    with KnowledgeBase(workdir, extraction={"profile": "offline"}, progress=False) as kb:
        report = kb.insert(texts=docs)
        return {"documents": report.processed if hasattr(report, "processed") else len(docs),
                "seconds": round(time.perf_counter() - started, 1)}


async def ask_set(name: str, workdir: Path, questions: list[dict[str, Any]], modes: list[str], base_url: str,
                  model: str, recorder: Recorder, scratch: Path, judge: bool) -> dict[str, Any]:
    from scholargraph import KnowledgeBase

    llm = {"base_url": base_url, "model": model, "timeout": 1800.0, "retries": 1, "cache": False}
    rows: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=1800) as client:
        for mode in modes:
            recorder.path = scratch / f"calls-{name}-{mode}.jsonl"
            per_question = []
            kb = KnowledgeBase(workdir, llm=llm, progress=False)
            try:
                for q in questions:
                    started = time.perf_counter()
                    answer = await kb.aquery(q["question"], mode=mode)
                    seconds = time.perf_counter() - started
                    per_question.append(await _score(name, q, answer, seconds, client, base_url, model, judge))
                    print(json.dumps({"set": name, "mode": mode, **{k: v for k, v in per_question[-1].items()
                                                                      if k not in ("answer", "sources")}}),
                          flush=True)
                await kb.workspace.aclose_clients()
            finally:
                kb.close()
            answer_calls = recorded_calls(recorder.path)
            rows[mode] = _summary(name, per_question, answer_calls)
            (scratch / f"answers-{name}-{mode}.json").write_text(json.dumps(per_question, indent=1, ensure_ascii=False),
                                                                  encoding="utf-8")
    return rows


async def _score(name: str, q: dict[str, Any], answer: Any, seconds: float, client: httpx.AsyncClient, base_url: str,
                 model: str, judge: bool) -> dict[str, Any]:
    instruction = DECIDE if name == "pubmedqa" else SHORT
    short = await read_short(client, base_url, model, q["question"], answer.text, instruction)
    context_titles = {s.title for s in answer.context_sources}
    row: dict[str, Any] = {
        "question": q["question"], "gold": q["answer"], "short": short, "answer": answer.text,
        "seconds": round(seconds, 1), "extractive": answer.extractive,
        "cited": len(answer.cited), "removed": len(answer.removed_citations), "notes": answer.notes,
        "gold_in_context": sum(t in context_titles for t in q["gold_titles"]) / len(q["gold_titles"]),
        "sources": [s.title for s in answer.sources],
    }
    if name == "pubmedqa":
        row["correct"] = float(decision(short) == q["answer"])
    else:
        row.update(em=exact_match(short, q["answer"]), f1=round(token_f1(short, q["answer"]), 4),
                   contains=float(normalise_answer(q["answer"]) in normalise_answer(answer.text)))
    if judge and not answer.extractive:
        row["support"] = await judge_support(client, base_url, model, answer)
    return row


def _summary(name: str, rows: list[dict[str, Any]], calls: dict[str, Any]) -> dict[str, Any]:
    written = sum(r["cited"] + r["removed"] for r in rows)
    llm_rows = [r for r in rows if not r["extractive"]]
    verdicts = [v for r in rows for v in r.get("support", [])]
    out: dict[str, Any] = {"questions": len(rows)}
    if name == "pubmedqa":
        out["accuracy"] = _mean([r["correct"] for r in rows])
    else:
        out.update(em=_mean([r["em"] for r in rows]), f1=_mean([r["f1"] for r in rows]),
                   contains=_mean([r["contains"] for r in rows]))
    out.update(
        gold_in_context=_mean([r["gold_in_context"] for r in rows]),
        citations_resolve=round(sum(r["cited"] for r in rows) / written, 4) if written else None,
        cites_nothing=_mean([float(r["cited"] == 0) for r in llm_rows]),
        supported=_mean([float(v) for v in verdicts]), judged_pairs=len(verdicts),
        answer_seconds_mean=_mean([r["seconds"] for r in rows]),
        llm=calls,
    )
    return out


# -- main ----------------------------------------------------------------------------------------


async def run(args: argparse.Namespace, base_url: str, recorder: Recorder, scratch: Path) -> dict[str, Any]:
    modes = [m for m in args.modes.split(",") if m]
    sets: dict[str, Any] = {}
    for name, loader, limit in (("hotpotqa", hotpotqa, args.hotpotqa), ("pubmedqa", pubmedqa, args.pubmedqa)):
        if not limit:
            continue
        docs, questions = loader(limit, None if args.corpus == "full" else max(limit, args.corpus_size))
        workdir = scratch / f"ws-{name}"
        indexed = index_offline(workdir, docs) if not (workdir / "scholargraph.db").exists() else {"reused": True}
        sets[name] = {"corpus_documents": len(docs), "indexing": indexed,
                      "modes": await ask_set(name, workdir, questions, modes, base_url, args.model, recorder, scratch,
                                             not args.no_judge)}
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where model files are kept")
    parser.add_argument("--hotpotqa", type=int, default=10, help="HotpotQA questions (0: skip)")
    parser.add_argument("--pubmedqa", type=int, default=10, help="PubMedQA questions (0: skip)")
    parser.add_argument("--modes", default="naive,hybrid,ppr")
    parser.add_argument("--corpus", choices=("full", "small"), default="full",
                        help="full: the whole retrieval corpora; small: HotpotQA's distractor setting (the "
                             "questions' own 10 passages) and the first --corpus-size PubMedQA abstracts")
    parser.add_argument("--corpus-size", type=int, default=100)
    parser.add_argument("--nice", type=int, default=0, help="llama.cpp's nice value (negative: ahead of other work)")
    parser.add_argument("--context", type=int, default=8192, help="llama.cpp context per slot")
    parser.add_argument("--no-judge", action="store_true", help="skip the judged support of cited sentences")
    parser.add_argument("--json-out", type=Path, default=RESULTS)
    parser.add_argument("--keep", type=Path, help="keep workspaces, answers and call logs in this folder")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"model": MODELS[args.model].description, "server": "llama.cpp (xllamacpp), 1 slot",
                              "context_per_slot": args.context, "cpus": os.cpu_count(), "indexing_profile": "offline",
                              "corpus": args.corpus if args.corpus == "full" else f"small ({args.corpus_size})",
                              "load_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="bench-llm-answers-") as tmp:
        scratch = args.keep.resolve() if args.keep else Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        with local_server(args.model, args.cache, slots=1, context_per_slot=args.context,
                          log_path=scratch / "llama.log", nice=args.nice) as server:
            recorder = Recorder(server.base_url, scratch / "calls.jsonl")
            with recording_proxy(recorder, args.model, args.context, embeddings=False) as proxy:
                result["sets"] = asyncio.run(run(args, proxy.base_url, recorder, scratch))
    result["load_after"] = round(os.getloadavg()[0], 2)
    text = json.dumps(result, indent=2)
    print(text)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
