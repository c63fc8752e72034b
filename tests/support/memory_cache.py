"""An in-memory LLMCache for client tests (the store's cache, without a workspace)."""

from __future__ import annotations

from scholargraph.store.base import CachedResponse, CallRecord


class MemoryCache:
    def __init__(self) -> None:
        self.entries: dict[str, CachedResponse] = {}
        self.calls: list[CallRecord] = []

    def cache_get(self, key: str) -> CachedResponse | None:
        return self.entries.get(key)

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None:
        self.entries[key] = response

    def log_call(self, record: CallRecord) -> None:
        self.calls.append(record)
