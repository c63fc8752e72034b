"""The OpenAI chat-completions wire format: request keys, response parsing, token estimates.

Shared by :mod:`scholargraph.llm.client` and the scripted test server so both count tokens the
same way when a server does not report usage.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: about four characters per token, rounded up."""
    return math.ceil(len(text) / 4)


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, None, or a list of ``{"type": "text"}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return str(content)


def messages_text(messages: list[dict[str, Any]]) -> str:
    """All message contents joined by newlines: what prompt-token estimates are taken over."""
    return "\n".join(content_text(m.get("content")) for m in messages if isinstance(m, dict))


def cache_key(server: str, model: str, messages: list[dict[str, Any]], params: dict[str, Any],
              schema: dict[str, Any] | None) -> str:
    """The same request to the same model on the same server: another server (or model) never
    answers from a reply this one gave."""
    payload = {"server": server, "model": model, "messages": messages, "params": params, "schema": schema}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class Completion:
    """The useful part of one chat-completions response."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None = None  # "stop", "length" (cut by max_tokens or the context), ...


class MalformedResponse(ValueError):
    """A 200 answer that is not a chat completion (bad JSON, no choices, an embedded error)."""


def reported_usage(data: dict[str, Any]) -> tuple[int | None, int | None]:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None, None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int) and isinstance(completion, int):
        return prompt, completion
    return None, None


def _embedded_error(data: dict[str, Any]) -> str | None:
    error = data.get("error")
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def parse_completion(body: bytes | str) -> Completion:
    """Parse a non-streamed response; raise MalformedResponse when it is not a completion."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedResponse(f"invalid JSON ({exc}): {_preview(body)}") from exc
    if not isinstance(data, dict):
        raise MalformedResponse(f"expected a JSON object: {_preview(body)}")
    if (err := _embedded_error(data)) is not None:
        raise MalformedResponse(f"server reported an error: {err}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse(f"no 'choices' in response: {_preview(body)}")
    message = choices[0].get("message") or {}
    # Reasoning models may add `reasoning_content`; only `content` is the answer.
    text = content_text(message.get("content")) if isinstance(message, dict) else ""
    prompt, completion = reported_usage(data)
    return Completion(text, prompt, completion, event_finish_reason(data))


def _preview(body: bytes | str, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip().replace("\n", " ")
    return text[:limit] + ("..." if len(text) > limit else "") if text else "(empty body)"


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """Parsed ``data:`` events of a server-sent-event stream, up to ``data: [DONE]``."""
    async for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, ": keep-alive" comments, "event:" lines
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        if not payload:
            continue
        try:
            event = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise MalformedResponse(f"invalid JSON in stream event ({exc}): {_preview(payload)}") from exc
        if not isinstance(event, dict):
            raise MalformedResponse(f"stream event is not a JSON object: {_preview(payload)}")
        if (err := _embedded_error(event)) is not None:
            raise MalformedResponse(f"server reported an error mid-stream: {err}")
        yield event


def event_finish_reason(event: dict[str, Any]) -> str | None:
    """``choices[0].finish_reason`` of a response or stream chunk (None when absent)."""
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    reason = choices[0].get("finish_reason")
    return reason if isinstance(reason, str) and reason else None


def event_delta(event: dict[str, Any]) -> str:
    """The content piece of one streamed chunk ("" for role-only, usage-only or final chunks)."""
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    delta = choices[0].get("delta") or choices[0].get("message") or {}
    return content_text(delta.get("content")) if isinstance(delta, dict) else ""
