"""Where the end-of-run work of an indexing run goes: the seconds of each progress phase and, on
request, a stack sampler over every thread of the process (the end-of-run work runs in worker
threads, which ``cProfile`` does not see).

    clock = EndOfRunClock(sample=True)
    KnowledgeBase(workdir, progress=clock, ...).insert()
    clock.summary()   # {"phases_s": {...}, "end_of_run_s": ..., "top_cumulative": [...], "top_self": [...]}

The sampler starts at the first phase after the documents (the rebuild) and stops at the end; it
counts, every ``interval`` seconds, each function on each busy thread's stack (a thread waiting for
work, idle in a queue, a lock or the event loop's ``select``, is not counted; one waiting for the
database is). Seconds are samples × interval, per thread: two busy threads add up; on a loaded
machine the sampler wakes less often than every ``interval``, so read them as weights (the share
of samples is printed too), and the phases' seconds as the wall clock.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from types import FrameType

IDLE = {("threading.py", "wait"), ("queue.py", "get"), ("selectors.py", "select"), ("thread.py", "_worker"),
        ("threading.py", "_wait_for_tstate_lock"), ("queue.py", "_get"), ("units.py", "_loop")}
INDEXING = "indexing"


def _where(frame: FrameType) -> tuple[str, str]:
    code = frame.f_code
    return code.co_filename.rsplit("/", 1)[-1], code.co_name


def _label(frame: FrameType) -> str:
    code = frame.f_code
    path = code.co_filename
    short = path.split("/scholargraph/", 1)[-1] if "/scholargraph/" in path else path.rsplit("/", 2)[-1]
    return f"{short}:{code.co_firstlineno}({code.co_name})"


class StackSampler:
    """Samples every other thread's stack every ``interval`` seconds while running."""

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self.cumulative: Counter[str] = Counter()
        self.own: Counter[str] = Counter()
        self.by_phase: dict[str, Counter[str]] = {}  # phase -> scholargraph's own functions, cumulative
        self.phase = ""
        self.samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="stack-sampler", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop.wait(self.interval):
            for ident, frame in sys._current_frames().items():
                if ident != me and _where(frame) not in IDLE:
                    self._count(frame)

    def _count(self, frame: FrameType | None) -> None:
        self.samples += 1
        assert frame is not None
        self.own[_label(frame)] += 1
        seen: set[str] = set()
        phase = self.by_phase.setdefault(self.phase, Counter())
        while frame is not None:
            label = _label(frame)
            if label not in seen:
                seen.add(label)
                self.cumulative[label] += 1
                if "/scholargraph/" in frame.f_code.co_filename:
                    phase[label] += 1
            frame = frame.f_back

    def top(self, counts: Counter[str], limit: int) -> list[str]:
        total = max(1, self.samples)
        return [f"{n * self.interval:8.2f} s {100 * n / total:5.1f}%  {label}" for label, n in counts.most_common(limit)]


class EndOfRunClock:
    """The Progress protocol: when each phase began, when the last document ended, and (``sample``)
    a stack sampler over the end-of-run phases."""

    def __init__(self, sample: bool = False, interval: float = 0.005):
        self.marks: list[tuple[str, float]] = [(INDEXING, time.perf_counter())]
        self.last_document = time.perf_counter()
        self.sampler = StackSampler(interval) if sample else None
        self.ended: float | None = None

    def start(self, total: int) -> None: ...
    def add_total(self, more: int) -> None: ...
    def read(self, records: int) -> None: ...
    def log(self, message: str) -> None: ...

    def finish(self) -> None:
        self.marks.append(("(after the pipeline)", time.perf_counter()))

    def advance(self) -> None:
        self.last_document = time.perf_counter()

    def phase(self, name: str) -> None:
        self.marks.append((name, time.perf_counter()))
        if self.sampler is not None:
            self.sampler.phase = name
            self.sampler.start()

    def end(self) -> None:
        self.ended = time.perf_counter()
        if self.sampler is not None:
            self.sampler.stop()

    def summary(self, limit: int = 30) -> dict:
        end = self.ended or time.perf_counter()
        phases: dict[str, float] = {}
        for (name, at), (_, until) in zip(self.marks, [*self.marks[1:], ("end", end)], strict=True):
            phases[name] = round(phases.get(name, 0.0) + until - at, 2)
        out: dict = {"phases_s": phases, "end_of_run_s": round(end - self.last_document, 2)}
        if self.sampler is not None:
            out["sampled_busy_thread_s"] = round(self.sampler.samples * self.sampler.interval, 1)
            out["top_cumulative"] = self.sampler.top(self.sampler.cumulative, limit)
            out["top_self"] = self.sampler.top(self.sampler.own, limit)
            out["top_by_phase"] = {name: self.sampler.top(counts, 12) for name, counts in self.sampler.by_phase.items()}
        return out
