"""The localkg profile (paper2lkg, seed 004) on the 6 ASKG papers through the scripted server:
LLM calls and tokens per paper and per stage next to the academic profile's on the same papers,
the dry-run estimate against what was spent, what each local KG holds, the Turtle export of one
paper (parsed back with rdflib; provenance of every statement and mention), and the seed 004 §5
evaluations (KG-to-text, RAG QA on the ASKG gold questions). SCRIPTED: answers are canned (derived
from the prompts), so the evaluation scores measure the plumbing, not a model's quality; token
counts of prompts are real.

    .venv/bin/python -m benchmarks.bench_localkg          (~2 min; loads the MiniLM model for scoring)
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import rdflib
from rdflib import RDF
from rdflib.namespace import PROV

from benchmarks.common import machine, require_dev, write_result
from scholargraph import KnowledgeBase
from scholargraph.config import EmbeddingSettings
from scholargraph.evaluation.kg2text import kg_to_text
from scholargraph.evaluation.kgqa import kg_qa, read_qa_pairs
from scholargraph.export.rdf import SG
from scholargraph.ingest.tokenizer import load_tokenizer
from scholargraph.llm.embeddings import make_embedder
from scholargraph.models import usage_to_json
from scholargraph.profiles.localkg.document import read_paper
from scholargraph.testing.llm_server import ScriptedLLMServer
from tests.support.canned import default_rules

STAGES = ("lkg_mentions", "lkg_linking", "lkg_relations", "lkg_global", "lkg_taxonomy")


def _kb(server, workdir: Path, profile: str) -> KnowledgeBase:
    return KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model"},
                         embeddings={"provider": "openai", "base_url": server.base_url, "model": "emb",
                                     "dimension": 384},
                         extraction={"profile": profile}, communities={"auto_update": False}, progress=False)


def _per_paper(kb: KnowledgeBase) -> dict[str, dict]:
    out = {}
    titles = {r.id: r.title for r in kb.store.list_documents()}
    for doc, used in kb.cost_by_document().items():
        usage = usage_to_json(used)
        stages = {p: {k: u[k] for k in ("calls", "prompt_tokens", "completion_tokens")}
                  for p, u in usage["by_purpose"].items()}
        out[doc] = {"title": titles.get(doc, ""), "calls": usage["llm_calls"], "total_tokens": usage["total_tokens"],
                    "prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
                    "stages": stages}
    return out


def _contents(kb: KnowledgeBase, doc: str) -> dict:
    mentions = kb.store.mentions_of(doc)
    records = [r for page in kb.store.iter_relation_pages([doc])
               for r in kb.store.relation_provenance([x.id for x in page]) if r.document_id == doc]
    levels = Counter(r.level for r in records)
    written = {r.keywords[0] for r in records if r.keywords and r.level != "taxonomy"}
    resolved = {r.types[0] for r in records if r.types and r.level != "taxonomy"}
    entities = {m.entity_id for m in mentions}
    return {"sentences": len(kb.store.sentences_of(doc)), "mentions": len(mentions),
            "mentions_by_category": dict(Counter(m.category for m in mentions)),
            "mentioned_entities": len(entities), "described_mentions": sum(1 for m in mentions if m.description),
            "relation_records_by_level": dict(levels), "broader": levels.get("taxonomy", 0),
            "predicates_written": len(written), "predicates_resolved": len(resolved)}


def _seed_stage1_calls(kb: KnowledgeBase, doc: str) -> int:
    """Algorithm 1 as written: 3 targets x (sections + paragraphs + sentences)."""
    paper = read_paper(kb.store.load_document(doc), kb.store.chunks_of(doc))
    return 3 * (len(paper.sections) + sum(len(s.paragraphs) for s in paper.sections) + len(paper.sentences))


def _turtle_check(kb: KnowledgeBase, doc: str) -> dict:
    out = io.StringIO()
    report = kb.export("turtle", out, doc_ids=[doc]).to_json()
    g = rdflib.Graph().parse(data=out.getvalue(), format="turtle")
    stored = {s.text for s in kb.store.sentences_of(doc)}
    sentences = {s for s in g.subjects(RDF.type, SG.Sentence) if str(g.value(s, RDF.value)) in stored}
    statements = list(g.subjects(RDF.type, RDF.Statement))
    mentions = list(g.subjects(RDF.type, SG.Mention))
    return {"triples_written": report["triples"], "triples_parsed": len(g), "statements": len(statements),
            "statements_with_stored_sentence": sum(1 for s in statements if g.value(s, PROV.wasDerivedFrom) in sentences),
            "mentions": len(mentions),
            "mentions_quoted_from_stored_sentence": sum(1 for m in mentions
                                                        if g.value(m, PROV.wasQuotedFrom) in sentences),
            "bytes": len(out.getvalue().encode())}


def main() -> None:
    dev = require_dev()
    count = load_tokenizer().count
    papers = sorted((dev / "askg" / "papers").glob("*.json"))
    result: dict = {"benchmark": "localkg", "machine": machine(), "scripted": True,
                    "token_counter": "MiniLM WordPiece (offline)", "papers": len(papers)}
    root = Path(tempfile.mkdtemp(prefix="sg-localkg-"))
    try:
        with ScriptedLLMServer(rules=default_rules(), count_tokens=count) as server:
            with _kb(server, root / "academic", "academic") as kb:
                assert kb.insert(papers).ok
                academic = _per_paper(kb)
            with _kb(server, root / "localkg", "localkg") as kb:
                estimate = kb.insert(papers, dry_run=True)
                report = kb.insert(papers)
                assert report.ok, report.failed
                localkg = _per_paper(kb)
                docs = {Path(r.source_path).stem: r.id for r in kb.store.list_documents()}
                contents = {d: _contents(kb, d) for d in docs.values()}
                seed_calls = {d: _seed_stage1_calls(kb, d) for d in docs.values()}
                turtle = _turtle_check(kb, docs["kg_ASKG_1"])
                scorer = make_embedder(EmbeddingSettings())  # MiniLM scores the texts (not the scripted vectors)
                k2t = kb.run(kg_to_text(kb, embed=scorer.embed))
                qa = {}
                for i in range(1, 6):
                    pairs = read_qa_pairs(dev / "askg" / "qa" / f"qa_expected_{i}.json")
                    qa[f"kg_ASKG_{i}"] = kb.run(kg_qa(kb, docs[f"kg_ASKG_{i}"], pairs, score_embed=scorer.embed))
                asyncio.run(scorer.aclose())
                estimated = {p: {"calls": u.calls, "prompt_tokens": u.prompt_tokens,
                                 "completion_tokens": u.completion_tokens} for p, u in estimate.usage.items()}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    names = {v: k for k, v in docs.items()}
    rows = []
    for doc, cost in sorted(localkg.items(), key=lambda kv: names[kv[0]]):
        acad = next((a for a in academic.values() if a["title"] == cost["title"]), {})
        stage_calls = {s: cost["stages"].get(s, {}).get("calls", 0) for s in STAGES}
        rows.append({"paper": names[doc], "sentences": contents[doc]["sentences"], **cost,
                     "stage_calls": stage_calls, "seed_stage1_calls": seed_calls[doc],
                     "academic_calls": acad.get("calls"), "academic_total_tokens": acad.get("total_tokens"),
                     "contents": contents[doc]})
    n = len(rows)
    spent = {s: {k: sum(r["stages"].get(s, {}).get(k, 0) for r in rows) for k in
                 ("calls", "prompt_tokens", "completion_tokens")} for s in STAGES}
    result.update({
        "per_paper": rows,
        "per_stage_total": spent,
        "estimate_vs_spent": {s: {"estimated": estimated.get(s), "spent": spent[s]} for s in STAGES},
        "mean_per_paper": {"localkg_calls": round(sum(r["calls"] for r in rows) / n, 1),
                           "localkg_total_tokens": round(sum(r["total_tokens"] for r in rows) / n),
                           "academic_calls": round(sum(r["academic_calls"] for r in rows) / n, 1),
                           "academic_total_tokens": round(sum(r["academic_total_tokens"] for r in rows) / n)},
        "stage1_calls_vs_seed_algorithm": round(sum(r["stage_calls"]["lkg_mentions"] for r in rows)
                                                / sum(r["seed_stage1_calls"] for r in rows), 3),
        "turtle_kg_ASKG_1": turtle,
        "kg2text": {"similarity": k2t["similarity"], "rouge1_recall": k2t["rouge1_recall"],
                    "rouge1_f1": k2t["rouge1_f1"],
                    "papers": [{"paper": names[p["document"]], "facts": p["facts"], "similarity": p["similarity"],
                                "rouge1": p["rouge1"]} for p in k2t["papers"]]},
        "kgqa": {name: {k: r[k] for k in ("questions", "kg", "text", "answered_from_facts")} for name, r in qa.items()},
    })
    write_result("localkg", result)
    print(json.dumps(result["mean_per_paper"]))


if __name__ == "__main__":
    main()
