"""Classifying HTTP failures of an OpenAI-compatible server, and wording them for users."""

from __future__ import annotations

import email.utils
import json
import random
import time

import httpx

# Statuses worth another attempt: rate limits, and the usual overloaded/restarting gateway answers.
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
RETRY_AFTER_STATUS = frozenset({429, 503})
# Transport failures worth another attempt (timeouts, resets, a server that closed the socket).
RETRYABLE_TRANSPORT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)

OLLAMA_HINT = "Is it running? (Ollama: `ollama serve`; set llm.base_url)"


class AttemptFailed(Exception):
    """One attempt failed in a way that another attempt may fix."""

    def __init__(self, reason: str, *, retry_after: float | None = None, unreachable: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.unreachable = unreachable
        self.endpoint: int | None = None  # the client's endpoint the attempt went to


class FeatureRejected(Exception):
    """The server rejected an optional request feature (see rejected_feature); resend without it."""

    def __init__(self, feature: str):
        super().__init__(feature)
        self.feature = feature


def server_message(response: httpx.Response, limit: int = 500) -> str:
    """The server's own error text: OpenAI ``{"error": {"message"}}``, FastAPI ``detail``, or the body."""
    text = response.text.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:limit]
        for key in ("error", "message", "detail"):
            if data.get(key):
                value = data[key]
                return (value if isinstance(value, str) else json.dumps(value))[:limit]
    return text[:limit] or response.reason_phrase or "(no message)"


def retry_after_seconds(response: httpx.Response) -> float | None:
    """``Retry-After`` as seconds (a number, or an HTTP date); None when absent or unreadable."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random, retry_after: float | None) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): the server's Retry-After when it
    gave one, else exponential backoff with full jitter; never more than ``cap``."""
    if retry_after is not None:
        return min(cap, retry_after)
    return rng.uniform(0.0, min(cap, base * 2**attempt))


def transport_reason(exc: httpx.TransportError, timeout: float) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"timed out connecting after {timeout:g}s"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out after {timeout:g}s"
    if is_connection_refused(exc):
        return "connection refused"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server closed the connection ({exc or 'no response'})"
    return str(exc) or type(exc).__name__


def is_connection_refused(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def is_unreachable(exc: httpx.TransportError) -> bool:
    return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))


def unreachable_message(base_url: str, reason: str) -> str:
    return f"cannot reach the LLM server at {base_url}: {reason}. {OLLAMA_HINT}"


def rejected_feature(status: int, message: str, body: dict) -> str | None:
    """Which optional request feature a 400/422 complains about: "stream_options",
    "response_format", or None when the rejection is about something else."""
    if status not in (400, 422):
        return None
    lowered = message.lower()
    if "stream_options" in body and "stream_options" in lowered:
        return "stream_options"
    # llama.cpp: "Unable to generate parser for this template ... JSON schema error at #/..."
    markers = ("response_format", "json_schema", "json_object", "not supported", "unsupported", "json schema",
               "grammar")
    if "response_format" in body and any(m in lowered for m in markers):
        return "response_format"
    return None


def status_error_message(status: int, message: str, url: str, model: str) -> str:
    """The user-facing text for a non-retryable HTTP error."""
    head = f"the LLM server at {url} rejected the request for model '{model}' (HTTP {status}): {message}"
    if status in (401, 403):
        return f"{head}. Authentication failed: set llm.api_key"
    if status == 404:
        return f"{head}. Check llm.model and llm.base_url (OpenAI-compatible servers usually serve under /v1)"
    return head
