"""The kgrag entity-type preset (seed 001 §III.B): academic types plus typed relations."""

from __future__ import annotations

import asyncio
import json

from scholargraph.config import ExtractionSettings, LLMSettings, Settings
from scholargraph.extract.types import entity_types, relation_types
from scholargraph.llm.client import LLMClient
from scholargraph.models import Chunk
from scholargraph.plugins.base import ExtractorContext
from scholargraph.plugins.registry import get_profile
from scholargraph.testing.llm_server import Rule, ScriptedLLMServer


def test_preset_types():
    assert {"Topic", "Equation", "Variable", "Person", "Paper"} <= set(entity_types("kgrag"))
    assert {"Co-author", "Citation", "Affiliation", "Methodology"} <= set(relation_types("kgrag", None))
    assert relation_types("kgrag", ["Cites"]) == ["Cites"] and relation_types("paper", None) == []


def test_academic_profile_asks_for_and_keeps_relation_types(tmp_path):
    reply = json.dumps({"entities": [{"name": "Ada Smith", "type": "Person", "description": "An author."},
                                     {"name": "Bo Chen", "type": "Person", "description": "An author."},
                                     {"name": "E = mc^2", "type": "Equation", "description": "An equation."}],
                        "relations": [{"source": "Ada Smith", "target": "Bo Chen", "keywords": ["co-author", "team"],
                                       "description": "They wrote the paper together.", "strength": 8}],
                        "keywords": ["physics"]})
    with ScriptedLLMServer(rules=[Rule("extract", "Build a knowledge graph", reply)]) as server:
        settings = Settings(workdir=tmp_path, llm=LLMSettings(base_url=server.base_url, model="scripted-model"),
                            extraction=ExtractionSettings(profile="academic", entity_types="kgrag", gleaning=0))
        llm = LLMClient(settings.llm)

        async def go():
            try:
                extractor = get_profile("academic").make_extractor(ExtractorContext(settings, llm, None))
                return await extractor.extract_chunk("d1", Chunk("c1", "d1", 0, "Ada Smith and Bo Chen: E = mc^2.", 10))
            finally:
                await llm.aclose()

        extraction = asyncio.run(go())
        system = server.stats.requests[0]["messages"][0]["content"]
    assert "Equation" in system and "Variable" in system and "Co-author" in system
    assert {e.type for e in extraction.entities} == {"Person", "Equation"}
    assert extraction.relations[0].types == ["Co-author"]
