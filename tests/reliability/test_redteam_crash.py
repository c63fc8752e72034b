"""kill -9 at several points of `index`, `entities --merge` and `delete` (the defect found and the
crash cases that must keep holding): after the recovery command the workspace is the one a clean
run makes, whatever point the kill hit."""

from __future__ import annotations

import pytest
from crashtest import KillPoint, check_crash, copy_workspace, run_killed
from redteam import differences, snapshot, write_papers

pytestmark = pytest.mark.slow

N_PAPERS = 6


@pytest.fixture
def corpus(tmp_path):
    return write_papers(tmp_path / "corpus", N_PAPERS)


@pytest.fixture
def clean(scholar, corpus, tmp_path):
    """A workspace indexed without interruption (in this process)."""
    run = scholar.at(tmp_path / "clean")
    # --reports: with an LLM, reports are otherwise written when first needed, not by the index run
    result = run("index", str(corpus), "--profile", "academic", "--reports")
    assert result.code == 0, result.err
    assert any("entity resolution merged" in n for n in result.json["notes"])  # the final phase has work
    state = snapshot(run.workdir)
    assert state["communities"] and state["community_reports"]  # and communities with reports to compare
    return run.workdir


INDEX_KILLS = [
    KillPoint("scholargraph.app.pipeline:Pipeline._commit", nth=3, when="return"),  # in the 3rd paper's commit
    KillPoint("scholargraph.graph.resolution_pass:resolve_touched"),  # all papers in, resolution not started
    KillPoint("scholargraph.graph.resolution_pass:merge_entities", nth=1, when="return"),  # mid-resolution
    KillPoint("scholargraph.graph.refresh:GraphRefresher.refresh", nth=2),  # resolution done, rebuild not
    # the communities phase: not computed yet; computed, no report yet; some reports in
    KillPoint("scholargraph.graph.community_update:detect_hierarchy"),
    KillPoint("scholargraph.graph.community_update:write_reports"),
]


@pytest.mark.parametrize("point", INDEX_KILLS, ids=str)
def test_kill_during_index_then_a_plain_rerun_gives_the_clean_graph(scholar, corpus, clean, point):
    check_crash(scholar, ["index", str(corpus), "--profile", "academic", "--reports"], point, clean)


@pytest.mark.parametrize("recovery", ["index", "delete"])
def test_kill_during_entities_merge_is_finished_by_the_next_write(scholar, clean, corpus, tmp_path, recovery):
    merge = ["entities", "--merge", "Contrastive Learning", "Sentence Embeddings"]
    merged = scholar.at(copy_workspace(clean, tmp_path / "merged"))
    assert merged(*merge).code == 0
    # the next writing command: `index`, or one that is not about the graph at all (`delete` of no document)
    recover = ["index", str(corpus), "--profile", "academic", "--reports"] if recovery == "index" else [
        "delete", "no-such-paper"]
    scholar.workdir = copy_workspace(clean, tmp_path / "victim")
    # the merge committed, the rebuild of what it touched had not started
    check_crash(scholar, merge, KillPoint("scholargraph.app.indexing:Indexing.refresh_graph"), merged.workdir,
                recover=recover)


def test_kill_during_delete_is_all_or_nothing(scholar, clean, tmp_path):
    doc_id = next(d for d in snapshot(clean)["documents"])
    gone = scholar.at(copy_workspace(clean, tmp_path / "deleted"))
    assert gone("delete", doc_id).code == 0
    scholar.workdir = copy_workspace(clean, tmp_path / "victim")
    # inside the unit of work: nothing happened
    run_killed(scholar, ["delete", doc_id], KillPoint("scholargraph.store.sqlite.store:SQLiteStore.delete_chunks_of",
                                                      when="return"))
    assert not differences(snapshot(scholar.workdir), snapshot(clean))
    # after its commit, before the rebuild: rerunning the command finishes it
    check_crash(scholar, ["delete", doc_id], KillPoint("scholargraph.graph.refresh:GraphRefresher.refresh"),
                gone.workdir)


def test_kill_before_the_communities_on_postgresql_then_a_rerun_gives_them_back(scholar, corpus, clean, pg_dsn,
                                                                                tmp_path):
    """A kill before the communities phase on the PostgreSQL backend: the rerun computes them (a rerun once
    left 0 of 154 communities and 0 of 71 reports)."""
    argv = ["index", str(corpus), "--profile", "academic", "--reports"]
    want = scholar.at(tmp_path / "pg-clean")
    assert want(*argv, "--db", pg_dsn("clean")).code == 0
    scholar.workdir = tmp_path / "pg-victim"
    run_killed(scholar, [*argv, "--db", pg_dsn("victim")],
               KillPoint("scholargraph.graph.community_update:detect_hierarchy"))
    assert scholar.subprocess(*argv, "--db", pg_dsn("victim")).code == 0
    got, clean_pg = snapshot(scholar.workdir, pg_dsn("victim")), snapshot(want.workdir, pg_dsn("clean"))
    assert clean_pg["communities"] and clean_pg["community_reports"]
    assert not differences(got, clean_pg)


def test_migrate_killed_after_its_commit_is_finished_by_a_rerun(scholar, clean, pg_dsn, tmp_path):
    """`migrate` killed after the copy committed, before the check: the rerun used to
    refuse ("already holds a knowledge base"); it finishes the copy's indexes and check instead."""
    scholar.workdir = copy_workspace(clean, tmp_path / "to-migrate")
    dsn = pg_dsn("target")
    run_killed(scholar, ["migrate", "--to", dsn], KillPoint("scholargraph.store.migrate:_verify"), llm=False)
    again = scholar.subprocess("migrate", "--to", dsn, llm=False)
    assert again.code == 0, again.err
    report = again.json
    assert report["ok"] and report["resumed"]
    assert report["tables"]["documents"] == {"source": N_PAPERS, "target": N_PAPERS}
    assert report["tables"]["community_members"]["target"] > 0
    want = snapshot(clean)
    got = snapshot(scholar.workdir, dsn)
    assert not differences(got, want)
    # once checked, it is a knowledge base like any other: never copied into again
    third = scholar.subprocess("migrate", "--to", dsn, llm=False)
    assert third.code == 4 and "already holds a knowledge base" in third.err
    # nor is a copy of another workspace resumed there
    scholar.workdir = copy_workspace(clean, tmp_path / "another")
    other = scholar.subprocess("migrate", "--to", dsn, llm=False)
    assert other.code == 4 and "already holds a knowledge base" in other.err
