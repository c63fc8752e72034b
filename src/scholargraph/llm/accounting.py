"""Per-purpose usage of one LLM client, and the call log it writes.

``usage[purpose]`` counts what the server was actually asked for: ``calls`` and the token fields
cover real HTTP completions only. A cache hit adds 1 to ``cached_calls`` and nothing to the token
fields; the tokens it saved are kept apart in ``cached_usage[purpose]``. The call log
(``LLMCache.log_call``) gets one record per logical call: cache hits carry the tokens of the
original call with ``cached=True`` (saved, not spent). Every HTTP attempt that got no completion
(an error status, a malformed reply, a broken connection, each retry included) adds 1 to
``failed_attempts`` and is logged with ``status="failed"`` and no tokens, so answered calls plus
failed attempts is what the server received.
A stream cut short (consumer stopped, or the connection broke mid-answer) still counts as a call
with the tokens it used (``status="incomplete"``/``"error"``): the server did that work.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..models import PURPOSES, Usage
from ..store.base import FAILED_ATTEMPT, CallRecord, LLMCache


@dataclass
class ChatResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    cached: bool
    latency_s: float
    parsed: Any = None  # what the caller's ``parse`` made of ``text``
    error: Exception | None = None  # what ``parse`` raised instead (the reply was not cached)
    truncated: int = 0  # the reply's length when it was cut at llm.max_reply_chars (0: not cut)
    finish_reason: str | None = None  # the server's; "length": cut by max_tokens or the context
    ends_early: bool = False  # ``parse`` found the reply cut inside a record or JSON value (CutReply)

    @property
    def cut_off(self) -> bool:
        """The reply did not end by itself: the server stopped it for length, the client cut it, or
        it stops inside a record. Such a reply is never cached."""
        return self.finish_reason == "length" or bool(self.truncated) or self.ends_early


class CutReply(ValueError):  # noqa: N818 - a signal from a caller's parse, not a failure
    """Raised by a caller's ``parse`` for a reply that ends inside a record or JSON value: ``value``
    (what its complete part gave) is still used, but the reply is never cached as complete."""

    def __init__(self, value: Any, reason: str = "the reply ends inside a record"):
        super().__init__(reason)
        self.value = value


def check_purpose(purpose: str) -> None:
    if purpose not in PURPOSES:
        raise ValueError(f"unknown LLM call purpose {purpose!r}; expected one of {', '.join(PURPOSES)}")


class UsageLedger:
    def __init__(self, cache: LLMCache | None):
        self.cache = cache
        self.usage: dict[str, Usage] = {}
        self.cached_usage: dict[str, Usage] = {}
        self.by_endpoint: dict[str, Usage] = {}  # per endpoint (base URL): calls it answered, failed attempts

    def record(self, purpose: str, model: str, result: ChatResult, document_id: str | None, status: str = "ok",
               endpoint: str | None = None) -> None:
        """``endpoint``: the base URL that answered (None for a cache hit)."""
        if endpoint is not None:
            served = self.by_endpoint.setdefault(endpoint, Usage())
            served.calls += 1
            served.prompt_tokens += result.prompt_tokens
            served.completion_tokens += result.completion_tokens
            served.estimated_calls += int(result.estimated)
        bucket = self.usage.setdefault(purpose, Usage())
        if result.cached:
            bucket.cached_calls += 1
            saved = self.cached_usage.setdefault(purpose, Usage())
            saved.cached_calls += 1
            saved.prompt_tokens += result.prompt_tokens
            saved.completion_tokens += result.completion_tokens
        else:
            bucket.calls += 1
            bucket.prompt_tokens += result.prompt_tokens
            bucket.completion_tokens += result.completion_tokens
            bucket.estimated_calls += int(result.estimated)
        self._log(
            CallRecord(
                purpose,
                model,
                result.prompt_tokens,
                result.completion_tokens,
                result.estimated,
                result.cached,
                result.latency_s,
                document_id,
                status,
                endpoint,
            )
        )

    def record_failure(self, purpose: str, model: str, document_id: str | None, latency_s: float,
                       endpoint: str | None = None) -> None:
        """One HTTP attempt that got no completion (it is not a call, and spent no counted tokens)."""
        self.usage.setdefault(purpose, Usage()).failed_attempts += 1
        if endpoint is not None:
            self.by_endpoint.setdefault(endpoint, Usage()).failed_attempts += 1
        self._log(CallRecord(purpose, model, 0, 0, False, False, latency_s, document_id, FAILED_ATTEMPT, endpoint))

    def _log(self, record: CallRecord) -> None:
        if self.cache is not None:
            self.cache.log_call(record)

    def snapshot(self) -> dict[str, Usage]:
        return {purpose: dataclasses.replace(u) for purpose, u in self.usage.items()}

    def since(self, snapshot: dict[str, Usage]) -> dict[str, Usage]:
        out: dict[str, Usage] = {}
        for purpose, now in self.usage.items():
            before = snapshot.get(purpose, Usage())
            diff = Usage(**{f.name: getattr(now, f.name) - getattr(before, f.name) for f in dataclasses.fields(Usage)})
            if diff != Usage():
                out[purpose] = diff
        return out
