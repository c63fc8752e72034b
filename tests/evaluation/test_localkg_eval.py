"""Seed 004 §5: `eval kg2text` (a paper's local KG written back as text, compared with the paper
per section and as a whole) and `eval kgqa` (questions answered from the local KG vs from the
text), against the scripted server."""

from __future__ import annotations

import json

from fixtures.localkg_papers import localkg_kb, write_paper
from support.canned_localkg import localkg_rules

from scholargraph.cli import main
from scholargraph.evaluation.kg2text import kg_to_text
from scholargraph.evaluation.kgfacts import overlap
from scholargraph.evaluation.kgqa import kg_qa, read_qa_pairs


def test_overlap_is_rouge1_on_content_words():
    assert overlap("MEL extracts the metadata.", "The metadata is extracted by MEL") == {
        "recall": 0.6667, "precision": 0.6667, "f1": 0.6667}
    assert overlap("", "x")["recall"] == 0.0


def test_kg_to_text_and_kg_qa(llm_server, tmp_path, monkeypatch):
    server = llm_server(rules=localkg_rules())
    with localkg_kb(server, tmp_path / "ws") as kb:
        kb.insert([write_paper(tmp_path / "papers")])
        doc = kb.store.list_documents()[0].id
        result = kb.run(kg_to_text(kb))
        [paper] = result["papers"]
        assert [s["section"] for s in paper["sections"]] == ["Abstract", "Methods", "Conclusion"]
        methods = paper["sections"][1]
        assert methods["facts"] > 0 and "Metadata Extractor and Loader" in methods["generated"]
        # the scripted server's embeddings are random per text: only the range is meaningful here
        assert -1 <= methods["similarity"] <= 1 and 0 < methods["rouge1"]["recall"] <= 1
        assert -1 <= paper["similarity"] <= 1 and result["similarity"]["mean"] == paper["similarity"]
        assert server.stats.by_kind["kg2text"]["calls"] == sum(1 for s in paper["sections"] if s["facts"])

        qa = tmp_path / "qa.json"
        qa.write_text(json.dumps([{"question": "What does MEL use for the extraction?", "answer": "Apache Tika."},
                                  {"question": "Who maintains MEL?", "answer": "The ASKG team."}]))
        scored = kb.run(kg_qa(kb, doc, read_qa_pairs(qa)))
        assert scored["questions"] == 2 and not scored["generated_questions"]
        first = scored["per_question"][0]
        assert first["matched"] and first["facts"] > 0 and "MEL" in first["entities"]
        assert -1 <= first["kg_score"] <= 1 and -1 <= first["text_score"] <= 1
        taught = kb.run(kg_qa(kb, doc, None, count=3))  # the Teacher writes the questions
        assert taught["generated_questions"] and 1 <= taught["questions"] <= 3
        assert kb.cost_by_document()[doc]["kgqa"].calls > 0

    monkeypatch.setenv("SCHOLARGRAPH_EMBEDDINGS__PROVIDER", "openai")
    monkeypatch.setenv("SCHOLARGRAPH_EMBEDDINGS__BASE_URL", server.base_url)
    monkeypatch.setenv("SCHOLARGRAPH_EMBEDDINGS__MODEL", "emb")
    monkeypatch.setenv("SCHOLARGRAPH_EMBEDDINGS__DIMENSION", "384")
    llm = ["--llm-url", server.base_url, "--llm-model", "scripted-model", "-w", str(tmp_path / "ws")]
    assert main(["eval", "kg2text", *llm, "--out", str(tmp_path / "k.json"), "-q"]) == 0
    assert json.loads((tmp_path / "k.json").read_text())["papers"][0]["sections"]
    assert main(["eval", "kgqa", *llm, "--questions", str(qa), "--json"]) == 0


def test_kg_to_text_over_the_whole_paper_goes_from_the_most_relevant_triple_down(llm_server, tmp_path):
    """seed 004 §5.2: all the paper's triples, by the relevance the local KG stored (stage 4), in
    batches, concatenated into one synthesised document."""
    from scholargraph.evaluation.kgfacts import load_paper_kg, stored_relevance

    server = llm_server(rules=localkg_rules())
    with localkg_kb(server, tmp_path / "ws") as kb:
        kb.insert([write_paper(tmp_path / "papers")])
        doc = kb.store.list_documents()[0].id
        local = kb.store.local_graph_of(doc)
        scored = {e.entity_id: e.relevance for e in local.entities if e.relevance is not None}
        assert len(set(scored.values())) > 3  # stage 4's relevance is stored with the local KG
        sent_before = len(server.stats.requests)
        result = kb.run(kg_to_text(kb, order="paper", batch=5))
        kg = load_paper_kg(kb.store, doc)
        relevance = stored_relevance(kb.store, kg)
    [paper] = result["papers"]
    assert result["order"] == "paper" and paper["sections"] == [] and paper["generated"]
    lines = list(dict.fromkeys(f.line() for f in sorted(
        kg.facts, key=lambda f: (-(relevance[f.subject_id] + relevance[f.object_id]), f.line()))))
    assert paper["facts"] == len(lines) > 10 and {kg.facts[0].section, kg.facts[-1].section} - {""}
    sent = [r["messages"][1]["content"] for r in server.stats.requests[sent_before:]
            if "Write the passage" in r["messages"][0]["content"]]
    batches = {tuple(text.split("Facts:\n", 1)[1].strip().splitlines()) for text in sent}
    assert batches == {tuple(lines[i:i + 5]) for i in range(0, len(lines), 5)}  # one stream, across sections
    assert all("(the whole paper)" in text for text in sent)
    top = max(kg.facts, key=lambda f: relevance[f.subject_id] + relevance[f.object_id])
    assert lines[0] == top.line() or relevance[top.subject_id] + relevance[top.object_id] == max(
        relevance[f.subject_id] + relevance[f.object_id] for f in kg.facts if f.line() == lines[0])
