"""Fixtures of the red-team suite: a scripted server and a `scholargraph` runner bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redteam import Scholar, scripted_env, start_server

from scholargraph.testing.llm_server import ScriptedLLMServer


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    s = start_server()
    yield s
    s.stop()


@pytest.fixture
def scholar(server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture,
            monkeypatch: pytest.MonkeyPatch) -> Scholar:
    env = scripted_env(server)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Scholar(server, tmp_path / "ws", capsys, env)
