"""Entity precision/recall of the offline extraction profile on SciERC dev and BioRED dev.

    .venv/bin/python -m benchmarks.eval_offline_ner [--json-out benchmarks/results/offline_ner.json]

Each document is one chunk given to ``OfflineExtractor.extract_document``. The extractor outputs
entity *names* (plus acronym aliases), not offsets, so every predicted surface (name and each
alias) is located in the document text (case-insensitive, hyphen/space-insensitive, whole words,
kept when ``normalise_name`` of the match equals that of the surface) to get its spans.

Units counted: unique ``(document, normalised surface)`` pairs, for predictions and for gold.

Matching rules
* ``exact``: a predicted pair is correct when a gold mention of the same document has the same
  ``normalise_name`` key (case-, hyphen-, quote- and last-word-plural-insensitive); a gold pair is
  found when a predicted pair has its key.
* ``exact_strict``: the same with only case folding and whitespace collapsing.
* ``partial``: a predicted pair is correct when any of its located occurrences shares at least
  one character (hence one token) with any gold span of the document; a gold pair is found when
  any of its spans overlaps any predicted occurrence.
* ``typed_*``: the same, restricted to pairs whose (mapped) types agree; per gold type.
* ``*_typed_predictions_only``: untyped rules, counting only predictions the heuristics gave a
  specific type (not the fallback "Concept"/"OtherScientificTerm").

SciERC (JSON lines, token offsets over the concatenated document, end inclusive): the text is the
tokens joined by single spaces. BioRED (PubTator): the text is title + " " + abstract and the
entity lines give character offsets into it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import DEV
from scholargraph.profiles.offline.extractor import OfflineExtractor, guess_type
from scholargraph.text.names import normalise_name

DATA = DEV
SCIERC = DATA / "scierc" / "dev.json"
BIORED = DATA / "biored" / "Dev.PubTator"

# Types given to the extractor and how its guesses map onto gold labels.
SCIERC_TYPES = ["Task", "Method", "Metric", "Material", "OtherScientificTerm"]
BIORED_TYPES = [
    "GeneOrGeneProduct",
    "DiseaseOrPhenotypicFeature",
    "ChemicalEntity",
    "OrganismTaxon",
    "SequenceVariant",
    "CellLine",
    "Concept",
]

MATCHING_RULES = {
    "unit": "unique (document, normalised surface) pairs, for predictions and gold alike",
    "exact": "normalise_name keys equal (casefold, hyphens/dashes/quotes unified, surrounding punctuation "
    "stripped, last word plural-folded), within the same document",
    "exact_strict": "casefolded, whitespace-collapsed surfaces equal, within the same document",
    "partial": "a located occurrence of the predicted surface overlaps a gold span by >= 1 character "
    "(hence >= 1 token); gold found when one of its spans overlaps a predicted occurrence",
    "prediction_spans": "the extractor outputs names, so each name and alias is located in the text "
    "(case-insensitive, whole words, hyphen/space-insensitive, same normalise_name key)",
    "typed": "same rules, and the predicted type (mapped to the gold label set) equals the gold type",
}


# SciERC keeps Penn Treebank bracket escapes; restore the characters the extractor would see.
_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}


@dataclass
class GoldDoc:
    doc_id: str
    text: str
    mentions: list[tuple[int, int, str, str]] = field(default_factory=list)  # (start, end, surface, type)


def load_scierc(path: Path = SCIERC) -> list[GoldDoc]:
    docs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        tokens = [_PTB.get(t, t) for sent in rec["sentences"] for t in sent]
        offsets = []
        pos = 0
        for tok in tokens:
            offsets.append((pos, pos + len(tok)))
            pos += len(tok) + 1
        text = " ".join(tokens)
        doc = GoldDoc(rec["doc_key"], text)
        for sent_ner in rec["ner"]:
            for start, end, label in sent_ner:
                a, b = offsets[start][0], offsets[end][1]
                doc.mentions.append((a, b, text[a:b], label))
        docs.append(doc)
    return docs


def load_biored(path: Path = BIORED) -> list[GoldDoc]:
    docs: list[GoldDoc] = []
    title: dict[str, str] = {}
    abstract: dict[str, str] = {}
    mentions: dict[str, list[tuple[int, int, str, str]]] = {}
    order: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if "|t|" in line[:20]:
            pmid, _, rest = line.split("|", 2)
            title[pmid] = rest
            order.append(pmid)
        elif "|a|" in line[:20]:
            pmid, _, rest = line.split("|", 2)
            abstract[pmid] = rest
        else:
            parts = line.split("\t")
            if len(parts) >= 6 and parts[1].isdigit() and parts[2].isdigit():
                mentions.setdefault(parts[0], []).append((int(parts[1]), int(parts[2]), parts[3], parts[4]))
    for pmid in order:
        text = title[pmid] + " " + abstract.get(pmid, "")
        doc = GoldDoc(pmid, text, mentions.get(pmid, []))
        for a, b, surface, _label in doc.mentions:
            if text[a:b] != surface:
                raise ValueError(f"BioRED offsets do not match in {pmid}: {text[a:b]!r} != {surface!r}")
        docs.append(doc)
    return docs


# ---------------------------------------------------------------------------------------------


_SEP = r"[\s\-\u2010\u2011\u2012\u2013\u2014]+"


def locate(text: str, surface: str) -> list[tuple[int, int]]:
    """Character spans of ``surface`` in ``text`` (see module docstring)."""
    key = normalise_name(surface)
    words = [w for w in re.split(_SEP, surface.strip()) if w]
    if not key or not words:
        return []
    last = words[-1]
    if last.isalpha():  # allow inflected forms of the last word; normalise_name decides below
        stem = last[:-3] if len(last) > 5 else last[:-1] if len(last) > 3 else last
        tail = re.escape(stem) + r"\w{0,4}"
    else:
        tail = re.escape(last) + r"s?"
    pattern = _SEP.join(re.escape(w) for w in words[:-1])
    pattern = (pattern + _SEP if pattern else "") + tail
    spans = []
    for m in re.finditer(r"(?<![\w.])" + pattern + r"(?!\w)", text, flags=re.IGNORECASE):
        if normalise_name(m.group()) == key:
            spans.append((m.start(), m.end()))
    return spans


def _overlaps(spans_a: list[tuple[int, int]], spans_b: list[tuple[int, int]]) -> bool:
    return any(a < d and c < b for a, b in spans_a for c, d in spans_b)


def _prf(tp_p: int, n_pred: int, tp_r: int, n_gold: int) -> dict:
    p = tp_p / n_pred if n_pred else 0.0
    r = tp_r / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(f, 4),
        "pred": n_pred,
        "gold": n_gold,
        "tp_pred": tp_p,
        "tp_gold": tp_r,
    }


def evaluate(
    docs: list[GoldDoc], entity_types: list[str], type_map: dict[str, str], skip_gold_types: tuple[str, ...] = ()
) -> dict:
    extractor = OfflineExtractor(entity_types)
    fallback = type_map.get(guess_type("", entity_types), guess_type("", entity_types))
    started = time.perf_counter()
    extractions = [extractor.extract_document([(d.doc_id, d.text)]) for d in docs]
    elapsed = time.perf_counter() - started
    predicted = [[(surface, ent.type) for ent in ex.entities for surface in [ent.name, *ent.aliases]]
                 for ex in extractions]
    result = score_surfaces(docs, predicted, type_map, fallback, skip_gold_types)
    result["extract_seconds"] = round(elapsed, 3)
    result["relations"] = sum(len(ex.relations) for ex in extractions)
    result["keywords"] = sum(len(ex.keywords) for ex in extractions)
    return result


def score_surfaces(docs: list[GoldDoc], predicted: list[list[tuple[str, str]]], type_map: dict[str, str],
                   fallback: str = "", skip_gold_types: tuple[str, ...] = ()) -> dict:
    """Entity P/R/F1 of predicted ``(surface, type)`` pairs per document (same order as ``docs``)
    under every matching rule of :data:`MATCHING_RULES`; any extractor's output can be scored."""
    pred_items: list[dict] = []  # one per (doc, key)
    gold_items: list[dict] = []
    pred_type_counts: Counter = Counter()
    for doc, surfaces in zip(docs, predicted, strict=True):
        # Gold items.
        gold: dict[str, dict] = {}
        for a, b, surface, label in doc.mentions:
            key = normalise_name(surface)
            item = gold.setdefault(
                key, {"doc": doc.doc_id, "key": key, "strict": set(), "spans": [], "types": Counter()}
            )
            item["strict"].add(" ".join(surface.casefold().split()))
            item["spans"].append((a, b))
            item["types"][label] += 1
        for item in gold.values():
            item["type"] = min(item["types"], key=lambda t: (-item["types"][t], t))
        # Predicted items: every name and alias.
        pred: dict[str, dict] = {}
        for surface, etype in surfaces:
            key = normalise_name(surface)
            if not key or key in pred:
                continue
            pred[key] = {
                "doc": doc.doc_id,
                "key": key,
                "strict": " ".join(surface.casefold().split()),
                "spans": locate(doc.text, surface),
                "type": type_map.get(etype, etype),
            }
            pred_type_counts[pred[key]["type"]] += 1
        all_gold_spans = [s for g in gold.values() for s in g["spans"]]
        all_pred_spans = [s for p in pred.values() for s in p["spans"]]
        gold_strict = {s for g in gold.values() for s in g["strict"]}
        pred_strict = {p["strict"] for p in pred.values()}
        for p in pred.values():
            p["specific"] = p["type"] != fallback
            p["exact"] = p["key"] in gold
            p["exact_strict"] = p["strict"] in gold_strict
            p["partial"] = _overlaps(p["spans"], all_gold_spans)
            p["typed_exact"] = p["exact"] and gold[p["key"]]["type"] == p["type"]
            p["typed_partial"] = _overlaps(
                p["spans"], [s for g in gold.values() if g["type"] == p["type"] for s in g["spans"]]
            )
            pred_items.append(p)
        spec_pred = {k: p for k, p in pred.items() if p["type"] != fallback}
        spec_spans = [s for p in spec_pred.values() for s in p["spans"]]
        for g in gold.values():
            g["exact_specific"] = g["key"] in spec_pred
            g["partial_specific"] = _overlaps(g["spans"], spec_spans)
            g["exact"] = g["key"] in pred
            g["exact_strict"] = bool(g["strict"] & pred_strict)
            g["partial"] = _overlaps(g["spans"], all_pred_spans)
            g["typed_exact"] = g["exact"] and pred[g["key"]]["type"] == g["type"]
            g["typed_partial"] = _overlaps(
                g["spans"], [s for p in pred.values() if p["type"] == g["type"] for s in p["spans"]]
            )
            gold_items.append(g)

    specific = [p for p in pred_items if p["specific"]]
    for p in specific:
        p["exact_specific"], p["partial_specific"] = p["exact"], p["partial"]

    def score(rule: str, preds: list[dict], golds: list[dict]) -> dict:
        return _prf(sum(p[rule] for p in preds), len(preds), sum(g[rule] for g in golds), len(golds))

    result = {
        "documents": len(docs),
        "gold_mentions": sum(len(d.mentions) for d in docs),
        "gold_items": len(gold_items),
        "pred_items": len(pred_items),
        "pred_items_without_located_span": sum(1 for p in pred_items if not p["spans"]),
        "exact": score("exact", pred_items, gold_items),
        "exact_strict": score("exact_strict", pred_items, gold_items),
        "partial": score("partial", pred_items, gold_items),
        "typed_exact": score("typed_exact", pred_items, gold_items),
        "typed_partial": score("typed_partial", pred_items, gold_items),
        # Only predictions the heuristics typed into one of the gold labels (not the fallback type).
        "exact_typed_predictions_only": score("exact_specific", specific, gold_items),
        "partial_typed_predictions_only": score("partial_specific", specific, gold_items),
        "pred_type_counts": dict(sorted(pred_type_counts.items())),
        "per_gold_type": {},
    }
    if skip_gold_types:
        kept = [g for g in gold_items if g["type"] not in skip_gold_types]
        result[f"recall_without_{'_'.join(sorted(skip_gold_types))}"] = {
            "gold_items": len(kept),
            "exact": round(sum(g["exact"] for g in kept) / len(kept), 4) if kept else 0.0,
            "partial": round(sum(g["partial"] for g in kept) / len(kept), 4) if kept else 0.0,
        }
    for label in sorted({g["type"] for g in gold_items}):
        golds = [g for g in gold_items if g["type"] == label]
        preds = [p for p in pred_items if p["type"] == label]
        result["per_gold_type"][label] = {
            "gold_items": len(golds),
            "recall_any_type_exact": round(sum(g["exact"] for g in golds) / len(golds), 4),
            "recall_any_type_partial": round(sum(g["partial"] for g in golds) / len(golds), 4),
            "typed_exact": score("typed_exact", preds, golds),
            "typed_partial": score("typed_partial", preds, golds),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json-out", type=Path, default=None, help="also write the JSON summary here")
    parser.add_argument("--scierc", type=Path, default=SCIERC)
    parser.add_argument("--biored", type=Path, default=BIORED)
    args = parser.parse_args(argv)
    summary: dict = {"matching_rules": MATCHING_RULES}
    if args.scierc.exists():
        summary["scierc_dev"] = evaluate(
            load_scierc(args.scierc),
            SCIERC_TYPES,
            {},  # the extractor already emits SciERC labels ("Generic" is never predicted)
            skip_gold_types=("Generic",),  # pronouns and "method"/"approach": filtered on purpose
        )
    else:
        print(f"skipping SciERC: {args.scierc} not found", file=sys.stderr)
    if args.biored.exists():
        summary["biored_dev"] = evaluate(load_biored(args.biored), BIORED_TYPES, {})
    else:
        print(f"skipping BioRED: {args.biored} not found", file=sys.stderr)
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
