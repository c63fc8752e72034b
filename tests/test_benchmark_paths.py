"""Benchmarks find their data relative to the repository: no absolute data path in any script."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
# "/work/...", "/home/..." (a relative "../shared/data/dev" is fine)
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|home|data|mnt|srv|Users|root)/")


def _absolute_paths(path: Path) -> list[str]:
    return [f"{path.name}:{node.lineno}: {node.value[:80]!r}"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and ABSOLUTE.search(node.value)]


def test_no_benchmark_hard_codes_an_absolute_data_path() -> None:
    scripts = sorted(BENCHMARKS.glob("*.py"))
    assert scripts
    offenders = [hit for script in scripts for hit in _absolute_paths(script)]
    assert offenders == []
