"""Workspace storage: protocols by role (:mod:`.base`), the embedded SQLite backend (:mod:`.sqlite`)
and :func:`open_store`, the one place a backend is chosen.

A new backend is a class implementing :class:`~.base.Store`, one entry in ``BACKENDS`` and one
fixture in ``tests/store/contract/conftest.py`` (the contract suite it must pass).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .base import Store


def _sqlite(workdir: Path, create: bool = True, **options: Any) -> Store:
    from .sqlite.store import SQLiteStore

    if options:
        raise ConfigError(f"the sqlite store takes no options (got {', '.join(sorted(options))})")
    return SQLiteStore(workdir, create=create)


def _postgres(workdir: Path, create: bool = True, dsn: str | None = None, **options: Any) -> Store:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"the postgres store needs psycopg 3 and psycopg_pool ({exc}); "
                          "install them with: pip install 'scholargraph[postgres]'") from exc
    from .postgres.store import PostgresStore

    if not dsn:
        raise ConfigError("the postgres store needs store.dsn (e.g. --db postgresql://user@host/dbname)")
    unknown = set(options) - {"pool_size", "hnsw_min_rows", "ef_search", "lease_s", "lexical_common_rows"}
    if unknown:
        raise ConfigError(f"unknown postgres store options: {', '.join(sorted(unknown))}")
    return PostgresStore(workdir, dsn, create=create, **options)


# backend name -> factory(workdir, create=..., **backend options)
BACKENDS: dict[str, Callable[..., Store]] = {"sqlite": _sqlite, "postgres": _postgres}


def open_store(workdir: str | Path, backend: str = "sqlite", *, create: bool = True, **options: Any) -> Store:
    """The store of a workspace. ``workdir`` always holds the workspace's settings and locks;
    the SQLite backend also keeps its database files there."""
    factory = BACKENDS.get(backend)
    if factory is None:
        raise ConfigError(f"unknown store backend {backend!r}; available: {', '.join(sorted(BACKENDS))}")
    return factory(Path(workdir), create=create, **options)


def copy_to_postgres(workdir: str | Path, dsn: str, sample: int = 200, log: Callable[[str], None] | None = None) -> Any:
    """Copy a SQLite workspace into an empty PostgreSQL knowledge base and check the copy
    (:mod:`.migrate`); returns its ``MigrationReport``."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"migrating to PostgreSQL needs psycopg 3 ({exc}): pip install 'scholargraph[postgres]'") from exc
    from .migrate import copy_workspace
    return copy_workspace(Path(workdir), dsn, sample, log or (lambda _m: None))


__all__ = ["BACKENDS", "Store", "copy_to_postgres", "open_store"]
