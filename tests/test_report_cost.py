"""AcademicRAG's cost model (seed 000 §3.5, Table 3.2): an index run pays only for extracting the new
chunks; community reports are written when something needs them (summary mode, the `communities`
command, the web view's endpoint) or when asked (`index --reports`), and `--dry-run` and
`stats --cost` say so."""

import json

from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.cli import main

TEXTS = [
    "Retrieval-Augmented Generation (RAG) grounds Large Language Models in retrieved evidence. "
    "GraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves one-hop neighbours.",
    "BERT encoders embed entity descriptions. SciERC annotates scientific entities and relations.",
    "GraphRAG summarises communities of the Knowledge Graph. Leiden clustering finds the communities.",
]


def _kb(server, workdir, **extra):
    llm = {"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01, "timeout": 5}
    return KnowledgeBase(workdir, llm=llm, extraction={"profile": "academic"}, **extra)


def _calls(server, kind):
    return server.stats.by_kind.get(kind, {}).get("calls", 0)


def test_indexing_pays_only_for_extraction_and_reports_come_when_needed(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with _kb(server, workdir) as kb:
        first = kb.insert(texts=TEXTS[:2])
        assert first.ok and _calls(server, "report") == 0 and "report" not in first.usage
        assert any("written when needed" in n for n in first.notes), first.notes
        assert kb.store.list_communities(), "the communities themselves are computed (no LLM)"
        before = server.stats.calls
        second = kb.insert(texts=TEXTS[2:])  # incremental: the new chunk's extraction and nothing else
        assert second.ok and _calls(server, "report") == 0
        assert set(second.usage) <= {"extract", "glean", "summarise"}
        assert server.stats.calls - before == second.usage["extract"].calls + second.usage["glean"].calls + (
            second.usage["summarise"].calls if "summarise" in second.usage else 0)
        view = kb.communities()  # what the `communities` command and the web view show: reports now
        assert _calls(server, "report") > 0
        assert all(c.method == "llm" and c.title for c in view.communities), view


def test_summary_mode_writes_the_reports_it_needs(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with _kb(server, workdir) as kb:
        kb.insert(texts=TEXTS)
        assert _calls(server, "report") == 0
        answer = kb.query("What are the main themes across these papers?", mode="summary")
    assert _calls(server, "report") > 0 and answer.sources


def test_index_reports_flag_dry_run_and_stats_cost(llm_server, workdir, tmp_path, capsys):
    server = llm_server(rules=default_rules())
    papers = []
    for i, text in enumerate(TEXTS):
        papers.append(tmp_path / f"p{i}.txt")
        papers[-1].write_text(text)
    args = ["-w", str(workdir), "--llm-url", server.base_url, "--llm-model", "scripted-model", "--profile", "academic"]
    assert main(["index", str(papers[0]), "--dry-run", *args]) == 0
    shown = "".join(capsys.readouterr())
    assert "community reports: no LLM call in this run" in shown and "--reports" in shown
    assert main(["index", str(papers[0]), str(papers[1]), "--json", *args]) == 0
    capsys.readouterr()
    assert _calls(server, "report") == 0
    assert main(["stats", "--cost", "--json", *args[:-2]]) == 0
    cost = json.loads(capsys.readouterr().out)["community_reports"]
    assert cost["pending"] > 0 and cost["written"] == 0 and cost["calls"] == 0
    assert main(["index", str(papers[2]), "--reports", "--json", *args]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["usage"]["by_purpose"]["report"]["calls"] == _calls(server, "report") > 0
    assert main(["stats", "--cost", *args[:-2]]) == 0
    shown = capsys.readouterr().out
    assert "community reports:" in shown and "0 pending" in shown
