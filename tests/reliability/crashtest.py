"""The crash-test helper: kill a real `scholargraph` process (SIGKILL) at a chosen point of a run,
run the recovery command, and compare the workspace with one a clean, uninterrupted run made.

    check_crash(scholar, ["index", corpus], kill_at="scholargraph.app.pipeline:Pipeline._commit", nth=3,
                when="return", clean=clean_workspace)

Kill points are named functions (see :mod:`crash_runner`): deterministic, unlike a timer, so the
same point is hit on every machine however busy it is.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from redteam import Result, Scholar, differences, snapshot

RUNNER = Path(__file__).with_name("crash_runner.py")


@dataclass(frozen=True)
class KillPoint:
    target: str  # MODULE:QUALNAME as the code looks it up
    nth: int = 1
    when: str = "enter"  # or "return"

    def __str__(self) -> str:
        return f"{self.when} of call {self.nth} to {self.target}"


def run_killed(scholar: Scholar, argv: Sequence[str], point: KillPoint, llm: bool = True, timeout: float = 300) -> Result:
    """Run the command in a subprocess that kills itself at ``point``; fails if it got there never."""
    cmd = [sys.executable, str(RUNNER), point.target, str(point.nth), point.when, *scholar.args(tuple(argv), llm)]
    proc = subprocess.run(cmd, env=scholar.full_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == -signal.SIGKILL, (
        f"`{' '.join(argv)}` was meant to be killed at the {point} but exited {proc.returncode}:\n"
        f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return Result(proc.returncode, proc.stdout, proc.stderr)


def copy_workspace(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def check_crash(scholar: Scholar, argv: Sequence[str], point: KillPoint, clean: Path,
                recover: Sequence[str] | None = None, llm: bool = True) -> Result:
    """Kill ``argv`` at ``point``, run ``recover`` (default: the same command again) to completion,
    and assert the workspace is the one ``clean`` holds. Returns the recovery run's result."""
    run_killed(scholar, argv, point, llm)
    result = scholar.subprocess(*(recover or argv), llm=llm)
    assert result.code in (0, 5), f"recovery `{' '.join(recover or argv)}` exited {result.code}: {result.err[-3000:]}"
    diff = differences(snapshot(scholar.workdir), snapshot(clean))
    assert not diff, f"after a kill at the {point} and `{' '.join(recover or argv)}`:\n" + "\n".join(diff)
    return result
