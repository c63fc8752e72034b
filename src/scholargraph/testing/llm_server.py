"""A scripted OpenAI-compatible server on loopback, for tests and benchmarks.

    with ScriptedLLMServer(rules=[Rule("extract", r"Extract entities", '{"entities": []}')],
                           latency=0.5) as server:
        settings = LLMSettings(base_url=server.base_url, model="scripted-model")
        ...
        server.stats.calls, server.stats.by_kind["extract"]

Endpoints (also without the ``/v1`` prefix): ``GET /v1/models``, ``POST /v1/chat/completions``
(plain or ``stream: true`` server-sent events) and ``POST /v1/embeddings`` (deterministic unit
vectors, as float lists or base64 float32 per ``encoding_format``). Each connection is served by its own thread with HTTP/1.1 keep-alive, so hundreds of
slow requests can be in flight at once. Injected faults (``fail_next``, ``hang_next``,
``drop_next``) are consumed in order by the next POST requests, chat or embeddings.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..llm.wire import estimate_tokens, messages_text
from ._llm_http import LLMHTTPServer, unit_vector

__all__ = ["Reply", "Rule", "ScriptedLLMServer", "ServerStats", "unit_vector"]


@dataclass
class Reply:
    """One scripted answer. ``status`` >= 400 sends an OpenAI-style error whose message is ``content``;
    ``raw_body`` is sent verbatim instead (malformed JSON, odd streams); ``delay`` replaces the
    server's latency model for this reply; ``usage=False`` leaves token usage out of the response."""

    content: str = ""
    status: int = 200
    delay: float | None = None
    headers: dict[str, str] | None = None
    raw_body: str | None = None
    usage: bool = True


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
class _Fault:
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
                "responder_errors": list(self.responder_errors),
            }

    def begin_chat(self, request: dict[str, Any]) -> _InFlight:
        with self._lock:
            self.calls += 1
            self.requests.append(request)
            self.in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self.in_flight)
            now = time.monotonic()
            self.first_start = now if self.first_start is None else self.first_start
        return _InFlight(self, now)

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

    def _leave(self, started: float) -> None:
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


class _InFlight:
    """Ends a request's in-flight span once. Handlers end it *before* writing the last bytes, so a
    client that reacts to the answer by sending its next request is never counted twice."""

    def __init__(self, stats: ServerStats, started: float):
        self._stats: ServerStats | None = stats
        self._started = started

    def end(self) -> None:
        if self._stats is not None:
            self._stats._leave(self._started)
            self._stats = None


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port unless ``port`` is given).

    A chat request is answered by the first matching ``rules`` entry (counted under its kind),
    else by ``responder``, else by ``default_reply`` (both counted as "other"). A reply spec is a
    string, a :class:`Reply`, or a callable taking the parsed request and returning either.
    Latency: ``latency`` + ``latency_per_prompt_token`` x prompt tokens before the first byte, plus
    ``latency_per_completion_token`` x completion tokens (spread over the pieces when streaming);
    a reply's own ``delay`` replaces all of it. Tokens are counted with ``count_tokens`` over the
    message contents joined by newlines (default: the client's len/4 estimate).
    """

    def __init__(
        self,
        responder: ReplySpec | None = None,
        *,
        rules: list[Rule] | None = None,
        default_reply: ReplySpec = "OK",
        models: list[str] | None = None,
        latency: float = 0.0,
        latency_per_prompt_token: float = 0.0,
        latency_per_completion_token: float = 0.0,
        count_tokens: Callable[[str], int] | None = None,
        embedding_dim: int = 384,
        embedding_latency: float = 0.0,
        embedding_encodings: tuple[str, ...] = ("float", "base64"),
        api_key: str | None = None,
        strict_models: bool = False,
        serve_models_endpoint: bool = True,
        port: int = 0,
    ):
        self.responder = responder
        self.rules = list(rules or [])
        self.default_reply = default_reply
        self.models = list(models) if models is not None else ["scripted-model"]
        self.latency = latency
        self.latency_per_prompt_token = latency_per_prompt_token
        self.latency_per_completion_token = latency_per_completion_token
        self.count_tokens = count_tokens or estimate_tokens
        self.embedding_dim = embedding_dim
        self.embedding_latency = embedding_latency
        self.embedding_encodings = embedding_encodings  # an encoding_format not listed is answered 400
        self.api_key = api_key
        self.strict_models = strict_models  # 404 for a model not in ``models``, like Ollama
        self.serve_models_endpoint = serve_models_endpoint  # False: GET /models answers 404
        self.stats = ServerStats()
        self._port = port
        self._faults: deque[_Fault] = deque()
        self._faults_lock = threading.Lock()
        self._httpd: LLMHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._bound_port: int | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ScriptedLLMServer:
        if self._httpd is not None:
            return self
        httpd = LLMHTTPServer(("127.0.0.1", self._port), self)
        self._httpd = httpd
        self._bound_port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (still readable after stop(), for messages that name the URL)."""
        if self._bound_port is None:
            raise RuntimeError("the scripted LLM server was never started; call start() or use it as a context manager")
        return self._bound_port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- fault injection -------------------------------------------------------------------
    def fail_next(
        self, n: int = 1, status: int = 500, body: str | None = None, retry_after: float | None = None
    ) -> None:
        """Answer the next ``n`` POSTs with ``status`` (an OpenAI-style error, or ``body`` verbatim)."""
        self._queue(n, _Fault("fail", status=status, body=body, retry_after=retry_after))

    def hang_next(self, n: int = 1, seconds: float = 5.0) -> None:
        """Stall the next ``n`` POSTs for ``seconds`` before answering normally."""
        self._queue(n, _Fault("hang", seconds=seconds))

    def drop_next(self, n: int = 1) -> None:
        """Close the connection of the next ``n`` POSTs without answering."""
        self._queue(n, _Fault("drop"))

    def _queue(self, n: int, fault: _Fault) -> None:
        with self._faults_lock:
            self._faults.extend([fault] * n)

    def take_fault(self) -> _Fault | None:
        with self._faults_lock:
            fault = self._faults.popleft() if self._faults else None
        if fault is not None:
            self.stats.add("errors_injected")
        return fault

    # -- scripted answers ------------------------------------------------------------------
    def resolve(self, request: dict[str, Any]) -> tuple[str, Reply]:
        """The kind (first matching rule, else "other") and the reply for one chat request."""
        text = messages_text(request.get("messages") or [])
        for rule in self.rules:
            if rule.matches(text):
                return rule.kind, self._reply(rule.respond, request)
        spec = self.responder if self.responder is not None else self.default_reply
        return "other", self._reply(spec, request)

    def _reply(self, spec: ReplySpec, request: dict[str, Any]) -> Reply:
        try:
            value = spec(request) if callable(spec) else spec
        except Exception as exc:  # a broken test responder becomes a visible 500, not a hung client
            self.stats.responder_failed(repr(exc))
            return Reply(f"scripted responder failed: {exc!r}", status=500)
        return Reply(content=value) if isinstance(value, str) else value

    def delay_for(self, reply: Reply, prompt_tokens: int, completion_tokens: int) -> tuple[float, float]:
        """(seconds before the first byte, seconds spread over the streamed pieces)."""
        if reply.delay is not None:
            return reply.delay, 0.0
        first = self.latency + self.latency_per_prompt_token * prompt_tokens
        return first, self.latency_per_completion_token * completion_tokens
