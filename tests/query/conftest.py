"""Fixtures over the hand-built workspace of query_workspace.py."""

from __future__ import annotations

import pytest
from query_workspace import QUERY_DEFAULTS, BagOfWordsEmbedder, WordTokenizer, build_store

from scholargraph.config import QuerySettings, Settings
from scholargraph.query.engine import QueryEngine


@pytest.fixture
def store(tmp_path):
    s = build_store(tmp_path / "ws")
    yield s
    s.close()


@pytest.fixture
def make_engine(store):
    """``make_engine(llm=None, plugins=None, **query_settings)`` -> a QueryEngine over the hand-built
    workspace (``plugins``: the [plugins.*] sections, e.g. {"ppr": {"graph_weight": 0.5}})."""

    def make(llm=None, plugins=None, **query):
        settings = Settings(workdir=store.workdir, query=QuerySettings(**{**QUERY_DEFAULTS, **query}),
                            plugins=plugins or {})
        return QueryEngine(store, settings, BagOfWordsEmbedder(), WordTokenizer(), llm)

    return make
