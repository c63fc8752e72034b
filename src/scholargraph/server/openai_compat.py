"""OpenAI-compatible chat endpoint: a knowledge base as a "model" for chat front ends.

``GET /v1/models`` lists ``scholargraph`` (the default query mode) and ``scholargraph-<mode>``
for each mode. ``POST /v1/chat/completions`` answers the last user message from the knowledge
base; earlier user/assistant turns are the conversation history. The reply text carries `[n]`
citations followed by a "Sources" list, and the response adds a ``sources`` field (the same
objects as ``ask --json``). ``stream: true`` sends ``chat.completion.chunk`` events and ``[DONE]``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, cast

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ..models import Answer
from ..plugins.registry import mode_names
from ..query.sources import format_reference
from . import sse
from .api_ask import answer_events, check_question
from .state import state_of

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
BASE_MODEL = "scholargraph"


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, max_tokens, ... are accepted and ignored
    model: str = BASE_MODEL
    messages: list[ChatMessage] = Field(min_length=1, max_length=200)
    stream: bool = False


def _models() -> list[str]:
    return [BASE_MODEL, *(f"{BASE_MODEL}-{m}" for m in mode_names())]


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status)


@router.get("/models")
async def models() -> dict:
    return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "scholargraph"}
                                       for m in _models()]}


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, list):
        return "".join(str(p.get("text", "")) for p in message.content if p.get("type") == "text")
    return message.content or ""


def _history(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    turns, question = [], None
    for message in messages:
        if message.role == "user":
            question = _text(message)
        elif message.role == "assistant" and question is not None:
            turns.append((question, _text(message)))
            question = None
    return turns


def references(answer: Answer) -> str:
    cited = set(answer.cited)
    lines = [f"[{s.number}] {format_reference(s)}" for s in answer.sources if not cited or s.number in cited]
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""


@router.post("/chat/completions")
async def chat(request: Request, body: ChatRequest):
    if body.model not in _models():
        return _error(404, f"model {body.model!r} not found; available: {', '.join(_models())}", "not_found_error")
    if body.messages[-1].role != "user" or not _text(body.messages[-1]).strip():
        return _error(400, "the last message must be a user message with text")
    state = state_of(request)
    question = check_question(state, _text(body.messages[-1]))
    mode = body.model.removeprefix(BASE_MODEL).removeprefix("-") or None
    history = _history(body.messages[:-1])

    def start(on_text):
        return state.runner.submit(state.kb.aquery(question, mode, history=history, on_text=on_text))

    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if body.stream:
        return sse.stream(_chunks(start, completion_id, body.model))
    future = start(None)
    try:
        answer: Answer = await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        future.cancel()
        raise
    message = {"role": "assistant", "content": answer.text + references(answer)}
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": body.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": _usage(answer), "sources": answer.to_json()["sources"]}


def _usage(answer: Answer) -> dict[str, int]:
    usage = answer.to_json()["usage"]
    return {"prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["total_tokens"]}


async def _chunks(start, completion_id: str, model: str):
    created = int(time.time())

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return sse.event(None, data)

    yield chunk({"role": "assistant", "content": ""})
    streamed = False
    async for kind, value in answer_events(start):
        if kind == "ping":
            yield ": ping\n\n"
        elif kind == "token":
            streamed = True
            yield chunk({"content": value})
        elif kind == "answer":
            answer = cast("Answer", value)
            yield chunk({"content": ("" if streamed else answer.text) + references(answer)})
            yield chunk({}, "stop", usage=_usage(answer), sources=answer.to_json()["sources"])
        else:
            yield sse.event(None, {"error": {"message": value, "type": "server_error"}})
    yield sse.event(None, "[DONE]")
