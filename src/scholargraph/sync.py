"""Run a coroutine to completion from synchronous code, with or without a running event loop.

``asyncio.run`` refuses to start inside a running loop (Jupyter, an async web handler, another
library's loop). :func:`run_sync` then runs the coroutine in its own event loop on a worker
thread and blocks the calling thread until it is done, so the sync API of
:class:`~scholargraph.kb.KnowledgeBase` works anywhere. Outside a loop it is ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """The result of ``coro``, run to completion (in a worker thread when a loop is running here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1, thread_name_prefix="scholargraph-sync") as pool:
        return pool.submit(asyncio.run, coro).result()
