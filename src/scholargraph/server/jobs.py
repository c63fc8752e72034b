"""Write jobs: indexing, upgrades, deletes and entity edits, one at a time.

The knowledge base has one writer, so writes queue and run in order on the knowledge-base loop
while reads go on beside them. Each job reports progress (documents done / total, log lines)
to subscribers as events; the HTTP layer turns those into server-sent events. A job is recorded in
the journal before it is accepted and leaves it when it ends, so a restart resumes it
(:mod:`.journal`); what clients see of a job names files relative to the workspace (:mod:`.public_paths`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScholarGraphError
from ..progress import NullProgress
from .journal import JobJournal, JournalEntry
from .public_paths import PathRedactor
from .runner import KBRunner

log = logging.getLogger("scholargraph.server")

KEEP_JOBS = 200
KEEP_LOG_LINES = 100
FINAL = ("done", "failed")


@dataclass
class Job:
    kind: str
    params: dict[str, Any]
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    status: str = "queued"  # queued | running | done | failed
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    done: int = 0
    total: int = 0
    log: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: str | None = None
    finished: Future = field(default_factory=Future, repr=False)
    entry: JournalEntry | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        public = {k: v for k, v in self.params.items() if k not in ("paths",)}
        return {"id": self.id, "kind": self.kind, "status": self.status, "params": public,
                "created_at": self.created_at, "started_at": self.started_at, "finished_at": self.finished_at,
                "done": self.done, "total": self.total, "log": self.log[-20:], "result": self.result,
                "error": self.error}


class JobProgress:
    """The pipeline's Progress protocol, recorded on a job and published as events (any thread)."""

    def __init__(self, job: Job, publish: Callable[[Job, str], None]):
        self.job = job
        self._publish = publish
        self._lock = threading.Lock()

    def start(self, total: int) -> None:
        with self._lock:
            self.job.total += total
        self._publish(self.job, "progress")

    def add_total(self, more: int) -> None:
        with self._lock:
            self.job.total += more
        self._publish(self.job, "progress")

    def advance(self) -> None:
        with self._lock:
            self.job.done += 1
        self._publish(self.job, "progress")

    def read(self, records: int) -> None:
        """Records read from the input files: the job shows documents done / total (those read)."""

    def log(self, message: str) -> None:
        from rich.text import Text

        with self._lock:
            self.job.log.append(Text.from_markup(message).plain)
            del self.job.log[:-KEEP_LOG_LINES]
        self._publish(self.job, "log")

    def phase(self, name: str) -> None:
        """The run's next step, as a log line of the job (the web app shows the last one)."""
        self.log(f"{name}…")

    def finish(self) -> None:
        self._publish(self.job, "progress")


class _Subscriber:
    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)

    def put(self, event: dict[str, Any]) -> None:
        if not self.queue.full():
            self.queue.put_nowait(event)


class JobManager:
    def __init__(self, runner: KBRunner, journal: JobJournal | None = None, redactor: PathRedactor | None = None):
        self.runner = runner
        self.journal = journal
        self.redactor = redactor or PathRedactor()
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self._queue: asyncio.Queue[Job] | None = None
        self._worker: asyncio.Task | None = None
        self._subscribers: set[_Subscriber] = set()
        self._lock = threading.Lock()
        self._sequence = itertools.count(1)
        self.handlers: dict[str, Callable[[Job], Awaitable[dict[str, Any]]]] = {}

    # -- lifecycle (worker on the knowledge-base loop) -----------------------------------------

    def start(self) -> None:
        async def begin() -> None:
            self._queue = asyncio.Queue()
            self._worker = asyncio.create_task(self._work())

        self.runner.submit(begin()).result()

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)

    def submit(self, kind: str, **params: Any) -> Job:
        """Accept a job: recorded in the journal first (``WorkspaceError`` when that fails), then queued."""
        if kind not in self.handlers:
            raise ValueError(kind)
        job = Job(kind, params)
        if self.journal is not None:
            job.entry = JournalEntry(job.id, kind, params, job.created_at)
            self.journal.record(job.entry)
        return self._accept(job)

    def resume_journal(self) -> list[Job]:
        """Queue again the jobs an earlier server accepted and did not finish, oldest first; one that
        was started ``journal.max_runs`` times already is reported failed instead."""
        if self.journal is None:
            return []
        resumed = []
        for entry in self.journal.entries():
            if entry.kind not in self.handlers:
                continue
            job = Job(entry.kind, entry.params, id=entry.id, created_at=entry.created_at, entry=entry)
            if entry.runs >= self.journal.max_runs:
                job.status, job.finished_at = "failed", time.time()
                job.error = (f"not started again: the server stopped {entry.runs} times while running this job; "
                             "see the server log, then submit it again")
                job.finished.set_result(job.status)
                self.journal.forget(entry)
                self._accept(job, queue=False)
                continue
            resumed.append(self._accept(job))
        return resumed

    def _accept(self, job: Job, queue: bool = True) -> Job:
        with self._lock:
            self.jobs[job.id] = job
            while len(self.jobs) > KEEP_JOBS:
                oldest = next(iter(self.jobs))
                if self.jobs[oldest].status not in FINAL:
                    break
                self.jobs.pop(oldest)
        if queue:
            self.runner.loop.call_soon_threadsafe(self._enqueue, job)
        self.publish(job, "queued" if queue else job.status)
        return job

    def _enqueue(self, job: Job) -> None:
        assert self._queue is not None
        self._queue.put_nowait(job)

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            job = await self._queue.get()
            await self._execute(job)

    async def _execute(self, job: Job) -> None:
        job.status, job.started_at = "running", time.time()
        self.publish(job, "started")
        kb = self.runner.kb
        kb.progress = JobProgress(job, self.publish)
        try:
            if self.journal is not None and job.entry is not None:
                self.journal.started(job.entry)
            job.result = await self.handlers[job.kind](job)
            job.status = "done"
        except ScholarGraphError as exc:
            job.status, job.error = "failed", str(exc)
        except Exception:  # noqa: BLE001 - a job must never take the worker down; details go to the log only
            log.exception("job %s (%s) failed", job.id, job.kind)
            job.status, job.error = "failed", "internal error (see the server log)"
        finally:
            kb.progress = NullProgress()
            job.finished_at = time.time()
        if self.journal is not None and job.entry is not None:  # not when cancelled: a stopping server resumes it
            self.journal.forget(job.entry)
        job.finished.set_result(job.status)
        self.publish(job, job.status)

    # -- queries and events (HTTP loop) -----------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self.jobs.get(job_id)

    def list(self) -> list[Job]:
        with self._lock:
            return list(reversed(self.jobs.values()))

    def busy(self) -> bool:
        with self._lock:
            return any(j.status not in FINAL for j in self.jobs.values())

    async def wait(self, job: Job, timeout: float) -> None:
        if timeout > 0 and not job.finished.done():
            await asyncio.wait({asyncio.wrap_future(job.finished)}, timeout=timeout)

    def subscribe(self) -> _Subscriber:
        subscriber = _Subscriber(asyncio.get_running_loop())
        with self._lock:
            self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: _Subscriber) -> None:
        with self._lock:
            self._subscribers.discard(subscriber)

    def view(self, job: Job) -> dict[str, Any]:
        """The job as clients see it: file names relative to the workspace, no server paths."""
        return self.redactor.value(job.to_json())

    def publish(self, job: Job, event: str) -> None:
        data = {"event": event, "seq": next(self._sequence), "job": self.view(job)}
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber.loop.call_soon_threadsafe(subscriber.put, data)
            except RuntimeError:  # its loop has closed
                self.unsubscribe(subscriber)
