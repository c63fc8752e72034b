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
* ASKG QA (paper2lkg §5.3, ``--askg N``): the six ASKG papers indexed from their sectioned JSON;
  questions taken in turn from the five papers that have some. ``similarity`` = cosine (MiniLM)
  between the answer (citation markers removed) and the reference answer, next to paper2lkg's own
  baseline answers (``askg/baseline_answers``, built with GPT and with LLaMA) scored the same way;
  ``judge`` = the same model compares the answer with paper2lkg's GPT answer against the reference
  (benchmarks/data/askg_judge_prompt.txt), three trials with the order alternated; a win or loss
  only when the judge picks the same answer in both orders (a judge picking by position ties).
2WikiMultihopQA has no gold answers in the dev data (SOURCES.md), so it is not scored here
(eval_retrieval measures its retrieval).

``--systems sg,lightrag``: LightRAG 1.5.7 (its own venv, benchmarks/lightrag_env.py) indexes the same
corpus through the same llama.cpp server and recording proxy (its own LLM extraction, gleaning 0;
MiniLM embeddings served by the proxy) and answers the same questions in ``--lightrag-modes`` with its
own query path (benchmarks/lightrag_runner.py). Its answers are scored by the same reader, metrics
and judge. Its citations are the ``[n]`` anywhere in the answer, its References list included,
resolved against the references LightRAG gave the model; support is judged on the answer's body
sentences against the chunks of the cited reference.
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.bench_llm import lightrag_run
from benchmarks.common import DEV
from benchmarks.local_model import DEFAULT_CACHE, MODELS, Recorder, local_server, recorded_calls, recording_proxy
from scholargraph.store.sqlite.store import DB_NAME

HERE = Path(__file__).resolve().parent
LIGHTRAG_CONTEXT_TOKENS = 6000  # LightRAG's query context (30,000 by default) scaled to fit an 8,192-token server
RESULTS = HERE / "results" / "real_model_answers.json"
SHORT = "Reply with the final answer only: a few words (a name, a date, a number, or yes/no). No sentence, no citation."
DECIDE = "Does the answer say yes, no or maybe? Reply with one word: yes, no or maybe."
CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
REFERENCES_HEADING = re.compile(r"^\s*(?:#+\s*|\*\*)?references\b", re.IGNORECASE | re.MULTILINE)
SYSTEMS = ("sg", "lightrag")
PAIRWISE = re.compile(r"\b(?:A|B)\b|\b(?i:tie)\b")
JUDGE_TRIALS = 3
GRADES = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}


def _prompt(name: str) -> str:
    text = (HERE / "data" / name).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.startswith("#")).strip()


# -- data ---------------------------------------------------------------------------------------


def hotpotqa(limit: int, corpus_size: int | None = None, first: int = 0,
             distractors: int = 8) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """``corpus_size`` None: the whole 994-passage corpus; otherwise HotpotQA's distractor setting —
    the questions' own context passages (2 gold + up to ``distractors`` of its 8 distractors, in the
    order HotpotQA lists them). ``first``: questions before it are left out."""
    items = json.loads((DEV / "multihop/hotpotqa/hotpotqa_train_q000-049.json").read_text(encoding="utf-8"))[first:]
    corpus = json.loads((DEV / "multihop/hotpotqa/hotpotqa_train_corpus.json").read_text(encoding="utf-8"))
    if corpus_size is not None:
        own = {title for it in items[:limit] for title in own_passages(it, distractors)}
        corpus = {t: s for t, s in corpus.items() if t in own}
    docs = [{"id": title, "title": title, "text": " ".join(sents)} for title, sents in corpus.items()]
    questions = [{"question": it["question"], "answer": it["answer"],
                  "gold_titles": sorted({t for t, _ in it["supporting_facts"]})} for it in items[:limit]]
    return docs, questions


def own_passages(item: dict[str, Any], distractors: int) -> list[str]:
    """A HotpotQA question's gold passage titles and the first ``distractors`` of its others."""
    gold = {t for t, _ in item["supporting_facts"]}
    others = [t for t, _ in item["context"] if t not in gold]
    return sorted(gold) + others[:distractors]


def pubmedqa(limit: int, corpus_size: int | None = None,
             first: int = 0) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """``corpus_size`` None: all 500 PQA-L dev abstracts; otherwise the ``corpus_size`` from the
    first question asked (``first``: questions before it are left out, and so are their abstracts)."""
    items = list(json.loads((DEV / "pubmedqa/pqal_dev.json").read_text(encoding="utf-8")).items())
    asked = items[first:]
    docs = [{"id": f"pmid{pmid}", "title": f"PMID {pmid}", "text": " ".join(it["CONTEXTS"])}
            for pmid, it in (items if corpus_size is None else asked[:corpus_size])]
    questions = [{"question": it["QUESTION"], "answer": it["final_decision"], "gold_titles": [f"PMID {pmid}"]}
                 for pmid, it in asked[:limit]]
    return docs, questions


def askg(limit: int, corpus_size: int | None = None, first: int = 0,
         paper: int | None = None) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """ASKG QA: the first question of each of the five papers that have some, then the second ...
    (QA file i belongs to ``kg_ASKG_i.json``), or ``paper``'s questions alone, in their order.
    ``corpus_size`` None: all six papers, read from their sectioned JSON; otherwise the asked
    questions' papers only. Each question carries paper2lkg's baseline answers to it."""
    from benchmarks.eval_askg_qa import baselines, load_qa
    from scholargraph.ingest.chunking import layout
    from scholargraph.ingest.registry import load_file

    numbered, seen = [], Counter[int]()  # (its rank in its paper, paper, question and answer)
    for qa in load_qa(DEV):
        if paper is not None and qa["paper"] != paper:
            continue
        numbered.append((seen[qa["paper"]], qa["paper"], qa))
        seen[qa["paper"]] += 1
    asked = sorted(numbered, key=lambda t: t[:2])[first:first + limit]
    answers_of = {name: b["answers"] for name, b in baselines(DEV).items()}  # paper2lkg_gpt, paper2lkg_llama
    papers = {int(p.stem.rsplit("_", 1)[1]): p for p in sorted((DEV / "askg" / "papers").glob("kg_ASKG_*.json"))}
    wanted = sorted(papers) if corpus_size is None else sorted({i for _, i, _ in asked})
    docs, title_of = [], {}
    for i in wanted:
        doc = load_file(papers[i])[0]
        title_of[i] = doc.title
        docs.append({"id": papers[i].stem, "title": doc.title, "text": layout(doc)[0], "path": str(papers[i])})
    # decoy: the next question's reference (another paper's), a wrong answer the grades must tell apart
    questions = [{"question": qa["question"], "answer": qa["answer"], "gold_titles": [title_of[i]],
                  "baselines": {name: a[qa["question"]] for name, a in answers_of.items() if qa["question"] in a},
                  "decoy": asked[(n + 1) % len(asked)][2]["answer"] if len(asked) > 1 else ""}
                 for n, (_, i, qa) in enumerate(asked)]
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


def pairwise_verdict(reply: str) -> str:
    """The judge's first A, B or tie ("" when it wrote none of them)."""
    found = PAIRWISE.search(reply)
    if found is None:
        return ""
    return "tie" if found.group(0).lower() == "tie" else found.group(0)


def grade_value(reply: str) -> float | None:
    """The judge's first correct / partial / wrong as 1 / 0.5 / 0 (None when it wrote none)."""
    return next((GRADES[w] for w in normalise_answer(reply).split() if w in GRADES), None)


def majority(verdicts: list[str]) -> str:
    """win, loss or tie for ours from the trials' verdicts (ours / theirs / tie / "" unreadable; ours
    is A in the even trials, B in the odd ones). A side wins only when the judge picks it in both
    orders and more often than the other: a judge that picks by position (A every time, as the 1.5B
    did on ASKG) gives a tie, not a win for whoever was A more often."""
    ours, theirs = verdicts.count("ours"), verdicts.count("theirs")
    both_orders = {side for side in ("ours", "theirs") if side in verdicts[0::2] and side in verdicts[1::2]}
    if ours > theirs and "ours" in both_orders:
        return "win"
    return "loss" if theirs > ours and "theirs" in both_orders else "tie"


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


# -- the model as reader and judge ----------------------------------------------------------------


@dataclass
class Reader:
    """The model as reader and judge, the same for every system; ``embed`` (MiniLM) scores ASKG's
    answer similarity."""

    client: httpx.AsyncClient
    base_url: str
    model: str
    judge: bool
    embed: Callable[[list[str]], Awaitable[np.ndarray]] | None = None
    grades: dict[tuple[str, str], float | None] = field(default_factory=dict)  # (question, answer) -> grade


async def _chat(client: httpx.AsyncClient, base_url: str, model: str, prompt: str, max_tokens: int) -> str:
    response = await client.post(f"{base_url}/chat/completions", json={
        "model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "max_tokens": max_tokens})
    response.raise_for_status()
    return response.json()["choices"][0]["message"].get("content") or ""


async def read_short(reader: Reader, question: str, answer: str, instruction: str) -> str:
    prompt = _prompt("short_answer_prompt.txt").format(question=question, answer=answer[:4000], instruction=instruction)
    if not answer.strip():
        return ""
    lines = (await _chat(reader.client, reader.base_url, reader.model, prompt, 24)).strip().splitlines()
    return lines[0] if lines else ""


async def judge_pair(reader: Reader, q: dict[str, Any], ours: str, theirs: str) -> dict[str, Any]:
    """Which of two answers the judge finds closer to the reference: three trials, ours as A in the
    first and third, as B in the second."""
    verdicts = []
    for trial in range(JUDGE_TRIALS):
        first, second = (ours, theirs) if trial % 2 == 0 else (theirs, ours)
        prompt = _prompt("askg_judge_prompt.txt").format(question=q["question"], reference=q["answer"],
                                                         first=first[:3000], second=second[:3000])
        picked = pairwise_verdict(await _chat(reader.client, reader.base_url, reader.model, prompt, 4))
        names = {"A": "ours", "B": "theirs"} if trial % 2 == 0 else {"A": "theirs", "B": "ours"}
        verdicts.append(names.get(picked, picked))
    return {"trials": verdicts, "outcome": majority(verdicts)}


async def grade(reader: Reader, q: dict[str, Any], answer: str) -> float | None:
    """The judge's grade of one answer against the reference (each answer graded once per question)."""
    key = (q["question"], answer)
    if key not in reader.grades:
        prompt = _prompt("askg_grade_prompt.txt").format(question=q["question"], reference=q["answer"],
                                                         answer=answer[:3000])
        reader.grades[key] = grade_value(await _chat(reader.client, reader.base_url, reader.model, prompt, 4))
    return reader.grades[key]


async def askg_quality(reader: Reader, q: dict[str, Any], text: str) -> dict[str, Any]:
    """Cosine to the reference answer (next to paper2lkg's answers, scored alike), the judge's grade
    of each (and of two controls: the reference itself, another question's reference) and the
    pairwise judgement against paper2lkg's GPT answer."""
    answer = CITATION.sub("", text).strip()
    out: dict[str, Any] = {}
    if reader.embed is not None:
        named = {"answer": answer, **q["baselines"]}
        vectors = await reader.embed([q["answer"], *named.values()])
        similarity = {name: round(float(v @ vectors[0]), 4) for name, v in zip(named, vectors[1:], strict=True)}
        out["similarity"] = similarity.pop("answer")
        out["baseline_similarity"] = similarity
    if reader.judge and answer:
        out["grade"] = await grade(reader, q, answer)
        out["baseline_grade"] = {name: await grade(reader, q, text) for name, text in q["baselines"].items()}
        controls = {"reference": q["answer"], "another_reference": q.get("decoy", "")}
        out["control_grade"] = {name: await grade(reader, q, text) for name, text in controls.items() if text}
    theirs = q["baselines"].get("paper2lkg_gpt")
    if reader.judge and answer and theirs:
        out["judge_vs_paper2lkg_gpt"] = await judge_pair(reader, q, answer, theirs)
    return out


async def judge_support(reader: Reader, text: str, passages: dict[int, str]) -> list[bool]:
    """The judge's verdict on every (sentence, cited passage) pair of ``text``; ``passages``: number -> text."""
    verdicts = []
    for sentence, numbers in cited_sentences(text):
        for n in numbers:
            if n not in passages:
                continue
            prompt = _prompt("support_judge_prompt.txt").format(passage=passages[n][:3000], sentence=sentence)
            verdicts.append(decision(await _chat(reader.client, reader.base_url, reader.model, prompt, 3)) == "yes")
    return verdicts


# -- one set -------------------------------------------------------------------------------------


def index_offline(workdir: Path, docs: list[dict[str, str]]) -> dict[str, Any]:
    from scholargraph import KnowledgeBase

    started = time.perf_counter()
    with KnowledgeBase(workdir, extraction={"profile": "offline"}, progress=False) as kb:
        # ASKG's papers are read from their sectioned JSON, as a user gives them
        report = kb.insert([Path(d["path"]) for d in docs]) if all("path" in d for d in docs) else kb.insert(texts=docs)
        return {"documents": report.processed if hasattr(report, "processed") else len(docs),
                "seconds": round(time.perf_counter() - started, 1)}


async def ask_set(name: str, workdir: Path, questions: list[dict[str, Any]], modes: list[str], base_url: str,
                  model: str, recorder: Recorder, scratch: Path, judge: bool,
                  embed: Callable[[list[str]], Awaitable[np.ndarray]] | None = None) -> dict[str, Any]:
    from scholargraph import KnowledgeBase

    llm = {"base_url": base_url, "model": model, "timeout": 1800.0, "retries": 1, "cache": False}
    rows: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=1800) as client:
        reader = Reader(client, base_url, model, judge, embed)
        for mode in modes:
            recorder.path = scratch / f"calls-{name}-{mode}.jsonl"
            per_question = []
            kb = KnowledgeBase(workdir, llm=llm, progress=False)
            try:
                for q in questions:
                    started = time.perf_counter()
                    answer = await kb.aquery(q["question"], mode=mode)
                    seconds = time.perf_counter() - started
                    per_question.append(await _score(name, q, answer, seconds, reader))
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


async def _quality(name: str, q: dict[str, Any], text: str, reader: Reader) -> dict[str, Any]:
    """The reader's short answer and its scores (the same for every system)."""
    if name == "askg":  # long reference answers: similarity and the pairwise judge, no short answer
        return await askg_quality(reader, q, text)
    instruction = DECIDE if name == "pubmedqa" else SHORT
    short = await read_short(reader, q["question"], text, instruction)
    if name == "pubmedqa":
        return {"short": short, "correct": float(decision(short) == q["answer"])}
    return {"short": short, "em": exact_match(short, q["answer"]), "f1": round(token_f1(short, q["answer"]), 4),
            "contains": float(normalise_answer(q["answer"]) in normalise_answer(text))}


def _gold_in_context(q: dict[str, Any], context_titles: set[str]) -> float:
    return sum(t in context_titles for t in q["gold_titles"]) / len(q["gold_titles"])


async def _score(name: str, q: dict[str, Any], answer: Any, seconds: float, reader: Reader) -> dict[str, Any]:
    row: dict[str, Any] = {
        "question": q["question"], "gold": q["answer"], **await _quality(name, q, answer.text, reader),
        "answer": answer.text, "seconds": round(seconds, 1), "extractive": answer.extractive,
        "cited": len(answer.cited), "removed": len(answer.removed_citations), "notes": answer.notes,
        # the model cited nothing and the product matched sentences to sources (query/grounding.py)
        "attributed": any("not cited by the model" in n for n in answer.notes),
        "gold_in_context": _gold_in_context(q, {s.title for s in answer.context_sources}),
        "sources": [s.title for s in answer.sources],
    }
    if reader.judge and not answer.extractive:
        passages = {n: source.text for n, source in enumerate(answer.sources, start=1)}
        row["support"] = await judge_support(reader, answer.text, passages)
    return row


# -- LightRAG on the same server -------------------------------------------------------------------


def lightrag_files(docs: list[dict[str, str]], folder: Path) -> dict[str, str]:
    """One text file per document (its title, a blank line, its text); file name -> title."""
    folder.mkdir(parents=True, exist_ok=True)
    titles = {}
    for i, doc in enumerate(docs):
        name = f"{i:03d}_{re.sub(r'[^A-Za-z0-9]+', '_', doc['title']).strip('_')[:60]}.txt"
        (folder / name).write_text(f"{doc['title']}\n\n{doc['text']}", encoding="utf-8")
        titles[name] = doc["title"]
    return titles


def lightrag_body(text: str) -> str:
    """The answer without its References section."""
    found = REFERENCES_HEADING.search(text)
    return text[: found.start()] if found else text


def cited_numbers(text: str) -> list[int]:
    return list(dict.fromkeys(int(n) for group in CITATION.findall(text) for n in re.split(r"\s*[,;]\s*", group)))


def lightrag_citations(row: dict[str, Any]) -> tuple[list[int], list[int]]:
    """(numbers written that name a reference LightRAG gave the model, numbers that name none)."""
    known = {int(r["reference_id"]) for r in row["references"] if str(r.get("reference_id", "")).isdigit()}
    written = cited_numbers(row["answer"])
    return [n for n in written if n in known], [n for n in written if n not in known]


def lightrag_passages(row: dict[str, Any]) -> dict[int, str]:
    """Reference number -> the text of the chunks given to the model under it."""
    out: dict[int, str] = {}
    for chunk in row["chunks"]:
        if str(chunk.get("reference_id", "")).isdigit():
            n = int(chunk["reference_id"])
            out[n] = (out.get(n, "") + "\n" + (chunk.get("content") or "")).strip()
    return out


async def _score_lightrag(name: str, q: dict[str, Any], row: dict[str, Any], titles: dict[str, str],
                          reader: Reader) -> dict[str, Any]:
    cited, removed = lightrag_citations(row)
    references = {str(r.get("reference_id")): r.get("file_path", "") for r in row["references"]}
    out: dict[str, Any] = {
        "question": q["question"], "gold": q["answer"],
        # ASKG compares the answer itself with the reference: its References list is left out
        **await _quality(name, q, lightrag_body(row["answer"]) if name == "askg" else row["answer"], reader),
        "answer": row["answer"], "seconds": row["seconds"], "extractive": not row["llm_generated"],
        "cited": len(cited), "removed": len(removed),
        "notes": [] if row["status"] == "success" else [str(row.get("message"))],
        "gold_in_context": _gold_in_context(q, {titles.get(c.get("file_path") or "", "") for c in row["chunks"]}),
        "sources": [titles.get(references.get(str(n), ""), "") for n in cited],
        "context_chunks": len(row["chunks"]), "entities": row["entities"], "relationships": row["relationships"],
    }
    if reader.judge and row["llm_generated"]:
        out["support"] = await judge_support(reader, lightrag_body(row["answer"]), lightrag_passages(row))
    return out


def lightrag_index(name: str, docs: list[dict[str, str]], base_url: str, model: str, recorder: Recorder,
                   scratch: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """LightRAG indexes the corpus (its LLM extraction, gleaning 0) unless ``scratch`` already holds it."""
    folder = scratch / f"lightrag-{name}"
    titles = lightrag_files(docs, folder / "texts")
    done = folder / "index.json"
    if done.exists():
        return {**json.loads(done.read_text(encoding="utf-8")), "reused": True}, titles
    recorder.path = scratch / f"calls-{name}-lightrag-index.jsonl"
    started = time.perf_counter()
    resume = ["--reuse"] if (folder / "lr").exists() else []  # an interrupted run keeps the documents it finished
    summary = lightrag_run(base_url, model, folder / "lr", ["--gleaning", "0", *resume,
                                                            *sorted(str(p) for p in (folder / "texts").glob("*.txt"))])
    calls = recorded_calls(recorder.path)
    summary.update(wall_s=round(time.perf_counter() - started, 1), llm=calls,
                   per_doc={k: round(v / len(docs), 1) for k, v in calls.items()})
    done.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary, titles


async def lightrag_ask_set(name: str, questions: list[dict[str, Any]], modes: list[str], titles: dict[str, str],
                           base_url: str, model: str, recorder: Recorder, scratch: Path, judge: bool,
                           save: Any, embed: Callable[[list[str]], Awaitable[np.ndarray]] | None = None) -> dict[str, Any]:
    folder = scratch / f"lightrag-{name}"
    rows: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=1800) as client:
        reader = Reader(client, base_url, model, judge, embed)
        for mode in modes:
            recorder.path = scratch / f"calls-{name}-lightrag-{mode}.jsonl"
            recorder.path.unlink(missing_ok=True)
            asked, answers = folder / "questions.json", folder / f"answers-{mode}.jsonl"
            asked.write_text(json.dumps([q["question"] for q in questions]), encoding="utf-8")
            answers.unlink(missing_ok=True)
            try:
                lightrag_run(base_url, model, folder / "lr", ["--reuse", "--questions", str(asked), "--mode", mode,
                                                              "--answers-out", str(answers),
                                                              "--max-total-tokens", str(LIGHTRAG_CONTEXT_TOKENS)])
            except RuntimeError as exc:  # the answers written before the failure still count
                rows[mode] = {"error": str(exc)[-1500:]}
            written = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()] \
                if answers.exists() else []
            per_question = []
            for q, row in zip(questions, written, strict=False):
                per_question.append(await _score_lightrag(name, q, row, titles, reader))
                print(json.dumps({"set": name, "system": "lightrag", "mode": mode,
                                  **{k: v for k, v in per_question[-1].items() if k not in ("answer", "sources")}}),
                      flush=True)
            if per_question:
                rows[mode] = {**rows.get(mode, {}), **_summary(name, per_question, recorded_calls(recorder.path))}
            (scratch / f"answers-{name}-lightrag-{mode}.json").write_text(
                json.dumps(per_question, indent=1, ensure_ascii=False), encoding="utf-8")
            save()
    return rows


def askg_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean similarity and grade of the answers and of paper2lkg's on the same questions, the controls'
    mean grades, the pairwise judge's outcomes."""
    baselines = sorted({b for r in rows for b in r.get("baseline_similarity", {})})
    outcomes = Counter(r["judge_vs_paper2lkg_gpt"]["outcome"] for r in rows if "judge_vs_paper2lkg_gpt" in r)
    def mean_of(field_name: str, name: str) -> float | None:
        return _mean([g for r in rows if (g := r.get(field_name, {}).get(name)) is not None])

    controls = sorted({c for r in rows for c in r.get("control_grade", {})})
    return {"similarity": _mean([r["similarity"] for r in rows if r.get("similarity") is not None]),
            "baseline_similarity": {b: _mean([r["baseline_similarity"][b] for r in rows
                                              if b in r.get("baseline_similarity", {})]) for b in baselines},
            "grade": _mean([r["grade"] for r in rows if r.get("grade") is not None]),
            "baseline_grade": {b: mean_of("baseline_grade", b) for b in baselines},
            "control_grade": {c: mean_of("control_grade", c) for c in controls},
            "judge_vs_paper2lkg_gpt": {k: outcomes.get(k, 0) for k in ("win", "tie", "loss")}}


def _summary(name: str, rows: list[dict[str, Any]], calls: dict[str, Any]) -> dict[str, Any]:
    written = sum(r["cited"] + r["removed"] for r in rows)
    llm_rows = [r for r in rows if not r["extractive"]]
    verdicts = [v for r in rows for v in r.get("support", [])]
    out: dict[str, Any] = {"questions": len(rows)}
    if name == "pubmedqa":
        out["accuracy"] = _mean([r["correct"] for r in rows])
    elif name == "askg":
        out.update(askg_summary(rows))
    else:
        out.update(em=_mean([r["em"] for r in rows]), f1=_mean([r["f1"] for r in rows]),
                   contains=_mean([r["contains"] for r in rows]))
    out.update(
        gold_in_context=_mean([r["gold_in_context"] for r in rows]),
        citations_resolve=round(sum(r["cited"] for r in rows) / written, 4) if written else None,
        cites_nothing=_mean([float(r["cited"] == 0) for r in llm_rows]),
        cited_by_matching=_mean([float(r.get("attributed", False)) for r in llm_rows]),
        supported=_mean([float(v) for v in verdicts]), judged_pairs=len(verdicts),
        answer_seconds_mean=_mean([r["seconds"] for r in rows]),
        llm=calls,
    )
    return out


# -- main ----------------------------------------------------------------------------------------


def interleave(systems: list[str], sg_modes: list[str], lightrag_modes: list[str]) -> list[tuple[str, str]]:
    """(system, mode) in the order asked: scholargraph's first mode, LightRAG's first, and so on."""
    queues = [[("sg", m) for m in sg_modes] if "sg" in systems else [],
              [("lightrag", m) for m in lightrag_modes] if "lightrag" in systems else []]
    return [pair for i in range(max(map(len, queues))) for queue in queues if i < len(queue) for pair in [queue[i]]]


async def run(args: argparse.Namespace, base_url: str, recorder: Recorder, scratch: Path,
              result: dict[str, Any]) -> dict[str, Any]:
    modes = [m for m in args.modes.split(",") if m]
    systems = [s for s in args.systems.split(",") if s]
    sets: dict[str, Any] = result.setdefault("sets", {})

    def save() -> None:  # what is measured so far survives an interrupted run
        (scratch / "partial.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")

    embed = None
    for name in [n for n in args.sets.split(",") if n]:
        loader, limit = {"hotpotqa": (hotpotqa, args.hotpotqa), "pubmedqa": (pubmedqa, args.pubmedqa),
                         "askg": (askg, args.askg)}[name]
        if not limit:
            continue
        size = None if args.corpus == "full" else max(limit, args.corpus_size)
        docs, questions = (hotpotqa(limit, size, args.first, args.distractors) if name == "hotpotqa"
                           else askg(limit, size, args.first, args.askg_paper) if name == "askg"
                           else loader(limit, size, args.first))
        here = sets[name] = {"corpus_documents": len(docs), "questions": len(questions)}
        if name == "askg" and embed is None:  # MiniLM, the model both systems embed with
            from scholargraph.config import EmbeddingSettings
            from scholargraph.llm.embeddings import make_embedder

            embed = make_embedder(EmbeddingSettings()).embed
        titles: dict[str, str] = {}
        if "lightrag" in systems:  # the long part first: LightRAG's LLM extraction of the corpus
            indexing, titles = lightrag_index(name, docs, base_url, args.model, recorder, scratch)
            here["lightrag"] = {"indexing": indexing, "modes": {}}
            save()
        workdir = scratch / f"ws-{name}"
        if "sg" in systems:
            reuse = (workdir / DB_NAME).exists()  # a kept workspace (--keep) is not indexed twice
            indexed = {"reused": True} if reuse else index_offline(workdir, docs)
            here.update(indexing=indexed, modes={})
        # one mode of each system in turn, so an interrupted run still has both systems side by side
        for system, mode in interleave(systems, modes, [m for m in args.lightrag_modes.split(",") if m]):
            if system == "sg":
                here["modes"].update(await ask_set(name, workdir, questions, [mode], base_url, args.model, recorder,
                                                   scratch, not args.no_judge, embed))
            else:
                here["lightrag"]["modes"].update(await lightrag_ask_set(
                    name, questions, [mode], titles, base_url, args.model, recorder, scratch, not args.no_judge, save,
                    embed))
            save()
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where model files are kept")
    parser.add_argument("--hotpotqa", type=int, default=10, help="HotpotQA questions (0: skip)")
    parser.add_argument("--pubmedqa", type=int, default=10, help="PubMedQA questions (0: skip)")
    parser.add_argument("--modes", default="naive,hybrid,ppr", help="scholargraph's modes")
    parser.add_argument("--systems", default="sg", help="sg, lightrag or both (sg,lightrag)")
    parser.add_argument("--lightrag-modes", default="naive,mix,hybrid", help="LightRAG's modes")
    parser.add_argument("--askg", type=int, default=10, help="ASKG QA questions, in turn from its five papers (0: skip)")
    parser.add_argument("--askg-paper", type=int, choices=range(1, 6), metavar="1-5",
                        help="ask only this ASKG paper's questions (with --corpus small: index it alone)")
    parser.add_argument("--sets", default="hotpotqa,pubmedqa,askg", help="which sets, in this order")
    parser.add_argument("--first", type=int, default=0,
                        help="leave out the questions before this one in each set (a later sample of the same set)")
    parser.add_argument("--corpus", choices=("full", "small"), default="full",
                        help="full: the whole retrieval corpora; small: HotpotQA's distractor setting (the "
                             "questions' own 10 passages), the first --corpus-size PubMedQA abstracts and the "
                             "asked questions' ASKG papers")
    parser.add_argument("--corpus-size", type=int, default=100)
    parser.add_argument("--distractors", type=int, default=8, choices=range(9), metavar="0-8",
                        help="small corpus: how many of each HotpotQA question's 8 distractor passages to keep")
    parser.add_argument("--nice", type=int, default=0, help="llama.cpp's nice value (negative: ahead of other work)")
    parser.add_argument("--context", type=int, default=8192, help="llama.cpp context per slot")
    parser.add_argument("--no-judge", action="store_true",
                        help="skip the judged support of cited sentences and ASKG's pairwise judge")
    parser.add_argument("--json-out", type=Path, default=RESULTS)
    parser.add_argument("--keep", type=Path, help="keep workspaces, answers and call logs in this folder")
    args = parser.parse_args(argv)
    unknown = {s for s in args.systems.split(",") if s} - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
    result: dict[str, Any] = {"model": MODELS[args.model].description, "server": "llama.cpp (xllamacpp), 1 slot",
                              "context_per_slot": args.context, "cpus": os.cpu_count(), "indexing_profile": "offline",
                              "corpus": args.corpus if args.corpus == "full" else f"small ({args.corpus_size})",
                              "first_question": args.first, "hotpotqa_distractors": args.distractors, "systems": args.systems, "nice": args.nice,
                              "lightrag_query_context_tokens": LIGHTRAG_CONTEXT_TOKENS,
                              "load_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="bench-llm-answers-") as tmp:
        scratch = args.keep.resolve() if args.keep else Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        with local_server(args.model, args.cache, slots=1, context_per_slot=args.context,
                          log_path=scratch / "llama.log", nice=args.nice) as server:
            recorder = Recorder(server.base_url, scratch / "calls.jsonl")
            with recording_proxy(recorder, args.model, args.context,
                                 embeddings="lightrag" in args.systems) as proxy:
                asyncio.run(run(args, proxy.base_url, recorder, scratch, result))
    result["load_after"] = round(os.getloadavg()[0], 2)
    text = json.dumps(result, indent=2)
    print(text)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
