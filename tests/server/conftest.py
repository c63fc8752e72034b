"""Module-scoped servers for the API and browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import start_server

from scholargraph.server.serve import ServerThread


@pytest.fixture(scope="module")
def servers() -> Iterator:
    """Factory for module-scoped servers, stopped at the end of the module."""
    started: list[ServerThread] = []

    def make(workdir: Path, llm_url: str | None = None, **overrides) -> ServerThread:
        server = start_server(workdir, llm_url, **overrides)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def scripted_llm() -> Iterator:
    """The project's scripted OpenAI-compatible server with its canned answers, for a whole module."""
    from support.canned import default_rules

    from scholargraph.testing.llm_server import ScriptedLLMServer

    with ScriptedLLMServer(rules=default_rules()) as server:
        yield server
