"""Storage protocols. The pipeline and query engine only see these; SQLite is one implementation
and a PostgreSQL backend can be another without touching them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..models import Chunk, DocStatus, Document, Usage


def batches(ids, size: int = 500) -> list[list]:
    """``ids`` in lists of at most ``size``: SQLite caps the parameters of one ``IN (...)``."""
    ids = list(ids)
    return [ids[i : i + size] for i in range(0, len(ids), size)]


@dataclass
class DocumentRow:
    id: str
    title: str
    status: DocStatus
    source_path: str
    scope: str
    profile: str
    error: str | None
    created_at: float
    updated_at: float
    chunks: int = 0
    content_md5: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    pmid: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class CachedResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool


@dataclass
class CallRecord:
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    cached: bool
    latency_s: float
    document_id: str | None = None
    status: str = "ok"


class LLMCache(Protocol):
    """Response cache and call log (the LLM client writes both)."""

    def cache_get(self, key: str) -> CachedResponse | None: ...

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None: ...

    def log_call(self, record: CallRecord) -> None: ...


@dataclass
class StoredEntity:
    id: str
    name: str
    type: str
    description: str
    aliases: list[str]
    weight: float
    chunk_ids: list[str]
    document_ids: list[str]
    degree: int = 0


@dataclass
class StoredRelation:
    id: str
    source_id: str
    target_id: str
    description: str
    keywords: list[str]
    types: list[str]
    weight: float
    directed: bool
    confidence: float | None
    chunk_ids: list[str]
    document_ids: list[str]


class VectorIndex(Protocol):
    """Exact (or approximate) nearest neighbours over one namespace of vectors."""

    def search(self, query: np.ndarray, k: int, allowed: set[str] | None = None) -> list[tuple[str, float]]: ...

    def __len__(self) -> int: ...


class Store(LLMCache, Protocol):
    """Everything one workspace holds."""

    # -- lifecycle / meta
    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    # -- documents
    def get_document(self, doc_id: str) -> DocumentRow | None: ...

    def load_document(self, doc_id: str) -> Document | None: ...

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRow]: ...

    def add_pending(self, doc: Document, scope: str, profile: str) -> None: ...

    def set_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None: ...

    def reset_stale_processing(self) -> list[str]: ...

    # -- chunks
    def chunks_of(self, doc_id: str) -> list[Chunk]: ...

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]: ...

    def count(self, table: str) -> int: ...

    # -- vectors
    def vector_index(self, namespace: str) -> VectorIndex: ...

    def iter_vectors(self, namespace: str) -> Iterator[tuple[str, np.ndarray]]: ...

    # -- accounting
    def usage_by_purpose(self, document_id: str | None = None) -> dict[str, Usage]: ...
