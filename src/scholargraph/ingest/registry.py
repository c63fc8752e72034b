"""Loader registry: file suffix -> function that turns a file into Documents.

A loader is ``def load(path: Path, options: LoadOptions) -> list[Document]`` and raises
``LoadError`` with a reason a user understands. A format of many records per file (CSV rows) also
gives ``stream(path, options, warnings) -> Iterator[Document]``, which yields them as the file is
read: the pipeline then commits the first ones before the last is parsed, and memory does not grow
with the file. PDF and HTML are one module each; adding a
format means writing one module and registering it here.
"""

from __future__ import annotations

import fnmatch
import importlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LoadError, NotFoundError
from ..models import Document

MAX_FILE_BYTES = 256_000_000  # settings: ingest.max_file_mb
MAX_DOCUMENT_BYTES = 5_000_000  # settings: ingest.max_document_mb
NOT_UTF8_NAME = "the file name is not valid UTF-8 (shown with \\x escapes); rename the file to index it"


@dataclass
class LoadOptions:
    include_references: bool = False
    manifest: dict[str, dict] = field(default_factory=dict)  # file name -> metadata (title, authors, year...) from a manifest
    max_bytes: int = MAX_FILE_BYTES  # any file
    max_document_bytes: int = MAX_DOCUMENT_BYTES  # the text of one paper (see LoaderSpec.one_document)
    exclude: tuple[str, ...] = ()  # glob patterns of files not to read (``index --exclude``)


Loader = Callable[[Path, LoadOptions], list[Document]]
Streamer = Callable[[Path, LoadOptions, list[str]], Iterator[Document]]  # warnings about the whole file: 3rd argument


@dataclass
class LoaderSpec:
    name: str
    suffixes: tuple[str, ...]
    load: Loader
    description: str = ""
    # a file is one paper of (marked-up) text: its size is checked against max_document_bytes before it
    # is read, so a 200 MB text file is refused at once instead of filling the memory
    one_document: bool = False
    stream: Streamer | None = None  # the records one by one, as the file is read (see the module's docstring)


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


def display_path(path: str | Path) -> str:
    """The path as printable, storable text: bytes of the name that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _mb(size: float) -> str:
    return f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size / 1e6:.1f} MB"


def check_readable(path: Path, options: LoadOptions, spec: LoaderSpec | None = None) -> None:
    """Reject files no loader can use, with the reason (before reading them)."""
    shown = display_path(path)
    if not path.exists():
        raise LoadError(shown, "file not found" + (" (a dangling symbolic link)" if path.is_symlink() else ""))
    if not path.is_file():
        raise LoadError(shown, "not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise LoadError(shown, "empty file (0 bytes)")
    if size > options.max_bytes:
        raise LoadError(shown, f"file too large ({_mb(size)} > the {_mb(options.max_bytes)} limit, ingest.max_file_mb)")
    if spec is not None and spec.one_document and size > options.max_document_bytes:
        raise LoadError(shown, f"one paper of {_mb(size)} is beyond the {_mb(options.max_document_bytes)} limit "
                               "(ingest.max_document_mb); refused unread")


def _check_document_size(doc: Document, options: LoadOptions) -> str | None:
    size = sum(len(s.text) + len(s.heading) for s in doc.sections)
    if size > options.max_document_bytes:
        return (f"its text of {_mb(size)} is beyond the {_mb(options.max_document_bytes)} limit per paper "
                "(ingest.max_document_mb)")
    return None


def missing_paths(paths: Iterable[str | Path]) -> None:
    """``NotFoundError`` naming every given path that does not exist (nothing is indexed then)."""
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise NotFoundError(f"no such file or directory: {', '.join(missing)}")


def load_file(path: Path, options: LoadOptions | None = None) -> list[Document]:
    """Parse one file; raises LoadError with a reason a user understands. Every text field of the
    documents is valid Unicode (lone surrogates replaced, with a warning). Warnings about the whole
    file go to the first document."""
    warnings: list[str] = []
    docs = list(iter_file(path, options, warnings))
    docs[0].warnings[:0] = warnings
    return docs


def iter_file(path: Path, options: LoadOptions | None, warnings: list[str]) -> Iterator[Document]:
    """The documents of one file, one by one as it is read (a loader with ``stream``) or parsed at
    once; warnings about the whole file go to ``warnings`` (complete once the iterator is). Raises
    LoadError (possibly after some documents) with a reason a user understands."""
    options = options or LoadOptions()
    shown = display_path(path)
    if shown != str(path):
        raise LoadError(shown, NOT_UTF8_NAME)
    spec = loaders().get(suffix_of(path))
    if spec is None:
        known = ", ".join(sorted(loaders()))
        raise LoadError(shown, f"unsupported file type {path.suffix or '(none)'!r}; supported: {known}")
    check_readable(path, options, spec)
    found = spec.stream(path, options, warnings) if spec.stream else iter(spec.load(path, options))
    first, second = next(found, None), next(found, None)
    if first is None:
        raise LoadError(shown, "no documents with text found")
    if second is None:  # one paper: refused when too big, the manifest applies
        yield _single(first, path, options)
        return
    yield from _several(itertools.chain((first, second), found), shown, options, warnings)


def _single(doc: Document, path: Path, options: LoadOptions) -> Document:
    from .surrogates import scrub_document

    scrub_document(doc)
    doc.source_path = doc.source_path or display_path(path)
    if (too_big := _check_document_size(doc, options)) is not None:
        raise LoadError(display_path(path), f"parsed, but {too_big}")
    if options.manifest:
        from .manifest import apply_manifest

        apply_manifest(doc, path, options.manifest)
    return doc


def _several(docs: Iterator[Document], shown: str, options: LoadOptions, warnings: list[str]) -> Iterator[Document]:
    from .surrogates import scrub_document

    kept = 0
    skipped: list[str] = []
    for doc in docs:
        scrub_document(doc)
        doc.source_path = doc.source_path or shown
        too_big = _check_document_size(doc, options)
        if too_big is None:
            kept += 1
            yield doc
        else:
            skipped.append(f"paper {doc.id} ({doc.title[:60]!r}) skipped: {too_big}")
    if not kept:
        raise LoadError(shown, "; ".join(skipped))
    warnings += skipped


def excluded(path: Path, patterns: Iterable[str], under: Path | None = None) -> bool:
    """Whether ``path`` matches a glob of ``patterns``: by file name, by its path relative to the
    directory it was found in (``under``), or by its path as given."""
    names = {path.name, str(path)}
    if under is not None:
        names.add(str(path.relative_to(under)))
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns for name in names)


def iter_files(paths: Iterable[str | Path], exclude: Iterable[str] = (), left_out: list[Path] | None = None
               ) -> Iterator[Path]:
    """Expand directories recursively (sorted, hidden files skipped); files are yielded as given.
    Files matching a glob of ``exclude`` are not yielded (but appended to ``left_out``)."""
    exclude = tuple(exclude)
    for raw in paths:
        path = Path(raw)
        found = _walk(path) if path.is_dir() else [path]
        for child in found:
            if exclude and excluded(child, exclude, path if path.is_dir() else None):
                if left_out is not None:
                    left_out.append(child)
            else:
                yield child


def empty_directory_reason(path: Path, listed: int = 5) -> str:
    """Why a directory gave nothing to index: the files it holds (none of a supported type)."""
    found = sorted(p.name for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
    shown = ", ".join(found[:listed]) + (f" and {len(found) - listed} more" if len(found) > listed else "")
    known = ", ".join(sorted(loaders()))
    return (f"no supported files in this directory ({'found: ' + shown if found else 'it is empty'}); "
            f"supported: {known}")


def _walk(path: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            child = Path(root) / name
            if not name.startswith(".") and supported(child):
                yield child
