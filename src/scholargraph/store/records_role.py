"""The records a store keeps beside the graph -- LLM response cache, call log, embedding cache --
are one role object per backend (``sqlite.records.SQLiteRecords``, ``postgres.records.PostgresRecords``:
their own file, thread and connection). :class:`KeepsRecords` answers the store's part of the
contract (:class:`~.base.LLMCache`, :class:`~.base.CallLog`, :class:`~.base.EmbeddingCache`) from
that object, once for both backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..models import Usage
from .base import CachedResponse, CallLog, CallRecord, EmbeddingCache, LLMCache


class Records(LLMCache, CallLog, EmbeddingCache, Protocol):
    def flush_records(self) -> None:
        """Write what is buffered (call log rows) now."""
        ...


class KeepsRecords:
    """A store whose records are its ``records`` role object."""

    records: Records

    def cache_get(self, key: str) -> CachedResponse | None:
        return self.records.cache_get(key)

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None:
        self.records.cache_put(key, model, purpose, response)

    def log_call(self, record: CallRecord) -> None:
        self.records.log_call(record)

    def usage_by_purpose(self, document_id: str | None = None) -> dict[str, Usage]:
        return self.records.usage_by_purpose(document_id)

    def usage_by_document(self) -> dict[str, dict[str, Usage]]:
        return self.records.usage_by_document()

    def usage_by_endpoint(self) -> dict[str, Usage]:
        return self.records.usage_by_endpoint()

    def embedding_usage_by_endpoint(self) -> dict[str, Usage]:
        return self.records.embedding_usage_by_endpoint()

    def embedding_get(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return self.records.embedding_get(model, hashes)

    def embedding_put(self, model: str, items: dict[str, np.ndarray]) -> None:
        self.records.embedding_put(model, items)

    def flush_records(self) -> None:
        self.records.flush_records()
