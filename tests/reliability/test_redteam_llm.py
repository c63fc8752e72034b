"""A misbehaving LLM server: unusable replies are never cached, chunks
whose reply was unusable are marked and retried by a plain rerun, and replies are bounded."""

from __future__ import annotations

import json
from pathlib import Path

from redteam import Scholar, differences, snapshot, start_server, write_papers
from support.canned import default_rules, extraction_reply

from scholargraph.testing.llm_server import Reply, Rule

ACADEMIC = ("--profile", "academic")
COMMUNITIES = ("communities", "community_reports")
PROSE = "Sure! The passage talks about graph neural networks and knowledge graphs."


def rules_with(kind: str, respond) -> list[Rule]:
    """The canned rules, with ``kind`` answered by ``respond``."""
    return [Rule(r.kind, r.pattern, respond) if r.kind == kind else r for r in default_rules()]


def calls(server, kind: str) -> int:
    return server.stats.by_kind.get(kind, {}).get("calls", 0)


class Switch:
    """Answers prose (or ``bad``) until ``healthy`` is set."""

    def __init__(self, good, bad=PROSE):
        self.good, self.bad, self.healthy = good, bad, False

    def __call__(self, request):
        return self.good(request) if self.healthy else (self.bad(request) if callable(self.bad) else self.bad)


# -- defect 3: chunk failures are marked, retried exactly, and bad replies never cached ----------------


def test_failed_chunks_are_marked_and_a_plain_rerun_retries_exactly_them(scholar, server, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 3)
    switch = Switch(extraction_reply)

    def extract(request):  # only the chunks of "Paper number 1" (p01.txt) get prose
        return switch(request) if "Paper number 1" in json.dumps(request) else extraction_reply(request)

    server.rules = rules_with("extract", extract)
    first = scholar("index", str(corpus), *ACADEMIC)
    report = first.json
    failures = report["chunk_failures"]
    assert first.code == 1 and failures > 0, first.err  # the run says something is missing
    rows = {r["source_path"]: r for r in scholar("status").json["documents"]}
    marked = rows[str(corpus / "p01.txt")]
    assert marked["chunk_failures"] == failures and rows[str(corpus / "p00.txt")]["chunk_failures"] == 0
    assert "chunk" in scholar("status", llm=False).out  # the table says it too
    assert scholar("stats").json["chunk_failures"] == failures

    again = scholar("index", str(corpus), *ACADEMIC)  # still broken: same failures, not twice as many
    assert again.code == 1 and scholar("stats").json["chunk_failures"] == failures

    switch.healthy = True
    before = calls(server, "extract")
    healed = scholar("index", str(corpus), *ACADEMIC)
    assert healed.code == 0, healed.err
    assert calls(server, "extract") - before == failures  # exactly the failed chunks, each once
    assert scholar("stats").json["chunk_failures"] == 0
    assert all(r["chunk_failures"] == 0 for r in scholar("status").json["documents"])

    clean = scholar.at(tmp_path / "clean")
    assert clean("index", str(corpus), *ACADEMIC).code == 0
    # communities follow the graph only once it changed by communities.min_change (by design): the few
    # entities of one repaired chunk leave the communities of the first run in place
    diff = differences(snapshot(scholar.workdir), snapshot(clean.workdir), ignore=COMMUNITIES)
    assert not diff, diff


def test_unusable_replies_are_not_cached_and_the_key_names_the_server(scholar, server, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 2)
    server.rules = rules_with("extract", PROSE)
    assert scholar("index", str(corpus), *ACADEMIC).code == 1
    healthy = start_server()
    try:
        elsewhere = Scholar(healthy, scholar.workdir, scholar.capsys, scholar.env)
        result = elsewhere("index", str(corpus), *ACADEMIC, "--force")
        assert result.code == 0, result.err
        chunks = result.json["chunks"]
        assert calls(healthy, "extract") == chunks  # nothing unusable came back from the cache
    finally:
        healthy.stop()


def test_the_cache_key_names_the_model_and_no_cache_skips_it(scholar, server, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1)
    server.models = ["scripted-model", "other-model"]
    first = scholar("index", str(corpus), *ACADEMIC)
    chunks = first.json["chunks"]
    assert calls(server, "extract") == chunks
    assert scholar("index", str(corpus), *ACADEMIC, "--force").json["usage"]["llm_calls"] == 0  # all cached
    assert calls(server, "extract") == chunks
    scholar("index", str(corpus), *ACADEMIC, "--force", "--llm-url", server.base_url, "--llm-model", "other-model",
            llm=False)
    assert calls(server, "extract") == 2 * chunks  # another model: not the first one's replies
    result = scholar("index", str(corpus), *ACADEMIC, "--force", "--no-cache")
    assert calls(server, "extract") == 3 * chunks and result.json["usage"]["cached_calls"] == 0


def test_an_ask_with_unusable_keywords_is_not_served_again_from_the_cache(scholar, server, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 2)
    assert scholar("index", str(corpus), *ACADEMIC).code == 0
    server.rules = rules_with("keywords", "no keywords here, sorry")
    question = "How do Graph Neural Networks use the Citation Graph?"
    assert scholar("ask", question).code == 0
    server.rules = default_rules()
    before = calls(server, "keywords")
    assert scholar("ask", question).code == 0
    assert calls(server, "keywords") == before + 1


# -- defect 4: bounded replies ------------------------------------------------------------------------


def test_a_ten_megabyte_reply_is_cut_and_noted_and_not_cached(scholar, server, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1, sentences_per_paper=3)
    description = "a description that goes on and on " * 30
    huge = json.dumps({"entities": [{"name": f"Entity {i}", "type": "Concept", "description": description}
                                    for i in range(10_000)], "relations": [], "keywords": []})
    assert len(huge) > 10_000_000
    server.rules = rules_with("extract", huge)
    result = scholar("index", str(corpus), *ACADEMIC)
    report = result.json
    assert any("cut" in w and "llm.max_reply_chars" in w for w in report["warnings"]), report["warnings"]
    stats = scholar("stats").json
    assert stats["entities"] < 200 * report["chunks"]
    size = sum(f.stat().st_size for f in Path(scholar.workdir).iterdir() if f.is_file())
    assert size < 8_000_000, size  # was 334 MB for 24 chunks
    server.rules = default_rules()
    before = calls(server, "extract")
    scholar("index", str(corpus), *ACADEMIC, "--force")
    assert calls(server, "extract") == before + report["chunks"]  # the cut reply was not cached


def test_entities_and_relations_beyond_the_per_chunk_limit_are_dropped_and_noted(scholar, server, tmp_path,
                                                                                  monkeypatch):
    corpus = write_papers(tmp_path / "corpus", 1, sentences_per_paper=3)
    names = [f"Entity {i}" for i in range(100)]
    reply = json.dumps({"entities": [{"name": n, "type": "Concept", "description": f"{n} is here."} for n in names],
                        "relations": [{"source": a, "target": b, "description": f"{a} and {b}"}
                                      for a, b in zip(names, names[1:], strict=False)],
                        "keywords": names})
    server.rules = rules_with("extract", reply)
    monkeypatch.setenv("SCHOLARGRAPH_EXTRACTION__MAX_ENTITIES_PER_CHUNK", "20")
    monkeypatch.setenv("SCHOLARGRAPH_EXTRACTION__MAX_RELATIONS_PER_CHUNK", "10")
    monkeypatch.setenv("SCHOLARGRAPH_EXTRACTION__GLEANING", "0")
    result = scholar("index", str(corpus), *ACADEMIC)
    report = result.json
    [dropped] = [w for w in report["warnings"] if "max_entities_per_chunk" in w]
    assert "80 entities" in dropped and "89 relations" in dropped
    stats = scholar("stats").json
    assert stats["entities"] <= 20 * report["chunks"] and stats["relations"] <= 10 * report["chunks"]


def test_a_huge_answer_is_cut_noted_and_not_cached(scholar, server, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 1)
    assert scholar("index", str(corpus), *ACADEMIC).code == 0
    server.rules = rules_with("answer", Reply("All of it [1]. " * 800_000))
    question = "What do Graph Neural Networks learn?"
    answer = scholar("ask", question).json
    assert len(answer["answer"]) <= 100_000
    assert any("llm.max_reply_chars" in n for n in answer.get("notes", [])), answer.get("notes")
    server.rules = default_rules()
    before = calls(server, "answer")
    assert "All of it" not in scholar("ask", question).json["answer"]
    assert calls(server, "answer") == before + 1


def test_a_profile_that_cannot_repair_single_chunks_processes_the_paper_again(scholar, server, tmp_path,
                                                                                monkeypatch):
    from scholargraph.profiles.academic.extractor import AcademicExtractor

    monkeypatch.setattr(AcademicExtractor, "repairs_chunks", False)  # as fastbio: the paper is the unit
    corpus = write_papers(tmp_path / "corpus", 2)
    switch = Switch(extraction_reply)
    server.rules = rules_with("extract", lambda r: switch(r) if "Paper number 1" in json.dumps(r) else extraction_reply(r))
    first = scholar("index", str(corpus), *ACADEMIC)
    assert first.code == 1 and first.json["chunk_failures"]
    switch.healthy = True
    healed = scholar("index", str(corpus), *ACADEMIC)
    report = healed.json
    assert healed.code == 0 and len(report["processed"]) == 1  # the incomplete paper, whole
    assert report["usage"]["by_purpose"]["extract"]["calls"] == first.json["chunk_failures"]  # the rest was cached
    clean = scholar.at(tmp_path / "clean")
    assert clean("index", str(corpus), *ACADEMIC).code == 0
    assert not differences(snapshot(scholar.workdir), snapshot(clean.workdir), ignore=COMMUNITIES)
