"""The storage contract: every backend runs every test in this folder.

A backend plugs in with one fixture named ``<backend>_store_factory`` that returns a callable
``factory(workdir) -> Store`` (a fresh, empty workspace per ``workdir``; calling it again with the
same ``workdir`` reopens that workspace), and one entry in ``BACKENDS``. Stores a factory returns
are closed by the ``open_store`` fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from contract_helpers import DIM

from scholargraph.store import Store, open_store

BACKENDS = ["sqlite", "postgres"]  # one entry per backend; its fixture is "<name>_store_factory"


@pytest.fixture
def sqlite_store_factory() -> Callable[[Path], Store]:
    return lambda workdir: open_store(workdir, "sqlite")


@pytest.fixture
def postgres_store_factory(pg_dsn) -> Callable[[Path], Store]:
    """A knowledge base (schema) of its own per workdir on the session's throwaway PostgreSQL server."""
    return lambda workdir: open_store(workdir, "postgres", dsn=pg_dsn(str(workdir)))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def open_workspace(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    """``open_workspace(name="ws")`` -> the store of workspace ``name`` (opened again on each call)."""
    factory = request.getfixturevalue(f"{backend}_store_factory")
    opened: list[Store] = []

    def make(name: str = "ws") -> Store:
        store = factory(tmp_path / name)
        opened.append(store)
        return store

    yield make
    for store in reversed(opened):
        store.close()


@pytest.fixture
def store(open_workspace: Callable[..., Store]) -> Store:
    s = open_workspace()
    s.set_meta("embedding_dim", str(DIM))
    return s
