"""Shared helpers for benchmark scripts: dev data location, machine info, result files."""

from __future__ import annotations

import json
import os
import platform
from datetime import date
from pathlib import Path

from tests.support.dev_data import dev_data_dir

REPO = Path(__file__).resolve().parents[1]
DEV = dev_data_dir(REPO)  # ../shared/data/dev beside the checkout (or its main checkout)
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
