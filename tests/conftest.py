"""Shared fixtures: the dev data beside the checkout, a scripted OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEV = REPO.parent / "shared" / "data" / "dev"
needs_dev = pytest.mark.skipif(not DEV.exists(), reason="../shared/data/dev not present")


@pytest.fixture
def dev() -> Path:
    if not DEV.exists():
        pytest.skip("../shared/data/dev not present")
    return DEV


@pytest.fixture
def llm_server():
    """Factory: ``llm_server(rules=[...], latency=...)`` -> a running ScriptedLLMServer."""
    from scholargraph.testing.llm_server import ScriptedLLMServer

    started = []

    def make(**kwargs):
        server = ScriptedLLMServer(**kwargs).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "ws"
