"""Shared helpers for benchmark scripts: dev data location, machine info, result files."""

from __future__ import annotations

import json
import os
import platform
import threading
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEV = REPO.parent / "shared" / "data" / "dev"
RESULTS = REPO / "benchmarks" / "results"


def machine() -> dict:
    import numpy

    return {"date": date.today().isoformat(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "load_avg_at_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def write_result(name: str, data: dict, path: str | None = None) -> Path:
    out = Path(path) if path else RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(data, indent=2, ensure_ascii=False))
    return out


def require_dev() -> Path:
    if not DEV.exists():
        raise SystemExit(f"benchmark data not found at {DEV} (../shared/data/dev beside the checkout)")
    return DEV


class ConcurrencySampler:
    """Samples a scripted server's in-flight request count to get the time-weighted mean
    concurrency over the window in which requests were active."""

    def __init__(self, stats, interval: float = 0.005):
        self.stats = stats
        self.interval = interval
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.stats.in_flight)
            time.sleep(self.interval)

    def __enter__(self) -> ConcurrencySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def active_mean(self) -> float:
        busy = [i for i, n in enumerate(self.samples) if n > 0]
        if not busy:
            return 0.0
        window = self.samples[busy[0] : busy[-1] + 1]
        return sum(window) / len(window)

    def active_seconds(self) -> float:
        busy = [i for i, n in enumerate(self.samples) if n > 0]
        return (busy[-1] - busy[0] + 1) * self.interval if busy else 0.0
