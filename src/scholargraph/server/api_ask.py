"""Question routes: ask (streamed or whole), retrieve, sessions, and the passage a citation points to."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import cast
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ScholarGraphError
from ..models import Answer
from . import sse
from .state import ServerState, state_of

router = APIRouter(prefix="/api", tags=["questions"])
log = logging.getLogger("scholargraph.server")

SESSION_PATTERN = r"^[\w .:@-]{1,200}$"


class QuestionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1)
    mode: str | None = Field(None, description="naive | local | subgraph | global | hybrid | bio")
    top_k: int | None = Field(None, ge=1, le=200)
    clues: bool = Field(True, description="false = ablation: keywords without corpus clues")
    subgraph: bool = Field(True, description="false = ablation: one-hop neighbours instead of the subgraph")


class AskRequest(QuestionRequest):
    session: str | None = Field(None, pattern=SESSION_PATTERN, description="follow-up questions see earlier turns")
    stream: bool = Field(True, description="server-sent events; false = one JSON object like `ask --json`")


def session_of(request: Request, name: str | None) -> str | None:
    """The stored name of a client's session: with keys configured, sessions belong to the key that
    made them (a name never holds "/", so two keys' sessions can never meet); without keys, as named."""
    key_id = request.scope.get("state", {}).get("key_id")
    return f"{key_id}/{name}" if name and key_id else name


def check_question(state: ServerState, question: str) -> str:
    limit = state.settings.server.max_question_chars
    if len(question) > limit:
        raise HTTPException(413, f"the question is {len(question)} characters long; at most {limit} are accepted")
    if not question.strip():
        raise HTTPException(422, "the question is empty")
    return question


@router.post("/ask")
async def ask(request: Request, body: AskRequest):
    """Answer with `[n]` citations. Streamed as server-sent events ``token`` (``{"text"}``), then
    ``answer`` (the ``ask --json`` object) or ``error`` (``{"error"}``); with ``"stream": false`` one
    JSON object with the same ``answer``/``sources`` fields as ``ask --json``."""
    state = state_of(request)
    check_question(state, body.question)
    session = session_of(request, body.session)

    def start(on_text: Callable[[str], None] | None) -> Future:
        return state.runner.submit(state.kb.aquery(body.question, body.mode, body.top_k, session=session,
                                                   on_text=on_text, clues=body.clues, subgraph=body.subgraph))

    if not body.stream:
        future = start(None)
        try:
            answer: Answer = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise
        return answer.to_json()
    return sse.stream(stream_answer(start))


async def answer_events(start: Callable[[Callable[[str], None]], Future]) -> AsyncIterator[tuple[str, object]]:
    """``("token", text)`` while the answer is written, then ``("answer", Answer)`` or ``("error", message)``;
    ``("ping", None)`` every few quiet seconds. Closing the generator early cancels the work."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def put(piece: str | None) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(queue.put_nowait, piece)

    future = start(put)
    future.add_done_callback(lambda _: put(None))
    try:
        while True:
            piece = await sse.next_or_ping(queue)
            if piece is None and not future.done():
                yield "ping", None
                continue
            if piece is None:
                break
            yield "token", piece
        while not queue.empty():  # pieces that raced the end marker
            if piece := queue.get_nowait():
                yield "token", piece
        try:
            yield "answer", future.result()
        except ScholarGraphError as exc:
            yield "error", str(exc)
        except Exception:  # noqa: BLE001 - never a traceback to the client
            log.exception("ask failed")
            yield "error", "internal error"
    finally:
        if not future.done():
            future.cancel()  # the client went away: stop the work on the knowledge-base loop


async def stream_answer(start: Callable[[Callable[[str], None]], Future]) -> AsyncIterator[str]:
    yield sse.event("start", {})
    async for kind, value in answer_events(start):
        if kind == "ping":
            yield ": ping\n\n"
        elif kind == "token":
            yield sse.event("token", {"text": value})
        elif kind == "answer":
            yield sse.event("answer", cast("Answer", value).to_json())
        else:
            yield sse.event("error", {"error": value})


@router.post("/retrieve")
async def retrieve(request: Request, body: QuestionRequest) -> dict:
    """The ranked evidence only (the ``retrieve --json`` object)."""
    state = state_of(request)
    check_question(state, body.question)
    retrieval = await state.runner.run(state.kb.aretrieve(body.question, body.mode, body.top_k, clues=body.clues,
                                                          subgraph=body.subgraph))
    return retrieval.to_json()


@router.get("/sessions/{name}")
async def session(request: Request, name: str = Path(pattern=SESSION_PATTERN)) -> dict:
    """The turns of a conversation (question and answer), oldest first; only the key that made the
    session sees it (another key finds it empty)."""
    state = state_of(request)
    turns = await state.runner.call(state.kb.browse.session_history, session_of(request, name), 100)
    return {"session": name, "turns": [t.to_json() for t in turns]}


@router.get("/passages/{chunk_id}")
async def passage(request: Request, chunk_id: str) -> dict:
    """The passage a citation points to, with its paper, section and pages; ``pdf_url`` opens the
    cited page of the stored PDF when the paper was uploaded as one."""
    state = state_of(request)
    found = (await state.runner.call(state.kb.passage, chunk_id)).to_json()
    path = found.pop("source_path", "") or ""
    found["pdf_url"] = None
    if path.lower().endswith(".pdf"):
        page = f"?page={found['page_start']}" if found.get("page_start") else ""
        found["pdf_url"] = f"/api/documents/{quote(found['document_id'], safe='')}/pdf{page}"
    return found
