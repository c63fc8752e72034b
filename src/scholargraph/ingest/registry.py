"""Loader registry: file suffix -> function that turns a file into Documents.

A loader is ``def load(path: Path, options: LoadOptions) -> list[Document]`` and raises
``LoadError`` with a reason a user understands. PDF and HTML are one module each; adding a
format means writing one module and registering it here.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LoadError, NotFoundError
from ..models import Document

MAX_FILE_BYTES = 512 * 1024 * 1024


@dataclass
class LoadOptions:
    include_references: bool = False
    manifest: dict[str, dict] = field(default_factory=dict)  # file name -> metadata (issue 3)
    max_bytes: int = MAX_FILE_BYTES


Loader = Callable[[Path, LoadOptions], list[Document]]


@dataclass
class LoaderSpec:
    name: str
    suffixes: tuple[str, ...]
    load: Loader
    description: str = ""


_LOADERS: dict[str, LoaderSpec] = {}


def register(spec: LoaderSpec) -> None:
    for suffix in spec.suffixes:
        _LOADERS[suffix.lower()] = spec


# built-in loader modules; each exposes ``SPECS: list[LoaderSpec]`` (imported on first use)
BUILTIN_LOADER_MODULES = ("text", "jsonfile", "csvfile", "pubmed", "pdf", "html")


def _ensure_builtin() -> None:
    if _LOADERS:
        return
    for name in BUILTIN_LOADER_MODULES:
        for spec in importlib.import_module(f"{__package__}.{name}").SPECS:
            register(spec)


def loaders() -> dict[str, LoaderSpec]:
    _ensure_builtin()
    return dict(_LOADERS)


def suffix_of(path: Path) -> str:
    name = path.name.lower()
    for suffix in sorted(loaders(), key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    return path.suffix.lower()


def supported(path: Path) -> bool:
    return suffix_of(path) in loaders()


def check_readable(path: Path, options: LoadOptions) -> None:
    """Reject files no loader can use, with the reason."""
    if not path.exists():
        raise LoadError(str(path), "file not found")
    if not path.is_file():
        raise LoadError(str(path), "not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise LoadError(str(path), "empty file (0 bytes)")
    if size > options.max_bytes:
        raise LoadError(str(path), f"file too large ({size / 1e6:.0f} MB > {options.max_bytes / 1e6:.0f} MB limit)")


def missing_paths(paths: Iterable[str | Path]) -> None:
    """``NotFoundError`` naming every given path that does not exist (nothing is indexed then)."""
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise NotFoundError(f"no such file or directory: {', '.join(missing)}")


def load_file(path: Path, options: LoadOptions | None = None) -> list[Document]:
    options = options or LoadOptions()
    spec = loaders().get(suffix_of(path))
    if spec is None:
        known = ", ".join(sorted(loaders()))
        raise LoadError(str(path), f"unsupported file type {path.suffix or '(none)'!r}; supported: {known}")
    check_readable(path, options)
    docs = spec.load(path, options)
    if not docs:
        raise LoadError(str(path), "no documents with text found")
    for doc in docs:
        doc.source_path = doc.source_path or str(path)
    if options.manifest and len(docs) == 1:
        from .manifest import apply_manifest

        apply_manifest(docs[0], path, options.manifest)
    return docs


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Expand directories recursively (sorted, hidden files skipped); files are yielded as given."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    child = Path(root) / name
                    if not name.startswith(".") and supported(child):
                        yield child
        else:
            yield path
