"""What every route needs: the server's state (knowledge base runner, jobs, uploads, keys), the admin
check, and the answer for a submitted job."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from ..config import Settings
from ..kb import KnowledgeBase
from .jobs import FINAL, Job, JobManager
from .public_paths import PathRedactor
from .runner import KBRunner
from .security import ADMIN, KeyRing
from .uploads import UploadStore

WAIT_MAX = 600.0


@dataclass
class ServerState:
    settings: Settings
    runner: KBRunner
    jobs: JobManager
    uploads: UploadStore
    keys: KeyRing
    paths: PathRedactor | None = None  # server paths as clients see them (relative to the workspace)

    def public_path(self, path: str) -> str:
        return self.paths.text(path) if self.paths is not None and path else path

    @property
    def kb(self) -> KnowledgeBase:
        return self.runner.kb


def state_of(request: Request) -> ServerState:
    return request.app.state.sg


def require_admin(request: Request) -> None:
    """Routes that change the knowledge base need an admin key (403 for a read-only one)."""
    if request.scope.get("state", {}).get("role") != ADMIN:
        raise HTTPException(403, "forbidden")


Admin = Depends(require_admin)


async def job_response(state: ServerState, job: Job, wait: float) -> JSONResponse:
    """The job, after waiting up to ``wait`` seconds for it: 200 when it has ended, else 202."""
    await state.jobs.wait(job, min(max(wait, 0.0), WAIT_MAX))
    return JSONResponse({"job": state.jobs.view(job)}, 200 if job.status in FINAL else 202)
