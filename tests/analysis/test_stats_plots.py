"""`stats --graph` measures (seed 001 Table I) and `plot` outputs (analysis/)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "graph"))
from planted import GROUPS, SIZE, SUBGROUPS  # noqa: E402
from planted_store import planted_store  # noqa: E402

import scholargraph.analysis  # noqa: E402
from scholargraph.analysis.graph_stats import graph_stats  # noqa: E402
from scholargraph.analysis.plots import write_plots  # noqa: E402
from scholargraph.config import CommunitySettings  # noqa: E402
from scholargraph.graph.community_update import update_communities  # noqa: E402

FIELDS = {"nodes", "edges", "relations", "density", "average_degree", "max_degree", "isolated_nodes",
          "connected_components", "largest_component", "largest_component_share", "clustering_coefficient",
          "transitivity", "communities", "entity_types", "relation_types", "relation_keywords", "papers_per_year",
          "top_nodes_by_degree", "citations"}
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = planted_store(tmp_path_factory.mktemp("ws") / "ws")
    asyncio.run(update_communities(s, CommunitySettings(reports="extractive")))
    yield s
    s.close()


def test_graph_stats_has_every_measure(store):
    g = graph_stats(store)
    assert FIELDS <= set(g)
    n = GROUPS * SUBGROUPS * SIZE
    assert g["nodes"] == n and g["edges"] == g["relations"] > 0
    assert g["density"] == pytest.approx(2 * g["edges"] / (n * (n - 1)), rel=1e-4)
    assert g["average_degree"] == pytest.approx(2 * g["edges"] / n, rel=1e-4)
    assert g["connected_components"] >= 1 and g["largest_component"] <= n and g["isolated_nodes"] == 0
    assert 0.3 < g["clustering_coefficient"] < 1 and 0 < g["transitivity"] < 1
    levels = g["communities"]["levels"]
    assert [lv["level"] for lv in levels] == [0, 1] and g["communities"]["per_level"] == {"0": GROUPS, "1": 12}
    assert levels[1]["average_size"] == SIZE and levels[1]["min_size"] == levels[1]["max_size"] == SIZE
    assert g["communities"]["modularity"]["0"] > 0.6
    assert g["entity_types"] == {"Concept": n} and g["relation_types"] == {"(untyped)": g["relations"]}
    assert g["relation_keywords"] == {"interaction": g["relations"]}
    assert g["papers_per_year"] == {str(2020 + i): 1 for i in range(GROUPS)}
    top = g["top_nodes_by_degree"]
    assert len(top) == 10 and top[0]["degree"] == g["max_degree"] and top[0]["type"] == "Concept"
    assert set(g["citations"]) >= {"references", "references_matched", "stub_papers", "edges_between_papers"}
    json.dumps(g)  # JSON-ready


def test_plots_are_valid_png_and_a_self_contained_html_view(store, tmp_path):
    result = write_plots(store, tmp_path / "plots", max_nodes=100)
    files = {k: Path(v) for k, v in result["files"].items()}
    assert set(files) == {"degree_distribution", "entity_types", "relation_types", "top_nodes", "community_sizes",
                          "papers_per_year", "community_map", "graph_view"}
    for name, path in files.items():
        if name != "graph_view":
            data = path.read_bytes()
            assert data.startswith(PNG) and len(data) > 5000, name
    page = files["graph_view"].read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    assert "http://" not in page and "https://" not in page and "<script src" not in page  # nothing fetched
    data = json.loads(page.split('<script id="graph-data" type="application/json">')[1].split("</script>")[0])
    assert len(data["nodes"]) == 100 and data["edges"] and len(data["communities"]) == GROUPS
    # the web app's Overview record (same layout, same viewer), with descriptions and papers
    assert list(data)[:8] == ["nodes", "edges", "communities", "types", "total_nodes", "total_edges", "sampled", "limit"]
    assert all(n["community"] in {c["id"] for c in data["communities"]} for n in data["nodes"])
    assert {e[end] for e in data["edges"] for end in ("source", "target")} <= {n["id"] for n in data["nodes"]}
    assert all(set(n["papers"]) <= set(data["papers"]) and "description" in n for n in data["nodes"])
    viewer = (Path(scholargraph.analysis.__file__).parent / "assets" / "graph_view.js").read_text(encoding="utf-8")
    assert viewer.replace("</", "<\\/") in page  # the viewer web/ builds, inlined


def test_empty_workspace(tmp_path):
    from scholargraph.store import open_store

    store = open_store(tmp_path / "empty")
    try:
        g = graph_stats(store)
        assert g["nodes"] == 0 and g["communities"]["levels"] == [] and g["papers_per_year"] == {}
        files = write_plots(store, tmp_path / "plots")["files"]
        assert all(Path(p).exists() for p in files.values())
    finally:
        store.close()
