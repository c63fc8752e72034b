"""The FastAPI application: one knowledge base, its job queue, the API routers and the web app."""

from __future__ import annotations

from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from .. import __version__
from ..config import Settings
from ..errors import (
    ConfigError,
    LLMError,
    LLMUnavailableError,
    NotFoundError,
    ScholarGraphError,
    WorkspaceError,
)
from ..kb import KnowledgeBase
from . import api_ask, api_docs, api_graph, api_library, openai_compat
from .jobs import JobManager
from .journal import DIRECTORY as JOURNAL_DIRECTORY
from .journal import JobJournal
from .middleware import Auth, BodyLimit, BodyTooLarge, CatchAll, HostCheck, OriginCheck, SecurityHeaders
from .public_paths import PathRedactor
from .runner import KBRunner
from .security import FailureThrottle, KeyRing, load_keys
from .state import ServerState
from .uploads import UploadStore


def static_dir() -> Path:
    return Path(str(resources.files("scholargraph.server") / "static"))


def create_app(settings: Settings, kb: KnowledgeBase | None = None) -> FastAPI:
    """The app over ``settings.workdir`` (or ``kb``). The knowledge base opens at startup."""
    keys = load_keys(settings.server)
    uploads = UploadStore(settings.server.uploads_dir or settings.workdir / "uploads", settings.server)
    redactor = PathRedactor((uploads.directory, "uploads/"), (settings.workdir, ""))

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        runner = KBRunner(kb or KnowledgeBase(settings=settings)).start()
        jobs = JobManager(runner, JobJournal(runner.kb.workdir / JOURNAL_DIRECTORY), redactor)
        register_jobs(jobs, uploads)
        jobs.start()
        app.state.sg = ServerState(settings, runner, jobs, uploads, keys, redactor)
        resumed = jobs.resume_journal()  # accepted before a restart: they run first, in their order
        indexing = any(job.kind in ("index", "upgrade", "resume") for job in resumed)  # these take PENDING too
        if settings.server.resume_on_start and not indexing and await runner.call(_has_pending, runner.kb):
            jobs.submit("resume")
        try:
            yield
        finally:
            await runner.run(jobs.stop())
            runner.stop(runner.kb.workspace.aclose_clients)
            runner.kb.close()

    app = FastAPI(
        title="scholargraph", version=__version__, lifespan=lifespan, middleware=_middleware(settings, keys),
        description="Graph-RAG over scientific papers: upload papers, ask questions with cited answers, browse the "
                    "knowledge graph. With keys configured every route needs `Authorization: Bearer KEY`.",
        exception_handlers=_exception_handlers(), docs_url=None, redoc_url=None,  # api_docs serves them, offline
    )
    for module in (api_library, api_ask, api_graph, openai_compat, api_docs):
        app.include_router(module.router)
    _mount_web_app(app)
    return app


def _has_pending(kb: KnowledgeBase) -> bool:
    return any(row.status in ("PENDING", "PROCESSING", "INTERRUPTED") for row in kb.status())


def _middleware(settings: Settings, keys: KeyRing) -> list[Middleware]:
    stack = [Middleware(SecurityHeaders), Middleware(CatchAll), Middleware(HostCheck, settings=settings.server)]
    if settings.server.cors_origins:
        stack.append(Middleware(CORSMiddleware, allow_origins=settings.server.cors_origins, allow_credentials=False,
                                allow_methods=["GET", "POST", "DELETE"], allow_headers=["Authorization", "Content-Type"]))
    stack += [Middleware(OriginCheck, settings=settings.server),
              Middleware(Auth, keys=keys, throttle=FailureThrottle(settings.server.auth_free_failures,
                                                                  settings.server.auth_backoff_max_s)),
              Middleware(BodyLimit, settings=settings.server)]
    return stack


def _mount_web_app(app: FastAPI) -> None:
    root = static_dir()
    if (root / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=root / "assets"), name="assets")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        page = root / "index.html"
        if not page.is_file():
            raise HTTPException(404, "the web app is not built (npm run build in web/)")
        return FileResponse(page, headers={"Cache-Control": "no-store"})


# -- errors: a clear message for what a user caused (the rest: middleware.CatchAll) ----------------

STATUS = ((NotFoundError, 404), (ConfigError, 400), (LLMUnavailableError, 503), (LLMError, 502), (WorkspaceError, 409))


def status_for(exc: ScholarGraphError) -> int:
    return next((code for cls, code in STATUS if isinstance(exc, cls)), 400)


def _exception_handlers() -> dict:
    async def product_error(request: Request, exc: ScholarGraphError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_for(exc))

    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, exc.status_code, headers=getattr(exc, "headers", None))

    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "error": e.get("msg", "")}
                  for e in exc.errors()]
        return JSONResponse({"error": "invalid request", "fields": errors}, 422)

    async def too_large(request: Request, exc: BodyTooLarge) -> JSONResponse:
        return JSONResponse({"error": "request body too large"}, 413)

    return {ScholarGraphError: product_error, StarletteHTTPException: http_error, RequestValidationError: invalid,
            BodyTooLarge: too_large}


def register_jobs(jobs: JobManager, uploads: UploadStore) -> None:
    """The write operations the job queue runs, one at a time, on the knowledge-base loop."""
    kb = jobs.runner.kb

    async def index(job):
        return (await kb.ainsert(job.params["paths"], scope=job.params.get("scope", "full"))).to_json()

    async def upgrade(job):
        return (await kb.ainsert((), only=job.params["ids"], scope=job.params.get("scope", "full"))).to_json()

    async def resume(job):
        return (await kb.ainsert(())).to_json()

    async def delete(job):
        deleted = [(await kb.adelete(doc_id)).to_json() for doc_id in job.params["ids"]]
        _remove_orphaned_uploads(kb, uploads, job.params.get("source_paths", []))
        return {"deleted": deleted}

    async def merge(job):
        return (await kb.amerge_entities(job.params["keep"], *job.params["others"])).to_json()

    async def split(job):
        return {"entities": await kb.asplit_entity(job.params["entity"])}

    async def reports(job):
        return (await kb.browse.awrite_reports()).to_json()

    jobs.handlers.update(index=index, upgrade=upgrade, resume=resume, delete=delete, merge=merge, split=split,
                         reports=reports)


def _remove_orphaned_uploads(kb: KnowledgeBase, uploads: UploadStore, paths: list[str]) -> None:
    """An uploaded file goes when no document comes from it any more (one file may hold many papers)."""
    still_used = {row.source_path for row in kb.status()}
    for path in paths:
        if path and path not in still_used and uploads.owns(path):
            Path(path).unlink(missing_ok=True)
