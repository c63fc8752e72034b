"""Progress reporting: a no-op sink for the Python API; for the CLI a rich progress bar on a
terminal, and plain lines when stderr is not one (a log file, CI). Both show the phase a run is in
(extraction, graph rebuild, entity resolution, citations, communities), and the records read from
the input files while a large one (a CSV of many rows) is still being read. Plain lines come at
most one a second while documents are done (and for the last one), so a file of a million rows
does not write a million lines."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

from .models import Usage

PLAIN_LINE_S = 1.0


class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def add_total(self, more: int) -> None: ...

    def advance(self) -> None: ...

    def read(self, records: int) -> None: ...

    def log(self, message: str) -> None: ...

    def phase(self, name: str) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    def start(self, total: int) -> None:
        pass

    def add_total(self, more: int) -> None:
        pass

    def advance(self) -> None:
        pass

    def read(self, records: int) -> None:
        pass

    def log(self, message: str) -> None:
        pass

    def phase(self, name: str) -> None:
        pass

    def finish(self) -> None:
        pass


class RichProgress:
    """Documents done/total with ETA, plus live LLM calls and tokens (CLI, on stderr)."""

    def __init__(self, usage: Callable[[], dict[str, Usage]] | None = None, enabled: bool = True):
        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled
        self.plain = not sys.stderr.isatty()  # a log file or CI: one line per document and per phase
        self._usage = usage
        self._progress: Any = None  # rich.progress.Progress once started
        self._task: Any = None
        self._phase = "indexing"
        self._done = self._total = self._read = 0
        self._last_line = -PLAIN_LINE_S  # when the last per-document plain line was written

    def _describe(self) -> str:
        phase = f"{self._phase} · {self._read:,} records read" if self._read else self._phase
        if not self._usage:
            return phase
        total = Usage()
        for u in self._usage().values():
            total.add(u)
        return f"{phase} · LLM calls {total.calls} (+{total.cached_calls} cached) · tokens {total.total_tokens:,}"

    def _line(self, message: str) -> None:
        self.console.print(message, highlight=False, soft_wrap=True)

    def start(self, total: int) -> None:
        if not self.enabled or total == 0:
            return
        if self.plain:
            self._total += total
            self._line(f"{self._phase}: {self._total} document(s)")
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
        if self.plain:
            self._total += more
            return
        if self._progress is None:
            self.start(more)
        else:
            self._progress.update(self._task, total=self._progress.tasks[0].total + more)

    def advance(self) -> None:
        if self.enabled and self.plain:
            self._done += 1
            now = time.monotonic()
            if now - self._last_line >= PLAIN_LINE_S or self._done >= self._total:
                self._last_line = now
                self._line(f"{self._done}/{self._total} docs · {self._describe()}")
        elif self._progress is not None:
            self._progress.update(self._task, advance=1, description=self._describe())

    def read(self, records: int) -> None:
        """Records (documents) read from the input files so far, counted as they are parsed."""
        self._read += records
        if self._progress is not None:
            self._progress.update(self._task, description=self._describe())

    def log(self, message: str) -> None:
        if self._progress is not None:
            self._progress.console.print(message)
        elif self.enabled:
            self.console.print(message)

    def phase(self, name: str) -> None:
        """The run's next step (the bar's label; a line of its own when there is no bar)."""
        self._phase = name
        if not self.enabled:
            return
        if self._progress is not None:
            self._progress.update(self._task, description=self._describe())
        else:
            self._line(f"… {name}")

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=self._describe())
            self._progress.stop()
            self._progress = None
