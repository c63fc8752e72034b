"""Profiles and query modes are plug-ins: a new one needs only its own module and one registry
entry (here an entry point), and the engine honours or refuses the common switches."""

from __future__ import annotations

import sys
import types

import pytest

from scholargraph import KnowledgeBase
from scholargraph.errors import ConfigError
from scholargraph.models import EntityRecord, Extraction, Source
from scholargraph.plugins import registry
from scholargraph.plugins.base import Profile, QueryMode
from scholargraph.query.retrieval import Retrieval


class FirstWordExtractor:
    """Each chunk's first word becomes an entity."""

    name = "firstword"
    uses_llm = False

    async def extract(self, doc, chunks):
        return Extraction(entities=[EntityRecord(c.text.split()[0], "Concept", "", c.id) for c in chunks])


async def echo_retrieve(ctx, req):
    k = req.k(ctx.settings)
    sources = [Source(number=n, kind="chunk", chunk_id=None, document_id=None, title=None, section=None,
                      page_start=None, page_end=None, text=f"echo {req.question} #{n}") for n in range(1, k + 1)]
    return Retrieval(req.question, "echo", sources, "\n".join(s.text for s in sources))


ECHO = Profile("firstword", "test plug-in", lambda ctx: FirstWordExtractor(),
               modes=(QueryMode("echo", "numbered echoes", echo_retrieve, unsupported=frozenset({"clues"})),))


class FakeEntryPoint:
    def __init__(self, name, value, obj):
        self.name, self.value, self._obj = name, value, obj

    def load(self):
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


@pytest.fixture
def plugin(monkeypatch):
    module = types.ModuleType("firstword_plugin")
    module.PROFILE = ECHO
    monkeypatch.setitem(sys.modules, "firstword_plugin", module)
    eps = [FakeEntryPoint("firstword", "firstword_plugin", module),
           FakeEntryPoint("broken", "broken_plugin", ImportError("no module named broken_plugin"))]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps if group == registry.ENTRY_POINT_GROUP else [])
    registry.plugins.cache_clear()
    yield
    registry.plugins.cache_clear()


def test_builtin_profiles_and_modes_are_registered():
    assert registry.profile_names() == ["none", "offline", "academic", "fastbio", "localkg"]
    assert registry.mode_names() == ["naive", "local", "subgraph", "global", "hybrid", "ppr", "summary", "bio"]
    with pytest.raises(ConfigError, match="unknown profile 'nope'; available: auto, none"):
        registry.get_profile("nope")
    assert registry.resolve_profile_name("auto", llm_configured=False) == "offline"
    with pytest.raises(ConfigError, match="needs an LLM"):
        registry.resolve_profile_name("fastbio", llm_configured=False)


def test_an_entry_point_plugin_indexes_and_answers(plugin, workdir, caplog):
    assert "firstword" in registry.profile_names() and "echo" in registry.mode_names()
    assert "broken" in caplog.text  # a broken plug-in is reported, not fatal
    with KnowledgeBase(workdir, extraction={"profile": "firstword"}, query={"mode": "echo"}) as kb:
        report = kb.insert(texts=["Zebrafish regenerate fins.", "Axolotls regrow limbs."])
        assert report.profile == "firstword" and kb.stats().entities == 2
        retrieval = kb.retrieve("what regrows?", top_k=3)
        assert [s.text for s in retrieval.sources][-1] == "echo what regrows? #3"
        answer = kb.query("what regrows?", top_k=2, session="s")
        assert answer.mode == "echo" and answer.extractive and len(answer.context_sources) == 2 and answer.sources == []
        with pytest.raises(ConfigError, match="query mode 'echo' cannot honour --no-clues"):
            kb.retrieve("what regrows?", clues=False)
        kb.retrieve("what regrows?", subgraph=False)  # a switch it does not refuse


def test_unknown_mode_and_profile_are_settings_errors(workdir):
    with pytest.raises(ConfigError, match="query.mode"):
        KnowledgeBase(workdir, query={"mode": "echo"})
    with pytest.raises(ConfigError, match="extraction.profile"):
        KnowledgeBase(workdir, extraction={"profile": "firstword"})
