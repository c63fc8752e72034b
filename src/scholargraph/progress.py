"""Progress reporting: a no-op sink for the Python API, a rich progress bar for the CLI."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

from .models import Usage


class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def add_total(self, more: int) -> None: ...

    def advance(self) -> None: ...

    def log(self, message: str) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    def start(self, total: int) -> None:
        pass

    def add_total(self, more: int) -> None:
        pass

    def advance(self) -> None:
        pass

    def log(self, message: str) -> None:
        pass

    def finish(self) -> None:
        pass


class RichProgress:
    """Documents done/total with ETA, plus live LLM calls and tokens (CLI, on stderr)."""

    def __init__(self, usage: Callable[[], dict[str, Usage]] | None = None, enabled: bool = True):
        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled and sys.stderr.isatty()
        self._usage = usage
        self._progress: Any = None  # rich.progress.Progress once started
        self._task: Any = None

    def _describe(self) -> str:
        if not self._usage:
            return "indexing"
        total = Usage()
        for u in self._usage().values():
            total.add(u)
        return f"indexing · LLM calls {total.calls} (+{total.cached_calls} cached) · tokens {total.total_tokens:,}"

    def start(self, total: int) -> None:
        if not self.enabled or total == 0:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("docs"),
                       TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=self.console,
                       transient=False)
        bar.start()
        self._task = bar.add_task(self._describe(), total=total)
        self._progress = bar

    def add_total(self, more: int) -> None:
        """Documents found while the run goes on (files are parsed as extraction proceeds)."""
        if more <= 0:
            return
        if self._progress is None:
            self.start(more)
        else:
            self._progress.update(self._task, total=self._progress.tasks[0].total + more)

    def advance(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1, description=self._describe())

    def log(self, message: str) -> None:
        if self._progress is not None:
            self._progress.console.print(message)
        elif self.enabled:
            self.console.print(message)

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=self._describe())
            self._progress.stop()
            self._progress = None
