"""Run `scholargraph ARGS...` and SIGKILL this very process at a chosen point of the run.

    python crash_runner.py MODULE:QUALNAME NTH WHEN [ARGS...]

``MODULE:QUALNAME`` names a function or method as the code calls it (patch the name where it is
looked up: ``scholargraph.graph.resolution_pass:merge_entities``, not where it is defined).
At its ``NTH`` call the process kills itself with SIGKILL — nothing is flushed, no ``finally``
runs, exactly like ``kill -9`` — on entering the call (``WHEN`` = enter) or after it returned
(``WHEN`` = return; inside a unit of work, that is before its commit). Used by :mod:`crashtest`.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import signal
import sys
import threading


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(target: str, nth: int, when: str) -> None:
    module_name, _, qualname = target.partition(":")
    owner: object = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = inspect.getattr_static(owner, name)
    wrapped_fn = original.__func__ if isinstance(original, (staticmethod, classmethod)) else original
    lock = threading.Lock()
    calls = [0]

    def due() -> bool:
        with lock:
            calls[0] += 1
            return calls[0] == nth

    if inspect.iscoroutinefunction(wrapped_fn):
        @functools.wraps(wrapped_fn)
        async def wrapper(*args, **kwargs):
            kill = due()
            if kill and when == "enter":
                _die()
            result = await wrapped_fn(*args, **kwargs)
            if kill:
                _die()
            return result
    else:
        @functools.wraps(wrapped_fn)
        def wrapper(*args, **kwargs):
            kill = due()
            if kill and when == "enter":
                _die()
            result = wrapped_fn(*args, **kwargs)
            if kill:
                _die()
            return result

    if isinstance(original, staticmethod):
        wrapper = staticmethod(wrapper)
    elif isinstance(original, classmethod):
        wrapper = classmethod(wrapper)
    setattr(owner, name, wrapper)


if __name__ == "__main__":
    target, nth, when, *argv = sys.argv[1:]
    if when not in ("enter", "return"):
        raise SystemExit(f"WHEN must be enter or return, not {when!r}")
    install(target, int(nth), when)
    from scholargraph.cli import main

    sys.exit(main(argv))
