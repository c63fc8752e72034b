"""Shared fixtures: the dev data beside the checkout, a scripted OpenAI-compatible server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scholargraph.testing.dev_data import dev_data_dir

REPO = Path(__file__).resolve().parents[1]
DEV = dev_data_dir(REPO)
MISSING = f"../shared/data/dev not present (looked at {DEV})"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def _missing_dev() -> None:
    """A test needs the dev data and it is absent: a failure in CI (CI=true), a skip elsewhere."""
    if in_ci():
        pytest.fail(f"{MISSING}; CI must run with the dev data beside the checkout", pytrace=False)
    pytest.skip(MISSING)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("shared") is not None and not DEV.is_dir():
        _missing_dev()


@pytest.fixture
def dev() -> Path:
    if not DEV.is_dir():
        _missing_dev()
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
