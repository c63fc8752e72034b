"""A scripted OpenAI-compatible server on loopback, for tests and benchmarks.

    with ScriptedLLMServer(rules=[Rule("extract", r"Extract entities", '{"entities": []}')],
                           latency=0.5) as server:
        settings = LLMSettings(base_url=server.base_url, model="scripted-model")
        ...
        server.stats.calls, server.stats.by_kind["extract"]

Endpoints (also without the ``/v1`` prefix): ``GET /v1/models``, ``POST /v1/chat/completions``
(plain or ``stream: true`` server-sent events), ``POST /v1/embeddings`` (deterministic unit
vectors from ``embedding_fn``: random per text by default, ``word_vector`` for texts that share
words to be similar; as float lists or base64 float32 per ``encoding_format``) and ``POST /v1/rerank``
(``{"query", "documents", "top_n"}`` -> ``{"results": [{"index", "relevance_score"}]}``, scored by
``rerank_score``). Each connection is served by its own thread with HTTP/1.1 keep-alive, so hundreds of
slow requests can be in flight at once. Injected faults (``fail_next``, ``hang_next``,
``drop_next``) are consumed in order by the next POST requests, chat or embeddings.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from ..llm.wire import estimate_tokens, messages_text
from ._llm_http import LLMHTTPServer, unit_vector, word_vector
from .llm_script import Fault, Reply, ReplySpec, Rule, ServerStats

__all__ = ["Reply", "Rule", "ScriptedLLMServer", "ServerStats", "unit_vector", "word_vector"]


def _shared_words(query: str, document: str) -> float:
    return float(len(set(query.lower().split()) & set(document.lower().split())))


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port unless ``port`` is given).

    A chat request is answered by the first matching ``rules`` entry (counted under its kind),
    else by ``responder``, else by ``default_reply`` (both counted as "other"). A reply spec is a
    string, a :class:`Reply`, or a callable taking the parsed request and returning either.
    Latency: ``latency`` + ``latency_per_prompt_token`` x prompt tokens before the first byte, plus
    ``latency_per_completion_token`` x completion tokens (spread over the pieces when streaming);
    a reply's own ``delay`` replaces all of it. Tokens are counted with ``count_tokens`` over the
    message contents joined by newlines (default: the client's len/4 estimate). ``max_parallel``:
    how many chat requests are worked on at once (1 = a single local GPU server such as
    llama.cpp with one slot); the others wait their turn, which the client sees as latency.
    ``props``: what ``GET /props`` answers, as llama.cpp's server does (:func:`llama_props`).
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
        embedding_fn: Callable[[str, int], list[float]] = unit_vector,
        embedding_encodings: tuple[str, ...] = ("float", "base64"),
        api_key: str | None = None,
        strict_models: bool = False,
        serve_models_endpoint: bool = True,
        rerank_score: Callable[[str, str], float] | None = None,
        port: int = 0,
        max_parallel: int | None = None,
        props: dict[str, Any] | None = None,
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
        self.embedding_fn = embedding_fn  # (text, dim) -> unit vector; word_vector makes shared words similar
        self.embedding_encodings = embedding_encodings  # an encoding_format not listed is answered 400
        self.api_key = api_key
        self.strict_models = strict_models  # 404 for a model not in ``models``, like Ollama
        self.serve_models_endpoint = serve_models_endpoint  # False: GET /models answers 404
        # POST /rerank scores (query, document); default: shared lower-case words
        self.rerank_score = rerank_score or _shared_words
        self.stats = ServerStats()
        self._working = threading.BoundedSemaphore(max_parallel) if max_parallel else None
        self.props = props  # served at GET /props like llama.cpp's server ({"total_slots": n, ...}); None: 404
        self._port = port
        self._faults: deque[Fault] = deque()
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
        self._queue(n, Fault("fail", status=status, body=body, retry_after=retry_after))

    def hang_next(self, n: int = 1, seconds: float = 5.0) -> None:
        """Stall the next ``n`` POSTs for ``seconds`` before answering normally."""
        self._queue(n, Fault("hang", seconds=seconds))

    def drop_next(self, n: int = 1) -> None:
        """Close the connection of the next ``n`` POSTs without answering."""
        self._queue(n, Fault("drop"))

    def _queue(self, n: int, fault: Fault) -> None:
        with self._faults_lock:
            self._faults.extend([fault] * n)

    def take_fault(self) -> Fault | None:
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

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """Held while a chat request is answered (its responder and its latency)."""
        if self._working is None:
            yield
            return
        with self._working:
            yield

    def delay_for(self, reply: Reply, prompt_tokens: int, completion_tokens: int) -> tuple[float, float]:
        """(seconds before the first byte, seconds spread over the streamed pieces)."""
        if reply.delay is not None:
            return reply.delay, 0.0
        first = self.latency + self.latency_per_prompt_token * prompt_tokens
        return first, self.latency_per_completion_token * completion_tokens


def llama_props(slots: int, context_per_slot: int) -> dict[str, Any]:
    """The part of llama.cpp's ``GET /props`` answer that tells its slots and their context."""
    return {"total_slots": slots, "default_generation_settings": {"n_ctx": context_per_slot}}
