"""Server-sent events: framing, keep-alive pings, and the streaming response."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

PING_SECONDS = 15.0
HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def event(name: str | None, data: Any) -> str:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    lines = "".join(f"data: {line}\n" for line in payload.split("\n"))
    return (f"event: {name}\n" if name else "") + lines + "\n"


async def next_or_ping(queue: asyncio.Queue, seconds: float = PING_SECONDS) -> Any:
    """The next queued item, or None after ``seconds`` (the caller then sends a ping comment)."""
    try:
        return await asyncio.wait_for(queue.get(), seconds)
    except TimeoutError:
        return None


def stream(events: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(events, media_type="text/event-stream", headers=HEADERS)
