"""fastbmRAG's Python API (seed 003 §3.2): ``RAG(...)``, ``insert_paper(dataframe)``, ``query(...)``
over the scripted server, with a DataFrame stand-in (pandas is not a dependency)."""

from __future__ import annotations

import json

import pytest
from fixtures.fastbio_papers import PAPERS
from support import canned_bio

from scholargraph.errors import InputError
from scholargraph.testing.llm_server import Rule


class Frame:
    """What insert_paper uses of a pandas DataFrame: ``columns`` and ``to_dict(orient="records")``."""

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.columns = list(dict.fromkeys(k for r in rows for k in r))

    def to_dict(self, orient: str = "dict"):
        assert orient == "records"
        return [dict(r) for r in self.rows]


def frame(papers=PAPERS) -> Frame:
    # fastbmRAG's main.py layout: main_text a list of paragraphs, the other columns in meta_info
    return Frame([{"abstract": abstract, "main_text": paras, "paper_id": pid,
                   "meta_info": {"paper_id": pid, "articletitle": f"Paper {pid} title", "journal": f"Journal {pid}",
                                 "year": 2020 + i, "weight": 2.0 + i}}
                  for i, (pid, abstract, paras) in enumerate(papers)])


def _rag(server, tmp_path):
    import scholargraph.fastbmrag as fastbmrag

    return fastbmrag.RAG(working_dir=str(tmp_path / "endometriosis"), collection_name="endometriosis",
                         llm_index_model_name="scripted-model", llm_query_model_name="scripted-model",
                         embed_model_name="emb", embed_size=384, llm_url=server.base_url)


def _server(llm_server):
    parse_reply = json.dumps({"genes": ["BETAPROTEIN"], "diseases": ["Endometriosis"], "other": [],
                              "entity_types": [], "relation_types": []})
    return llm_server(rules=canned_bio.fastbio_rules() + [
        Rule("parse", canned_bio.PARSE_MARK, parse_reply),
        Rule("answer", canned_bio.ANSWER_MARK, canned_bio.batch_answer),
        Rule("merge", canned_bio.MERGE_MARK, canned_bio.merge_answer)])


def test_insert_paper_then_query_as_in_fastbmrag(llm_server, tmp_path):
    server = _server(llm_server)
    rag = _rag(server, tmp_path)
    assert rag.insert_paper(frame()) is None
    assert sorted(rag.last_report.added) == ["PA", "PB", "PC", "PD"]
    assert server.stats.by_kind["refine"]["calls"] >= 1  # the two-stage indexing: main text refines the draft
    calls = server.stats.calls
    rag.insert_paper(frame())  # the same paper ids: skipped, no call
    assert server.stats.calls == calls and "All paper exists" in rag.notes
    out = rag.query("What does BETAPROTEIN do in Endometriosis?", similarity_score=0.0)
    assert "Finding from paper [1]." in out and "[1] PA · Paper PA title · Journal PA · 2020" in out


def test_query_filters_given_by_the_caller(llm_server, tmp_path):
    server = _server(llm_server)
    rag = _rag(server, tmp_path)
    rag.insert_paper(frame())
    parses = server.stats.by_kind["parse"]["calls"] if "parse" in server.stats.by_kind else 0
    answer = rag.answer("What drives it?", gene=["DELTAGENE"], question_analysis=False, similarity_score=0.0)
    assert server.stats.by_kind.get("parse", {}).get("calls", 0) == parses  # no question analysis
    assert answer.trace["filters"]["genes"] == ["DELTAGENE"] and answer.trace["filters"]["parsed_by"] == "given"
    assert {s.document_id for s in answer.sources} == {"PB"}
    only = rag.answer("What does BETAPROTEIN do in Endometriosis?", paper_id=["PD"], similarity_score=-1.0)
    assert {s.document_id for s in only.sources} <= {"PD"}


def test_bad_dataframes_are_value_errors_and_index_nothing(tmp_path):
    import scholargraph.fastbmrag as fastbmrag

    rag = fastbmrag.RAG(working_dir=str(tmp_path), collection_name="c", llm_url="http://127.0.0.1:9/v1",
                        llm_index_model_name="m")
    with pytest.raises(ValueError, match="Missing required column: paper_id"):
        rag.insert_paper(Frame([{"abstract": "A.", "main_text": ["p"]}]))
    with pytest.raises(InputError, match="Column abstract contains null values"):
        rag.insert_paper(Frame([{"abstract": float("nan"), "main_text": ["p"], "paper_id": "X"}]))
    with pytest.raises(ValueError, match="DataFrame"):
        rag.insert_paper("papers.csv")
    assert not (tmp_path / "c").exists()
