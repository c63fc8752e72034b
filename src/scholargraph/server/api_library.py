"""Library routes: upload papers, documents with status, upgrade intro->full, delete, jobs and their events."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..analysis.library_view import SORT_KEYS
from . import sse
from .jobs import FINAL
from .multipart import FilePart, FormError, read_form
from .state import Admin, ServerState, job_response, state_of

router = APIRouter(prefix="/api", tags=["library"])

def document_json(row: dict, names: dict[str, str]) -> dict:
    """A status row for HTTP clients: the display name instead of the server's file path."""
    path = row.get("source_path") or ""
    out = {k: v for k, v in row.items() if k != "source_path"}
    out["file_name"] = names.get(path) or (Path(path).name if path and not path.startswith("(") else None)
    out["has_pdf"] = path.lower().endswith(".pdf")
    return out


@router.get("/info")
async def info(request: Request) -> dict:
    """What the web app needs to adapt: role, query modes, whether an LLM is configured, limits."""
    state = state_of(request)
    settings = state.settings
    from ..kb import KnowledgeBase
    from ..plugins.registry import mode_names

    return {
        "version": request.app.version, "role": request.scope["state"]["role"],
        "workspace": settings.workdir.name, "modes": mode_names(), "default_mode": settings.query.mode,
        "llm": settings.llm.configured, "model": (settings.llm.model or settings.llm.servers()[0].model) if settings.llm.configured else None,
        "communities": hasattr(KnowledgeBase, "communities"),
        "limits": {"max_file_mb": settings.server.max_file_mb, "max_files": settings.server.max_files,
                   "max_unpacked_mb": settings.server.max_unpacked_mb,
                   "max_question_chars": settings.server.max_question_chars},
    }


@router.get("/documents")
async def documents(request: Request) -> dict:
    state = state_of(request)
    rows = await state.runner.call(state.kb.status)
    names = await run_in_threadpool(state.uploads.names)
    return {"documents": [document_json(r.to_json(), names) for r in rows]}


@router.get("/library")
async def library(request: Request, search: str = Query("", max_length=200), status: str | None = Query(None, max_length=20),
                  year: int | None = Query(None, ge=0, le=3000), sort: str = Query("title", pattern=f"^({'|'.join(SORT_KEYS)})$"),
                  order: Literal["asc", "desc"] = Query("asc"), offset: int = Query(0, ge=0),
                  limit: int = Query(50, ge=1, le=500)) -> dict:
    """One page of the library: documents whose title, authors, venue, DOI, id or file holds every
    word of ``search``, of ``status`` and ``year``, sorted by ``sort``; ``total`` counts the matches,
    ``statuses`` and ``years`` what the filters offer. Rows as ``/api/documents`` plus ``authors``,
    ``year``, ``venue``, ``doi``, ``created_at``."""
    state = state_of(request)
    page = (await state.runner.call(lambda: state.kb.browse.library(
        search=search, status=status, year=year, sort=sort, descending=order == "desc", offset=offset,
        limit=limit))).to_json()
    names = await run_in_threadpool(state.uploads.names)
    page["documents"] = [document_json(r, names) for r in page["documents"]]
    return page


@router.get("/documents/{doc_id:path}/page")
async def paper_page(request: Request, doc_id: str) -> dict:
    """A paper's page: ``document`` (title, authors, year, venue, DOI, status, ``file_name`` and
    ``source_file``: its file relative to the workspace), ``sections`` (title, level, pages, passages),
    ``entities`` (most passages first, ``entities_total`` in all), ``references`` (each resolved to
    a workspace paper, ``stub: false``, where it matches) and ``cited_by``."""
    state = state_of(request)
    page = (await state.runner.call(state.kb.browse.paper, doc_id)).to_json()
    names = await run_in_threadpool(state.uploads.names)
    path = page["document"].get("source_path") or ""
    page["document"] = document_json(page["document"], names)
    page["document"]["source_file"] = state.public_path(path) if path and not path.startswith("(") else None
    return page


@router.get("/documents/{doc_id:path}/pdf")
async def pdf(request: Request, doc_id: str, page: int | None = Query(None, ge=1)) -> Response:
    """The paper's PDF as indexed, or only page ``page`` of it (a one-page PDF)."""
    state = state_of(request)
    row = await state.runner.call(state.kb.document, doc_id)
    data = await run_in_threadpool(_pdf_bytes, row.source_path or "", page)
    if data is None:
        raise HTTPException(404, "no PDF is stored for this document")
    suffix = f"-p{page}" if page else ""
    return Response(data, media_type="application/pdf",
                    headers={"Content-Disposition": f'inline; filename="{_safe(doc_id)}{suffix}.pdf"'})


@router.get("/documents/{doc_id:path}")
async def document(request: Request, doc_id: str) -> dict:
    state = state_of(request)
    row = await state.runner.call(state.kb.document, doc_id)
    return document_json(row.to_json(), await run_in_threadpool(state.uploads.names))


@router.delete("/documents/{doc_id:path}", dependencies=[Admin], status_code=202)
async def delete_document(request: Request, doc_id: str, wait: float = Query(30.0)) -> JSONResponse:
    """Remove a paper and everything only it supported (a job: it waits for a running index job)."""
    state = state_of(request)
    row = await state.runner.call(state.kb.document, doc_id)  # 404 now, not later in the job
    job = state.jobs.submit("delete", ids=[doc_id], source_paths=[row.source_path])
    return await job_response(state, job, wait)


class UpgradeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[str] = Field(min_length=1, max_length=1000)
    scope: Literal["intro", "full"] = "full"


@router.post("/documents/upgrade", dependencies=[Admin], status_code=202)
async def upgrade(request: Request, body: UpgradeRequest, wait: float = Query(0.0)) -> JSONResponse:
    """Index these papers with another scope (the "index full text" action of a two-phase review)."""
    state = state_of(request)
    job = state.jobs.submit("upgrade", ids=body.ids, scope=body.scope)
    return await job_response(state, job, wait)


@router.post("/uploads", dependencies=[Admin], status_code=202)
async def upload(request: Request, wait: float = Query(0.0)) -> JSONResponse:
    """Upload papers (multipart field ``files``, many allowed; zip archives are unpacked) and index
    them; form field ``scope`` = ``full`` (default) or ``intro``. Returns the index job."""
    state = state_of(request)
    try:
        form = await read_form(request, state.settings.server.max_files)
    except FormError as exc:
        raise HTTPException(exc.status, exc.reason) from None
    try:
        files = form.named("files")
        scope = form.fields.get("scope") or "full"
        if scope not in ("intro", "full"):
            raise HTTPException(422, "scope must be 'intro' or 'full'")
        if not files:
            raise HTTPException(400, "no files: send them as multipart field 'files'")
        batch = await run_in_threadpool(_store_all, state, files)
    finally:
        form.close()
    if not batch.stored:
        state.uploads.discard(batch)
        status = 413 if any(r["too_large"] for r in batch.rejected) else 415
        return JSONResponse({"error": "no file was accepted", "rejected": _public(batch.rejected)}, status)
    await run_in_threadpool(state.uploads.remember, batch)
    job = state.jobs.submit("index", paths=[str(f.path) for f in batch.stored], scope=scope,
                            files=[f.name for f in batch.stored])
    response = await job_response(state, job, wait)
    body = {"job": state.jobs.view(job), "files": [{"name": f.name, "size": f.size, "type": f.kind} for f in batch.stored],
            "rejected": _public(batch.rejected)}
    return JSONResponse(body, response.status_code)


def _store_all(state: ServerState, files: list[FilePart]):
    batch = state.uploads.new_batch()
    for item in files:
        state.uploads.add(batch, item.filename, item.content_type, item.file)
    return batch


def _public(rejected: list[dict]) -> list[dict]:
    return [{"name": r["name"], "error": r["error"]} for r in rejected]


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80] or "paper"


def _pdf_bytes(path: str, page: int | None) -> bytes | None:
    """The stored file, only when it is a PDF (by suffix and by its first bytes)."""
    file = Path(path)
    if not path.lower().endswith(".pdf") or not file.is_file():
        return None
    data = file.read_bytes()
    if b"%PDF-" not in data[:1024]:
        return None
    if page is None:
        return data
    import io

    from pypdf import PdfReader, PdfWriter
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if page > len(reader.pages):
            return None
        writer = PdfWriter()
        writer.add_page(reader.pages[page - 1])
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()
    except (PdfReadError, ValueError, KeyError):
        return None


# -- jobs ------------------------------------------------------------------------------------


@router.get("/jobs")
async def jobs(request: Request) -> dict:
    manager = state_of(request).jobs
    return {"jobs": [manager.view(j) for j in manager.list()]}


@router.get("/jobs/{job_id}")
async def job(request: Request, job_id: str, wait: float = Query(0.0)) -> JSONResponse:
    state = state_of(request)
    found = state.jobs.get(job_id)
    if found is None:
        raise HTTPException(404, f"no job {job_id!r}")
    return await job_response(state, found, wait)


@router.get("/events")
async def events(request: Request, job: str | None = Query(None)):
    """Server-sent events of the write jobs: ``queued``, ``started``, ``progress``, ``log``, ``done``,
    ``failed`` (data: ``{"event", "seq", "job"}``). With ``job=ID`` only that job, ending when it ends."""
    state = state_of(request)
    if job is not None and state.jobs.get(job) is None:
        raise HTTPException(404, f"no job {job!r}")
    subscriber = state.jobs.subscribe()

    async def stream():
        try:
            current = [j for j in state.jobs.list() if job is None or j.id == job]
            yield sse.event("snapshot", {"jobs": [state.jobs.view(j) for j in current]})
            if job is not None and current[0].status in FINAL:
                return
            while True:
                item = await sse.next_or_ping(subscriber.queue)
                if item is None:
                    yield ": ping\n\n"
                    continue
                if job is not None and item["job"]["id"] != job:
                    continue
                yield sse.event(item["event"], item)
                if job is not None and item["event"] in FINAL:
                    return
        finally:
            state.jobs.unsubscribe(subscriber)

    return sse.stream(stream())
