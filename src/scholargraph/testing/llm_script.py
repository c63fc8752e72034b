"""The data of a scripted LLM server: replies, rules, injected faults and the counters (shared by
:mod:`.llm_server` and its HTTP handler :mod:`._llm_http`)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Fault", "InFlight", "Reply", "ReplySpec", "Rule", "ServerStats"]


@dataclass
class Reply:
    """One scripted answer. ``status`` >= 400 sends an OpenAI-style error whose message is ``content``;
    ``raw_body`` is sent verbatim instead (malformed JSON, odd streams); ``delay`` replaces the
    server's latency model for this reply; ``usage=False`` leaves token usage out of the response;
    ``finish_reason`` is sent as given ("length" for a reply cut at ``max_tokens``)."""

    content: str = ""
    status: int = 200
    delay: float | None = None
    headers: dict[str, str] | None = None
    raw_body: str | None = None
    usage: bool = True
    finish_reason: str = "stop"  # "length": what a server says of a reply it cut at max_tokens


ReplySpec = str | Reply | Callable[[dict[str, Any]], "str | Reply"]


@dataclass
class Rule:
    """Answer requests whose concatenated message contents match ``pattern`` (``re.search``, DOTALL)."""

    kind: str
    pattern: str
    respond: ReplySpec
    _regex: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._regex = re.compile(self.pattern, re.DOTALL)

    def matches(self, text: str) -> bool:
        return self._regex.search(text) is not None


@dataclass
class Fault:
    kind: str  # fail | hang | drop
    status: int = 500
    body: str | None = None
    retry_after: float | None = None
    seconds: float = 0.0


class ServerStats:
    """Counters, safe to read from the test thread while the server runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.calls = 0  # chat-completion requests received, injected faults included
            self.prompt_tokens = 0  # over successful (200) completions
            self.completion_tokens = 0
            self.in_flight = 0
            self.peak_concurrency = 0
            self.by_kind: dict[str, dict[str, int]] = {}
            self.requests: list[dict[str, Any]] = []  # parsed chat-completion bodies, in arrival order
            self.errors_injected = 0
            self.embedding_calls = 0
            self.embedding_inputs = 0
            self.rerank_calls = 0
            self.rerank_documents = 0
            self.responder_errors: list[str] = []
            self.busy_seconds = 0.0  # sum over chat requests of their time in flight
            self.first_start: float | None = None
            self.last_end: float | None = None
            self.spans: list[tuple[float, float]] = []  # (start, end) of each finished chat request

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "peak_concurrency": self.peak_concurrency,
                "by_kind": {k: dict(v) for k, v in self.by_kind.items()},
                "errors_injected": self.errors_injected,
                "embedding_calls": self.embedding_calls,
                "embedding_inputs": self.embedding_inputs,
                "rerank_calls": self.rerank_calls,
                "responder_errors": list(self.responder_errors),
            }

    def begin_chat(self, request: dict[str, Any]) -> InFlight:
        with self._lock:
            self.calls += 1
            self.requests.append(request)
            self.in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self.in_flight)
            now = time.monotonic()
            self.first_start = now if self.first_start is None else self.first_start
        return InFlight(self, now)

    def count(self, kind: str, prompt: int, completion: int, ok: bool) -> None:
        with self._lock:
            entry = self.by_kind.setdefault(kind, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
            entry["calls"] += 1
            if ok:
                entry["prompt_tokens"] += prompt
                entry["completion_tokens"] += completion
                self.prompt_tokens += prompt
                self.completion_tokens += completion

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def responder_failed(self, message: str) -> None:
        with self._lock:
            self.responder_errors.append(message)

    def leave(self, started: float) -> None:
        with self._lock:
            self.in_flight -= 1
            now = time.monotonic()
            self.busy_seconds += now - started
            self.last_end = now
            self.spans.append((started, now))

    def mean_concurrency(self) -> float:
        """Time-weighted mean number of chat requests in flight between the first request's start
        and the last one's end (exact: busy time / active window)."""
        with self._lock:
            if self.first_start is None or self.last_end is None or self.last_end <= self.first_start:
                return 0.0
            return self.busy_seconds / (self.last_end - self.first_start)

    def concurrency_timeline(self, buckets: int = 20) -> list[float]:
        """Mean requests in flight in each of ``buckets`` equal slices of the active window: shows
        the ramp-up, the steady state and the tail of a run."""
        with self._lock:
            if self.first_start is None or self.last_end is None or self.last_end <= self.first_start:
                return []
            start, width = self.first_start, (self.last_end - self.first_start) / buckets
            busy = [0.0] * buckets
            for begin, end in self.spans:
                for b in range(int((begin - start) / width), min(buckets, int((end - start) / width) + 1)):
                    lo, hi = start + b * width, start + (b + 1) * width
                    busy[b] += max(0.0, min(end, hi) - max(begin, lo))
            return [round(x / width, 1) for x in busy]

    def active_seconds(self) -> float:
        with self._lock:
            if self.first_start is None or self.last_end is None:
                return 0.0
            return self.last_end - self.first_start


class InFlight:
    """Ends a request's in-flight span once. Handlers end it *before* writing the last bytes, so a
    client that reacts to the answer by sending its next request is never counted twice."""

    def __init__(self, stats: ServerStats, started: float):
        self._stats: ServerStats | None = stats
        self._started = started

    def end(self) -> None:
        if self._stats is not None:
            self._stats.leave(self._started)
            self._stats = None
