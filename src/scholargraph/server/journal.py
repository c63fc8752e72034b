"""Accepted write jobs, kept on disk from before the server answers 202 until they end.

A job the server accepted (an upload to index, a delete, an entity edit) is written here first, so
a restart — a normal one or ``kill -9`` — loses none: at start the server queues them again, in
the order they were accepted, under the same job ids. One JSON file per job in
``<workspace>/server-jobs/``, written whole (temporary file, fsync, rename). A job that was
started ``max_runs`` times without ending (it takes the server down with it) is not started again.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import WorkspaceError

DIRECTORY = "server-jobs"
MAX_RUNS = 3


@dataclass
class JournalEntry:
    id: str
    kind: str
    params: dict[str, Any]
    created_at: float = field(default_factory=time.time)
    runs: int = 0  # times the job was started, by this server or an earlier one

    @property
    def file_name(self) -> str:
        return f"{int(self.created_at * 1e6):020d}-{self.id}.json"


class JobJournal:
    def __init__(self, directory: Path, max_runs: int = MAX_RUNS):
        self.directory = Path(directory)
        self.max_runs = max_runs

    def record(self, entry: JournalEntry) -> None:
        """Write the entry durably (raises ``WorkspaceError`` when it cannot: the job is not accepted)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / entry.file_name
            tmp = path.with_suffix(".tmp")
            with tmp.open("w", encoding="utf-8") as out:
                json.dump(asdict(entry), out, ensure_ascii=False)
                out.flush()
                os.fsync(out.fileno())
            tmp.replace(path)
            _sync_directory(self.directory)
        except OSError as exc:
            raise WorkspaceError(f"cannot record the job in {self.directory}: {exc.strerror or exc}; "
                                 "nothing was queued") from None

    def started(self, entry: JournalEntry) -> None:
        entry.runs += 1
        self.forget(entry)  # under whichever name an earlier server wrote it
        self.record(entry)

    def forget(self, entry: JournalEntry) -> None:
        for path in self.directory.glob(f"*-{entry.id}.json"):
            path.unlink(missing_ok=True)

    def entries(self) -> list[JournalEntry]:
        """The jobs an earlier server accepted and did not finish, oldest first (unreadable files are skipped)."""
        out = []
        for path in sorted(self.directory.glob("*.json")) if self.directory.is_dir() else []:
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                out.append(JournalEntry(raw["id"], raw["kind"], raw["params"], raw["created_at"], raw.get("runs", 0)))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return out


def _sync_directory(directory: Path) -> None:
    """The rename itself survives a power cut (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
