"""One indexing process per SQLite workspace: an advisory lock on ``index.lock`` in the workspace
(and one community update at a time: ``communities.lock``).

The operating system drops the lock when its process ends, however it ends (``kill -9``
included), so a crashed run never leaves the workspace locked. The file names the holder
(pid, host, start time) for the message the next process prints.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no cross-process lock, runs are not coordinated
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "index.lock"
COMMUNITIES_LOCK_NAME = "communities.lock"


class FileLock:
    def __init__(self, workdir: Path, name: str = LOCK_NAME):
        self.path = Path(workdir) / name
        self._fd: int | None = None

    def acquire(self, blocking: bool = False) -> bool:
        if self._fd is not None:
            raise RuntimeError(f"this lock ({self.path.name}) is already held")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                os.close(fd)
                return False
        os.ftruncate(fd, 0)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        os.write(fd, f"process {os.getpid()} on {socket.gethostname()} since {stamp}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        os.close(fd)  # closing the descriptor releases the lock

    def held(self) -> bool:
        """Whether some process (this one included) holds the lock now; changes nothing."""
        if self._fd is not None:
            return True
        if fcntl is None:  # pragma: no cover
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False  # never locked
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # also drops the lock just taken
        return False

    def holder(self) -> str:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        return text or "another process"
