"""Browsing returns typed views (app/views.py) whose ``to_json()`` is the JSON object the CLI's
``--json`` and the HTTP API printed before the views existed: the same keys in the same order, the
same values. Views over an analysis module's record are checked byte for byte against that record;
the others against the key lists recorded here."""

import json

import pytest

from scholargraph import KnowledgeBase
from scholargraph.analysis.citation_view import network_view, paper_view
from scholargraph.analysis.community_view import list_view, one_view
from scholargraph.analysis.graph_stats import graph_stats
from scholargraph.analysis.overview import overview
from scholargraph.analysis.paper_page import paper_page
from scholargraph.app.views import CommunitiesView, DocumentStatus, EntityView, View, WorkspaceStats
from scholargraph.graph.browse import neighbourhood, relation_evidence, subgraph

TEXTS = [
    {"id": "paper-1", "title": "Graph RAG survey",
     "text": "GraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves neighbours from the Knowledge "
             "Graph. HippoRAG runs Personalized PageRank over the Knowledge Graph."},
    {"id": "paper-2", "title": "Dense retrieval",
     "text": "BERT encoders embed passages for Dense Retrieval. ColBERT scores passages with BERT token vectors. "
             "Dense Retrieval with BERT feeds LightRAG."},
]

STATUS_KEYS = ["id", "title", "status", "scope", "profile", "chunks", "chunk_failures", "error", "source_path",
               "updated_at"]
RECORDED = {
    "status": STATUS_KEYS,
    "document": [*STATUS_KEYS, "authors", "year", "venue", "doi", "pmid"],
    "passage": ["chunk_id", "document_id", "ordinal", "section", "page_start", "page_end", "text", "title", "authors",
                "year", "venue", "doi", "source_path"],
    "entity": ["id", "name", "type", "description", "aliases", "weight", "degree", "documents"],
    "stats": ["workspace", "documents", "papers", "documents_by_status", "chunks", "entities", "relations", "keywords",
              "chunk_failures", "mentions", "sentences", "embedding_model", "embedding_dim", "usage"],
    "report_cost": ["written", "extractive", "pending", "calls", "tokens", "when"],
    "reports_status": ["communities", "pending", "llm"],
    "session_turn": ["question", "answer"],
    "plot": ["files", "nodes", "edges"],
    "library": ["documents", "total", "offset", "limit", "sort", "order", "statuses", "years"],
    "usage": ["llm_calls", "cached_calls", "failed_attempts", "prompt_tokens", "completion_tokens", "total_tokens",
              "estimated_calls", "by_purpose"],
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    with KnowledgeBase(tmp_path_factory.mktemp("views") / "ws", extraction={"profile": "offline"},
                       communities={"reports": "extractive"}, progress=False) as kb:
        assert kb.insert(texts=TEXTS).ok
        kb.query("What does GraphRAG build?", session="s1")
        yield kb


def same_json(view: View, record: dict) -> None:
    assert json.dumps(view.to_json()) == json.dumps(record)


def test_views_over_analysis_records_print_them_byte_for_byte(kb):
    store = kb.store
    center = next(e.id for e in kb.entities(search="Knowledge Graph") if e.name == "Knowledge Graph")
    ends = [next(e.id for e in kb.entities(search=n) if e.name == n) for n in ("GraphRAG", "HippoRAG")]
    community = store.list_communities()[0].id
    relation = kb.browse.neighbourhood(center).edges[0]["id"]
    seed = kb.settings.communities.seed
    same_json(kb.communities(reports=False), list_view(store, None, False))
    same_json(kb.communities(0, members=True, reports=False), list_view(store, 0, True))
    same_json(kb.community(community), one_view(store, community))
    same_json(kb.citations(), network_view(store, 50))
    same_json(kb.citations("paper-1"), paper_view(store, "paper-1"))
    same_json(kb.graph_stats(), graph_stats(store))
    # the layout's positions differ from one call to the next; the rest is the record's
    shown, record = kb.browse.overview().to_json(), overview(store, 1500, None, None, seed)
    for data in (shown, record):
        data["nodes"] = [{k: v for k, v in n.items() if k not in ("x", "y")} for n in data["nodes"]]
    assert json.dumps(shown) == json.dumps(record)
    same_json(kb.browse.paper("paper-1"), paper_page(store, "paper-1"))
    same_json(kb.browse.neighbourhood(center, depth=2), neighbourhood(store, center, 2, 60))
    same_json(kb.browse.subgraph(["GraphRAG", "HippoRAG"]), subgraph(store, ends, 4))
    same_json(kb.browse.relation(relation), relation_evidence(store, relation))


def test_views_built_by_browsing_keep_the_recorded_keys(kb, tmp_path):
    chunk = kb.store.chunks_of("paper-1")[0]
    shapes = {
        "status": kb.status()[0].to_json(),
        "document": kb.document("paper-1").to_json(),
        "passage": kb.passage(chunk.id).to_json(),
        "entity": kb.entities(limit=1)[0].to_json(),
        "stats": kb.stats().to_json(),
        "report_cost": kb.browse.report_cost().to_json(),
        "reports_status": kb.browse.reports_status().to_json(),
        "session_turn": kb.browse.session_history("s1")[0].to_json(),
        "plot": kb.plot(tmp_path / "plots", max_nodes=50).to_json(),
        "library": kb.browse.library().to_json(),
        "usage": kb.stats().to_json()["usage"],
    }
    assert {name: list(data) for name, data in shapes.items()} == RECORDED
    assert shapes["passage"]["text"] == chunk.text and shapes["passage"]["title"] == "Graph RAG survey"
    assert shapes["document"]["status"] == "PROCESSED" and shapes["stats"]["papers"] == 2
    assert list(shapes["library"]["documents"][0]) == [*STATUS_KEYS, "authors", "year", "venue", "doi", "created_at"]


def test_community_members_appear_only_when_asked_for(kb):
    without = kb.communities(reports=False)
    with_members = kb.communities(members=True, reports=False)
    assert isinstance(without, CommunitiesView) and without.communities[0].members is None
    assert "members" not in without.to_json()["communities"][0]
    assert with_members.communities[0].members and "members" in with_members.to_json()["communities"][0]


def test_the_views_are_typed_records(kb):
    assert all(isinstance(r, DocumentStatus) for r in kb.status())
    assert all(isinstance(e, EntityView) and isinstance(e.degree, int) for e in kb.entities())
    stats = kb.stats()
    assert isinstance(stats, WorkspaceStats) and stats.papers == 2 and stats.documents_by_status == {"PROCESSED": 2}


def test_a_record_with_other_keys_is_refused():
    with pytest.raises(ValueError, match="keys"):
        CommunitiesView.of({"levels": [], "seed": 1, "computed_at": None, "communities": []})


def test_curation_results_keep_the_recorded_keys(tmp_path):
    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline", "resolve": False}, progress=False) as kb:
        kb.insert(texts=TEXTS)
        merge = kb.merge_entities("LightRAG", "HippoRAG")
        run = kb.update_communities(force=True)
        deletion = kb.delete("paper-2")
    assert list(merge.to_json()) == ["kept", "merged", "relations_merged"] and len(merge.merged) == 1
    assert list(deletion.to_json()) == ["deleted", "chunks", "entities_removed", "relations_removed",
                                        "keywords_removed"]
    assert deletion.deleted == "paper-2" and deletion.chunks >= 1
    assert run.to_json()["reason"] == run.reason and "reports_written" in run.to_json()
