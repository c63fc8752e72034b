"""Async client for OpenAI-compatible chat-completions servers (Ollama, vLLM, llama.cpp, LM Studio, OpenAI).

Accounting is described in :mod:`scholargraph.llm.accounting`: ``usage`` counts real HTTP calls and
the tokens they cost; cache hits only add to ``cached_calls`` (saved tokens go to ``cached_usage``).

Several servers (``llm.endpoints``) are one client: :mod:`scholargraph.llm.router` picks the
endpoint of each attempt and takes failing ones out; a failed attempt is retried on another
endpoint at once, and with back-off when there is none. A cached reply is found whichever endpoint
wrote it: the key names the model (or the model file of ``local:``), not the server's URL.

One client may be used from several event loops in turn (``asyncio.run`` twice): its HTTP pools
are created lazily for the running loop. It is not thread-safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx

from ..config import LLMSettings
from ..errors import LLMError, LLMUnavailableError, ModelOutputError, PromptTooLongError
from ..models import QUESTION_PURPOSES, Usage
from ..store.base import CachedResponse, LLMCache
from .accounting import ChatResult, CutReply, UsageLedger, check_purpose
from .health import NOTHING_STARTED, ServerLimits, check_server, server_limits
from .http_errors import (
    RETRY_AFTER_STATUS,
    RETRYABLE_STATUS,
    RETRYABLE_TRANSPORT,
    AttemptFailed,
    FeatureRejected,
    backoff_delay,
    is_unreachable,
    rejected_feature,
    retry_after_seconds,
    server_message,
    status_error_message,
    transport_reason,
    unreachable_message,
)
from .http_pools import LoopPools
from .router import Endpoint, Lease, Router
from .streaming import OpenStream, StreamProgress, read_at_most, response_events, stream_pieces
from .wire import (
    Completion,
    MalformedResponse,
    TokenCounter,
    cache_key,
    estimate_tokens,
    messages_text,
    parse_completion,
)

T = TypeVar("T")
CachedRequest = tuple[list[dict], dict[str, Any], dict | None]  # messages, keyed params, schema
MAX_BODY_BYTES = 16 * 2**20  # a reply body beyond max(this, 8 x llm.max_reply_chars) is refused unread
_FORMAT_RANK = {"none": 0, "json_object": 1, "json_schema": 2}
# Completion budget per purpose when llm.max_tokens is not set. Without one, a small local model
# that starts repeating itself writes until the context is full and the call times out; with one,
# the server stops it and says so (finish_reason "length"), and the caller decides what to do.
DEFAULT_MAX_TOKENS = {"extract": 2048, "glean": 1024, "keywords": 256, "parse": 256, "judge": 768,
                      "summarise": 512, "refine": 1024}
FALLBACK_MAX_TOKENS = 1536
PROMPT_MARGIN = 1.15  # our tokenizer is not the server's: leave room for the difference
MIN_COMPLETION_ROOM = 64
_DOWNGRADE = {"json_schema": "json_object", "json_object": "none"}
NOT_SERVED = (401, 403, 404)  # one endpoint of several answering these is taken out, the call goes elsewhere

class LLMClient:
    """Chat completions with retries, a response cache, bounded concurrency and usage accounting."""

    def __init__(self, settings: LLMSettings, cache: LLMCache | None = None, count_tokens: TokenCounter | None = None,
                 cache_identity: str | None = None):
        """``cache_identity``: the model as cached replies know it (default: the served model's name;
        ``local:PATH`` names the model file, whatever name and port its server got)."""
        self.settings = settings
        self.cache_identity = cache_identity
        self.endpoints = [
            Endpoint(i, e.base_url, e.model or "", e.max_concurrency or settings.max_concurrency,
                     e.api_key.get_secret_value() if e.api_key is not None else None)
            for i, e in enumerate(settings.servers())
        ]
        self.router = Router(self.endpoints or [Endpoint(0, "", "", settings.max_concurrency)],
                             settings.endpoint_failures, settings.endpoint_cooldown)
        self.cache = cache
        self.count_tokens: TokenCounter = count_tokens or estimate_tokens
        self.ledger = UsageLedger(cache)
        self.usage: dict[str, Usage] = self.ledger.usage  # per purpose: real calls and spent tokens
        self.cached_usage: dict[str, Usage] = self.ledger.cached_usage  # per purpose: served from the cache
        self.in_flight = 0
        self.peak_in_flight = 0
        self.retried_attempts = 0
        # Downgraded (json_schema -> json_object -> none) when the server rejects response_format.
        self.response_format_mode = "json_schema" if settings.structured_output else "none"
        self._stream_options = True
        self._rng = random.Random()
        self._state: LoopPools | None = None
        self.limits: dict[str, ServerLimits] = {}  # what llama.cpp servers said of their slots and context

    # -- configuration -------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The (first) endpoint's base URL."""
        if not self.endpoints:
            raise LLMUnavailableError("no LLM server configured: set llm.base_url (e.g. http://localhost:11434/v1)")
        return self.endpoints[0].base_url

    @property
    def model(self) -> str:
        """The (first) endpoint's model."""
        _ = self.base_url
        if not self.endpoints[0].model:
            raise LLMUnavailableError("no LLM model configured: set llm.model")
        return self.endpoints[0].model

    @property
    def server(self) -> ServerLimits | None:
        """What the (first) endpoint said of its slots and context (llama.cpp's /props), if anything."""
        return self.limits.get(self.endpoints[0].label) if self.endpoints else None

    def _pools(self) -> LoopPools:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            self.router.close()  # a wake-up timer of an earlier loop
            self._state = LoopPools([(e.slots, e.api_key) for e in self.endpoints], self.settings.timeout)
        return self._state

    async def aclose(self) -> None:
        state, self._state = self._state, None
        self.router.close()
        if state is not None:
            await state.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- public calls --------------------------------------------------------------------
    async def chat(
        self,
        messages: list[dict],
        *,
        purpose: str,
        schema: dict | None = None,
        schema_name: str = "output",
        document_id: str | None = None,
        params: dict | None = None,
        use_cache: bool = True,
        parse: Callable[[str], Any] | None = None,
    ) -> ChatResult:
        """One completion. ``schema`` asks for structured JSON output when the server supports it.

        ``parse`` turns the reply into what the caller needs, raising ``ModelOutputError`` or
        ``ValueError`` when it cannot: only a reply that parsed is cached (a cached reply that no
        longer parses is asked for again), its value is ``result.parsed`` and the exception
        ``result.error``. Without ``parse`` any non-empty reply is cached. A reply longer than
        ``llm.max_reply_chars`` is cut there (``result.truncated``) and never cached."""
        check_purpose(purpose)
        merged = self._fitted(messages, self._params(purpose, params))
        request = (messages, _keyed(merged), schema)
        started = time.perf_counter()
        if (hit := self._cache_get(request, use_cache)) is not None:
            result = self._cached_result(hit, started)
            if _parsed(result, parse):
                self._record(purpose, result, document_id)
                return result
        completion, endpoint = await self._with_fallbacks(
            lambda: self._body(messages, merged, schema, schema_name, stream=False),
            functools.partial(self._post_completion, urgent=purpose in QUESTION_PURPOSES),
            functools.partial(self._log_failure, purpose, document_id),
        )
        result = self._result(
            messages, completion.text, completion.prompt_tokens, completion.completion_tokens, started,
            completion.finish_reason,
        )
        self._record(purpose, result, document_id, endpoint=endpoint)
        if _parsed(result, parse) and not result.cut_off:
            self._cache_put(request, endpoint, purpose, result, use_cache)
        return result

    async def stream_chat(
        self, messages: list[dict], *, purpose: str, params: dict | None = None, document_id: str | None = None
    ) -> AsyncIterator[str]:
        """Content pieces as the server sends them. Consume it fully or close it (``contextlib.aclosing``):
        it holds a concurrency slot until then."""
        check_purpose(purpose)
        merged = self._fitted(messages, self._params(purpose, params))
        request = (messages, _keyed(merged), None)
        started = time.perf_counter()
        if (hit := self._cache_get(request, True)) is not None:
            result = self._cached_result(hit, started)
            self._record(purpose, result, document_id)
            if result.text:
                yield result.text
            return
        progress = StreamProgress()
        status = "incomplete"
        endpoint: Endpoint | None = None
        try:
            opened, answering = await self._with_fallbacks(
                lambda: self._body(messages, merged, None, "", stream=True),
                functools.partial(self._open_stream, urgent=purpose in QUESTION_PURPOSES),
                functools.partial(self._log_failure, purpose, document_id),
            )
            progress.opened, endpoint = True, answering
            async with (
                opened.stack,
                contextlib.aclosing(stream_pieces(opened, progress, answering.base_url, self.settings.timeout,
                                                  self.settings.max_reply_chars)) as pieces,
            ):
                async for piece in pieces:
                    yield piece
            status = "ok"
        except LLMError:
            status = "error"
            raise
        finally:
            self._finish_stream(request, endpoint, purpose, document_id, progress, status, started)

    async def health_check(self) -> list[str]:
        """Check every endpoint: it answers and serves its model; a llama.cpp server also says how many
        requests it runs at once (no more are sent) and its context. Raise LLMUnavailableError when
        none can be used (one endpoint: its own message); otherwise the endpoints that cannot are
        taken out for now (tried again later) and returned as "URL: reason" lines."""
        _ = self.model
        pools = self._pools()
        timeout = min(10.0, self.settings.timeout)
        outcomes = await asyncio.gather(*(self._check_endpoint(e, pools.by_endpoint[e.index].http, timeout)
                                          for e in self.endpoints), return_exceptions=True)
        down: list[tuple[Endpoint, LLMUnavailableError]] = []
        for endpoint, outcome in zip(self.endpoints, outcomes, strict=True):
            if isinstance(outcome, LLMUnavailableError):
                down.append((endpoint, outcome))
            elif isinstance(outcome, BaseException):
                raise outcome
        if len(self.endpoints) == 1 and down:
            raise down[0][1]
        lines = [f"{e.label}: {str(error).removesuffix(NOTHING_STARTED).strip()}" for e, error in down]
        if len(down) == len(self.endpoints):
            listed = "\n  ".join(lines)
            raise LLMUnavailableError(f"none of the {len(lines)} LLM endpoints (llm.endpoints) can be used:\n  {listed}\n"
                                      f"{NOTHING_STARTED}")
        for endpoint, error in down:
            self.router.take_out(endpoint, str(error))
        return lines

    async def _check_endpoint(self, endpoint: Endpoint, http: httpx.AsyncClient, timeout: float) -> None:
        await check_server(http, endpoint.base_url, endpoint.model, timeout)
        limits = await server_limits(http, endpoint.base_url, timeout)
        if limits is not None:
            self.limits[endpoint.label] = limits
            if limits.slots:
                endpoint.cap(limits.slots)

    @property
    def concurrency(self) -> int:
        """Requests sent at once over every endpoint: each one's ``max_concurrency``, or fewer when
        its server has fewer slots."""
        return sum(e.capacity for e in self.endpoints) or self.settings.max_concurrency

    def usage_snapshot(self) -> dict[str, Usage]:
        return self.ledger.snapshot()

    def usage_since(self, snapshot: dict[str, Usage]) -> dict[str, Usage]:
        """Usage added since ``snapshot`` (from usage_snapshot), per purpose; unchanged purposes are left out."""
        return self.ledger.since(snapshot)

    # -- request building ----------------------------------------------------------------
    def _params(self, purpose: str, params: dict | None) -> dict[str, Any]:
        merged: dict[str, Any] = {"temperature": self.settings.temperature}
        merged["max_tokens"] = self.settings.max_tokens or DEFAULT_MAX_TOKENS.get(purpose, FALLBACK_MAX_TOKENS)
        merged.update(params or {})
        return merged

    def _fitted(self, messages: list[dict], params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with ``max_tokens`` lowered to what the server's context leaves after the prompt;
        a prompt that leaves too little is refused with the sizes (never cut silently)."""
        contexts = [limits.context_per_slot for limits in self.limits.values() if limits.context_per_slot]
        context = min(contexts) if contexts else None  # the prompt must fit whichever endpoint takes it
        if not context:
            return params
        prompt = int(self.count_tokens(messages_text(messages)) * PROMPT_MARGIN) + 8 * len(messages)
        room = context - prompt
        if room < MIN_COMPLETION_ROOM:
            raise PromptTooLongError(
                f"a prompt of about {prompt:,} tokens does not fit the {context:,}-token context of each slot of "
                f"{self.base_url} (llama.cpp gives each of its slots n_ctx / n_parallel): start the server with "
                "a larger context or fewer slots, or lower chunking.size / query.max_context_tokens")
        if params.get("max_tokens") and params["max_tokens"] > room:
            return {**params, "max_tokens": room}
        return params

    def _body(
        self, messages: list[dict], params: dict[str, Any], schema: dict | None, schema_name: str, *, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **params}  # each endpoint: its model
        if schema is not None and self.response_format_mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": False},
            }
        elif schema is not None and self.response_format_mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        if stream:
            body["stream"] = True
            if self._stream_options:
                body["stream_options"] = {"include_usage": True}
        return body

    def _downgrade(self, feature: str, body: dict[str, Any]) -> None:
        """Stop sending a feature the server rejected; remembered for the client's lifetime."""
        if feature == "stream_options":
            self._stream_options = False
            return
        lower = _DOWNGRADE[body["response_format"]["type"]]
        if _FORMAT_RANK[lower] < _FORMAT_RANK[self.response_format_mode]:
            self.response_format_mode = lower

    # -- attempts and retries ------------------------------------------------------------
    async def _with_fallbacks(
        self, build: Callable[[], dict[str, Any]], attempt: Callable[[dict], Awaitable[T]],
        failed: Callable[[float, Endpoint | None], None],
    ) -> T:
        """``failed(started, endpoint)`` is told of every HTTP attempt that got no completion (accounting)."""
        _ = self.base_url  # no server configured: an error before any attempt
        while True:
            body = build()
            try:
                return await self._retrying(functools.partial(attempt, body), failed)
            except FeatureRejected as rejected:
                self._downgrade(rejected.feature, body)

    async def _retrying(self, attempt: Callable[[], Awaitable[T]], failed: Callable[[float, Endpoint | None], None]) -> T:
        attempts = self.settings.retries + 1
        for number in range(attempts):
            started = time.perf_counter()
            try:
                return await attempt()
            except (LLMError, FeatureRejected):
                failed(started, None)
                raise
            except AttemptFailed as failure:
                endpoint = self.endpoints[failure.endpoint] if failure.endpoint is not None else None
                failed(started, endpoint)
                if number + 1 >= attempts:
                    raise self._exhausted(failure, attempts, endpoint) from failure
                self.retried_attempts += 1
                if endpoint is not None and self.router.breaks and self.router.another_in_service(endpoint):
                    continue  # another endpoint takes the retry now
                s = self.settings
                await asyncio.sleep(
                    backoff_delay(number, s.backoff_base, s.backoff_max, self._rng, failure.retry_after)
                )
        raise AssertionError("unreachable")

    def _exhausted(self, failure: AttemptFailed, attempts: int, endpoint: Endpoint | None) -> LLMError:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        url = endpoint.base_url if endpoint is not None else self.base_url
        model = endpoint.model if endpoint is not None else self.model
        if failure.unreachable:
            return LLMUnavailableError(f"{unreachable_message(url, failure.reason)} (gave up after {tries})")
        return LLMError(f"LLM call to {url} (model '{model}') failed after {tries}: {failure.reason}")

    @contextlib.asynccontextmanager
    async def _slot(self, urgent: bool) -> AsyncIterator[tuple[Endpoint, httpx.AsyncClient]]:
        """Wait for a slot on the endpoint with the most free capacity (``urgent``: a question's call,
        served before bulk calls); yields that endpoint and the HTTP pool of the slot. An attempt that
        fails there (``AttemptFailed``) counts against the endpoint; one that gets an answer clears it."""
        pools = self._pools()
        lease: Lease = await self.router.acquire(urgent)
        endpoint = lease.endpoint
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield endpoint, pools.by_endpoint[endpoint.index].for_slot(lease.slot)
        except AttemptFailed as failure:
            failure.endpoint = endpoint.index
            self.router.failed(endpoint, failure.reason, at_once=failure.unreachable)
            raise
        else:
            self.router.succeeded(endpoint)
        finally:
            self.in_flight -= 1
            self.router.release(lease)

    def _transport_failure(self, exc: httpx.TransportError, endpoint: Endpoint) -> AttemptFailed | LLMError:
        reason = transport_reason(exc, self.settings.timeout)
        if isinstance(exc, RETRYABLE_TRANSPORT):
            return AttemptFailed(reason, unreachable=is_unreachable(exc))
        return LLMError(f"LLM call to {endpoint.base_url} failed: {reason}")

    def _check_status(self, response: httpx.Response, body: dict[str, Any], endpoint: Endpoint) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        message = server_message(response)
        if status in RETRYABLE_STATUS:
            retry_after = retry_after_seconds(response) if status in RETRY_AFTER_STATUS else None
            raise AttemptFailed(f"HTTP {status}: {message}", retry_after=retry_after)
        if (feature := rejected_feature(status, message, body)) is not None:
            raise FeatureRejected(feature)
        text = status_error_message(status, message, str(response.request.url), endpoint.model)
        if status in NOT_SERVED and self.router.breaks:
            raise AttemptFailed(text, unreachable=True)  # this endpoint is misconfigured: the others may serve
        error = LLMUnavailableError if status in NOT_SERVED else LLMError
        raise error(text)

    async def _post_completion(self, body: dict[str, Any], urgent: bool = False) -> tuple[Completion, Endpoint]:
        limit = max(MAX_BODY_BYTES, 8 * self.settings.max_reply_chars)
        async with self._slot(urgent) as (endpoint, http):
            sent = {**body, "model": endpoint.model}
            try:
                async with http.stream("POST", f"{endpoint.base_url}/chat/completions", json=sent) as streamed:
                    content = await read_at_most(streamed, limit)
            except httpx.TransportError as exc:
                raise self._transport_failure(exc, endpoint) from exc
            response = httpx.Response(streamed.status_code, headers=streamed.headers, content=content or b"",
                                      request=streamed.request)
            self._check_status(response, sent, endpoint)
            if content is None:
                raise LLMError(f"the reply from {endpoint.base_url} (model '{endpoint.model}') is larger than "
                               f"{limit / 1e6:.0f} MB: refused unread (the limit follows llm.max_reply_chars)")
            try:
                return parse_completion(content), endpoint
            except MalformedResponse as exc:
                raise AttemptFailed(f"malformed response from server: {exc}") from exc

    async def _open_stream(self, body: dict[str, Any], urgent: bool = False) -> tuple[OpenStream, Endpoint]:
        """Send a streamed request and read up to its first event; failures so far may be retried."""
        stack = contextlib.AsyncExitStack()
        endpoint, http = await stack.enter_async_context(self._slot(urgent))
        try:
            sent = {**body, "model": endpoint.model}
            request = http.build_request("POST", f"{endpoint.base_url}/chat/completions", json=sent)
            response = await http.send(request, stream=True)
            stack.push_async_callback(response.aclose)
            if response.status_code >= 300:
                await response.aread()
                self._check_status(response, sent, endpoint)
            events = response_events(response)
            stack.push_async_callback(events.aclose)
            return OpenStream(stack, await anext(events, None), events), endpoint
        except httpx.TransportError as exc:
            failure = self._transport_failure(exc, endpoint)
            await _close_with(stack, failure)
            raise failure from exc
        except MalformedResponse as exc:
            failure = AttemptFailed(f"malformed response from server: {exc}")
            await _close_with(stack, failure)
            raise failure from exc
        except BaseException as exc:
            await _close_with(stack, exc)
            raise

    # -- results, cache, accounting ------------------------------------------------------
    def _result(
        self, messages: list[dict], text: str, prompt: int | None, completion: int | None, started: float,
        finish_reason: str | None = None,
    ) -> ChatResult:
        estimated = prompt is None or completion is None
        if estimated:
            prompt, completion = self.count_tokens(messages_text(messages)), self.count_tokens(text)
        latency = time.perf_counter() - started
        cut = len(text) if len(text) > self.settings.max_reply_chars else 0
        return ChatResult(text[: self.settings.max_reply_chars], int(prompt or 0), int(completion or 0), estimated,
                          False, latency, truncated=cut, finish_reason=finish_reason)

    def _key(self, model: str, request: CachedRequest) -> str:
        """A request's cache key: the model (or ``cache_identity``) and the request, not the server,
        so that endpoints serving the same model share their replies and another model finds none."""
        messages, params, schema = request
        return cache_key(self.cache_identity or "", model, messages, params, schema)

    def _cache_keys(self, request: CachedRequest) -> list[str]:
        """Where a reply to ``request`` may be: under each model of the endpoints, then (one server
        set as ``llm.base_url``) under the key of earlier versions, which named the server's URL."""
        keys = [self._key(model, request) for model in dict.fromkeys(e.model for e in self.endpoints)]
        if not self.settings.endpoints and self.cache_identity is None and self.endpoints:
            keys.append(cache_key(self.base_url, self.model, *request))
        return keys

    def _cache_get(self, request: CachedRequest, use_cache: bool) -> CachedResponse | None:
        if self.cache is None or not (use_cache and self.settings.cache):
            return None
        for key in self._cache_keys(request):
            if (hit := self.cache.cache_get(key)) is not None:
                return hit
        return None

    def _cache_put(self, request: CachedRequest, endpoint: Endpoint, purpose: str, result: ChatResult,
                   use_cache: bool) -> None:
        if self.cache is None or not (use_cache and self.settings.cache) or not result.text:
            return  # an empty answer is more likely a glitch than worth replaying
        response = CachedResponse(result.text, result.prompt_tokens, result.completion_tokens, result.estimated)
        self.cache.cache_put(self._key(endpoint.model, request), endpoint.model, purpose, response)

    def _cached_result(self, hit: CachedResponse, started: float) -> ChatResult:
        latency = time.perf_counter() - started
        return ChatResult(hit.text, hit.prompt_tokens, hit.completion_tokens, hit.estimated, True, latency)

    def _finish_stream(
        self,
        request: CachedRequest,
        endpoint: Endpoint | None,
        purpose: str,
        document_id: str | None,
        progress: StreamProgress,
        status: str,
        started: float,
    ) -> None:
        if not progress.opened or endpoint is None:
            return  # every attempt to open it was logged as a failed attempt
        text = "".join(progress.pieces)
        result = self._result(request[0], text, progress.prompt_tokens, progress.completion_tokens, started,
                              progress.finish_reason)
        self._record(purpose, result, document_id, status=status, endpoint=endpoint)  # spent even if cut short
        if status == "ok" and not progress.truncated and not result.cut_off:
            self._cache_put(request, endpoint, purpose, result, True)

    def _record(self, purpose: str, result: ChatResult, document_id: str | None, status: str = "ok",
                endpoint: Endpoint | None = None) -> None:
        if endpoint is None:  # a cache hit: no server was asked
            self.ledger.record(purpose, self.model, result, document_id, status)
        else:
            self.ledger.record(purpose, endpoint.model, result, document_id, status, endpoint.label)

    def _log_failure(self, purpose: str, document_id: str | None, started: float, endpoint: Endpoint | None) -> None:
        model, label = (endpoint.model, endpoint.label) if endpoint is not None else (self.model, None)
        self.ledger.record_failure(purpose, model, document_id, time.perf_counter() - started, label)


async def _close_with(stack: contextlib.AsyncExitStack, exc: BaseException) -> None:
    """Close ``stack`` as if ``exc`` had been raised inside it (the slot then counts the failure)."""
    await stack.__aexit__(type(exc), exc, exc.__traceback__)


def _keyed(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters a cached reply depends on: not ``max_tokens``, since only a reply that ended by
    itself is cached, and that one is the same whatever budget it was given (a reply that a smaller
    budget cut is asked again with a larger one, and found in the cache the next time)."""
    return {k: v for k, v in params.items() if k != "max_tokens"}


def _parsed(result: ChatResult, parse: Callable[[str], Any] | None) -> bool:
    """Apply the caller's ``parse`` to the reply; True when it is usable and whole (it parsed, or there
    is no ``parse`` and the reply is not empty). A ``CutReply`` from ``parse`` gives its value, marked
    ``ends_early``, and False (not to be cached)."""
    if parse is None:
        return bool(result.text)
    try:
        result.parsed = parse(result.text)
    except CutReply as cut:  # usable, but not whole: never cached
        result.parsed, result.ends_early = cut.value, True
        return False
    except (ModelOutputError, ValueError) as exc:
        result.error = exc
        return False
    return True
