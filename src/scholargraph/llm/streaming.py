"""Streamed chat completions: the open stream, what was received, and its events."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..errors import LLMError
from .http_errors import transport_reason
from .wire import MalformedResponse, event_delta, event_finish_reason, parse_completion, reported_usage, sse_events


@dataclass
class OpenStream:
    stack: contextlib.AsyncExitStack
    first: dict[str, Any] | None
    rest: AsyncIterator[dict[str, Any]]

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        if self.first is not None:
            yield self.first
        async for event in self.rest:
            yield event


@dataclass
class StreamProgress:
    opened: bool = False
    pieces: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    truncated: bool = False  # cut at llm.max_reply_chars: the rest was never read
    finish_reason: str | None = None  # the server's, from the last chunk that gave one


async def read_at_most(response: httpx.Response, limit: int) -> bytes | None:
    """The body of a streamed response, or None when it is longer than ``limit`` bytes (reading
    stops there: a runaway server cannot fill the memory)."""
    parts: list[bytes] = []
    size = 0
    async for part in response.aiter_bytes():
        size += len(part)
        if size > limit:
            return None
        parts.append(part)
    return b"".join(parts)


async def response_events(response: httpx.Response) -> AsyncGenerator[dict[str, Any], None]:
    """Stream events; a server that ignored ``stream: true`` and sent plain JSON yields one event."""
    if "application/json" in response.headers.get("content-type", ""):
        completion = parse_completion(await response.aread())
        usage = None
        if completion.prompt_tokens is not None:
            usage = {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens}
        yield {"choices": [{"delta": {"content": completion.text}, "finish_reason": completion.finish_reason}],
               "usage": usage}
        return
    async for event in sse_events(response.aiter_lines()):
        yield event


async def stream_pieces(
    opened: OpenStream, progress: StreamProgress, base_url: str, timeout: float, max_chars: int | None = None
) -> AsyncGenerator[str, None]:
    """Content pieces of an open stream, noting usage and text in ``progress``; a break is an LLMError.
    Stops (``progress.truncated``) once ``max_chars`` characters came."""
    received = 0
    try:
        async for event in opened.events():
            prompt, completion = reported_usage(event)
            if prompt is not None:
                progress.prompt_tokens, progress.completion_tokens = prompt, completion
            progress.finish_reason = event_finish_reason(event) or progress.finish_reason
            if piece := event_delta(event):
                if max_chars is not None and received + len(piece) > max_chars:
                    piece = piece[: max_chars - received]
                    progress.truncated = True
                received += len(piece)
                if piece:
                    progress.pieces.append(piece)
                    yield piece
                if progress.truncated:
                    return
    except (httpx.TransportError, MalformedResponse) as exc:
        reason = transport_reason(exc, timeout) if isinstance(exc, httpx.TransportError) else str(exc)
        received = sum(map(len, progress.pieces))
        raise LLMError(f"the stream from {base_url} broke after {received} characters: {reason}") from exc
