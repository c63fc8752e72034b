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
    from .sqlite import SQLiteStore

    if options:
        raise ConfigError(f"the sqlite store takes no options (got {', '.join(sorted(options))})")
    return SQLiteStore(workdir, create=create)


# backend name -> factory(workdir, create=..., **backend options)
BACKENDS: dict[str, Callable[..., Store]] = {"sqlite": _sqlite}


def open_store(workdir: str | Path, backend: str = "sqlite", *, create: bool = True, **options: Any) -> Store:
    """The store of a workspace. ``workdir`` always holds the workspace's settings and locks;
    the SQLite backend also keeps its database files there."""
    factory = BACKENDS.get(backend)
    if factory is None:
        raise ConfigError(f"unknown store backend {backend!r}; available: {', '.join(sorted(BACKENDS))}")
    return factory(Path(workdir), create=create, **options)


__all__ = ["BACKENDS", "Store", "open_store"]
