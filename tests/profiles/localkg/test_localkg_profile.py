"""The localkg profile through the KnowledgeBase and the scripted server: per-paper local KGs with
mentions, descriptions, local and paper-level relations, skos:broader and resolved predicates, all
traceable to stored sentences; failed units recorded while the paper survives; cost per stage;
dry-run estimate; the same graph on re-index; the workspace's query modes over it; no LLM = one
clear error naming the stages."""

from __future__ import annotations

import pytest
from fixtures.localkg_papers import bad_answer, localkg_kb, write_paper
from support.canned_localkg import MENTIONS_MARK

from scholargraph import KnowledgeBase
from scholargraph.errors import ConfigError

STAGE_PURPOSES = ["lkg_global", "lkg_linking", "lkg_mentions", "lkg_relations", "lkg_taxonomy"]


def graph_snapshot(kb: KnowledgeBase) -> tuple:
    doc = kb.store.list_documents()[0].id
    entities = sorted((e.name, e.type, e.description, tuple(sorted(e.aliases)))
                      for e in kb.store.get_entities(kb.store.all_entity_ids()).values())
    records = sorted((r.source_id, r.target_id, tuple(r.types), tuple(r.keywords), r.sentence, r.level)
                     for r in kb.store.relation_provenance([rid for rid, *_ in kb.store.all_edges()]))
    mentions = [(m.surface, m.sentence_no, m.char_start, m.entity_id, m.category) for m in kb.store.mentions_of(doc)]
    return entities, records, mentions


def test_a_paper_becomes_a_local_kg_traceable_to_its_sentences(lkg_server, tmp_path):
    server = lkg_server()
    with localkg_kb(server, tmp_path / "ws") as kb:
        report = kb.insert([write_paper(tmp_path / "papers")])
        assert report.ok and report.profile == "localkg" and report.chunk_failures == 0
        [doc] = [r.id for r in kb.store.list_documents()]
        sentences = {s.ordinal: s for s in kb.store.sentences_of(doc)}
        assert len(sentences) == 7 and sentences[2].section == "Methods" and sentences[2].chunk_id
        mentions = kb.store.mentions_of(doc)
        assert {"named", "general", "other"} <= {m.category for m in mentions}
        for m in mentions:  # sentence, span, section, page, description
            assert sentences[m.sentence_no].text[m.char_start:m.char_end] == m.surface == m.sentence[m.char_start:m.char_end]
            assert m.section == sentences[m.sentence_no].section and m.description and m.entity_id
        records = kb.store.relation_provenance([rid for rid, *_ in kb.store.all_edges()])
        levels = {r.level for r in records}
        assert {"sentence", "paragraph", "section", "paper", "taxonomy"} <= levels
        assert all(r.sentence in sentences and r.chunk_id == sentences[r.sentence].chunk_id for r in records)
        assert any(r.types == ["skos:broader"] for r in records)
        resolved = [r for r in records if r.keywords and r.keywords[0] in ("employs", "makes use of")]
        assert resolved and all(r.types == ["uses"] for r in resolved)  # predicate resolution
        mel = kb.store.get_entities(kb.store.find_entity("MEL")).popitem()[1]
        assert mel.name == "Metadata Extractor and Loader" and mel.type == "Named Entity" and mel.description
        # cost per paper and per stage
        cost = kb.cost_by_document()[doc]
        assert sorted(p for p in cost if p.startswith("lkg_")) == STAGE_PURPOSES
        assert kb.stats().mentions == len(mentions) and kb.stats().sentences == 7


def test_a_bad_answer_fails_its_unit_and_the_paper_survives(lkg_server, tmp_path):
    server = lkg_server(bad_answer(MENTIONS_MARK, "section:\\nThe ASKG supports"))
    with localkg_kb(server, tmp_path / "ws") as kb:
        report = kb.insert([write_paper(tmp_path / "papers")])
        [row] = kb.store.list_documents()
        assert row.status == "PROCESSED" and report.chunk_failures == 3  # one unit, three targets
        [failures] = kb.store.chunk_failures().values()
        assert all("stage 1" in f.reason and "§3" in f.reason and f.raw for f in failures)
        assert kb.store.mentions_of(row.id) and kb.stats().relations > 5


def test_reindexing_a_paper_gives_the_same_graph_from_the_cache(lkg_server, tmp_path):
    server = lkg_server()
    path = write_paper(tmp_path / "papers")
    with localkg_kb(server, tmp_path / "ws") as kb:
        kb.insert([path])
        first = graph_snapshot(kb)
        calls = server.stats.calls
        again = kb.insert([path], force=True)
        assert again.ok and server.stats.calls == calls  # every answer came from the cache
        assert graph_snapshot(kb) == first


def test_dry_run_estimates_every_stage(lkg_server, tmp_path):
    server = lkg_server()
    with localkg_kb(server, tmp_path / "ws") as kb:
        report = kb.insert([write_paper(tmp_path / "papers")], dry_run=True)
        assert sorted(report.usage) == STAGE_PURPOSES and server.stats.calls == 0
        assert report.usage["lkg_mentions"].calls == 3 * (3 + 2 + 3)  # exact: from the paper's structure
        assert all(u.prompt_tokens > 0 for u in report.usage.values())
        assert kb.store.count("documents") == 0


def test_without_an_llm_the_profile_names_the_stages_that_need_one(tmp_path):
    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "localkg"}, progress=False) as kb:
        with pytest.raises(ConfigError) as err:
            kb.insert([write_paper(tmp_path / "papers")])
    message = str(err.value)
    assert "localkg" in message and "stage 1 (mention extraction)" in message and "stage 5" in message
    assert "llm.base_url" in message


def test_query_modes_work_over_local_kgs_and_cite_paper_section_page(lkg_server, tmp_path):
    server = lkg_server()
    with localkg_kb(server, tmp_path / "ws", query={"hybrid_passages": False}) as kb:
        kb.insert([write_paper(tmp_path / "papers"), write_paper(tmp_path / "papers", "copy.json")])
        for mode in ("naive", "local", "global", "subgraph", "hybrid"):
            found = kb.retrieve("Which tool does MEL use to extract metadata?", mode=mode)
            assert found.sources, mode
            for s in found.sources:
                if s.chunk_id:
                    assert s.title == "MEL and the ASKG" and set(s.section.split(" / ")) <= {"Abstract", "Methods", "Conclusion"}
