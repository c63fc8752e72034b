"""Run coroutines to completion from synchronous code, with or without a running event loop.

``asyncio.run`` refuses to start inside a running loop (Jupyter, an async web handler, another
library's loop). :func:`run_sync` then runs the coroutine in its own event loop on a worker
thread and blocks the calling thread until it is done. Outside a loop it is ``asyncio.run``.

:class:`KeptLoop` is the same with one event loop kept from call to call (closed by
:meth:`KeptLoop.close`): the sync API of :class:`~scholargraph.kb.KnowledgeBase` runs every call
on its workspace's loop, so the HTTP clients made for that loop (LLM, embeddings) serve every
call rather than being made again, and the model server's health checked again, for each. It
runs on the calling thread when no loop runs there (signals reach it as with ``asyncio.run``),
else on a worker thread; calls take turns.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["KeptLoop", "run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """The result of ``coro``, run to completion (in a worker thread when a loop is running here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1, thread_name_prefix="scholargraph-sync") as pool:
        return pool.submit(asyncio.run, coro).result()


class KeptLoop:
    """One event loop that runs coroutines from synchronous code until closed."""

    def __init__(self) -> None:
        self._runner = asyncio.Runner()
        self._turn = threading.Lock()
        self._used = False
        self._closed = False

    @property
    def used(self) -> bool:
        """Whether a coroutine ran on it (it holds what was made for its loop)."""
        return self._used

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """The result of ``coro``, run to completion on the kept loop."""
        if self._inside():  # a sync call from a coroutine this loop runs: a loop of its own, as before
            with ThreadPoolExecutor(1, thread_name_prefix="scholargraph-sync") as pool:
                return pool.submit(asyncio.run, coro).result()
        return self._here_or_in_thread(lambda: self._run_now(coro))

    def close(self, last: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Run ``last()`` on the loop (when it ran anything), then close it; later runs fail. From a
        coroutine the loop itself runs, nothing is closed (the loop cannot close under its caller)."""
        if not self._inside():
            self._here_or_in_thread(lambda: self._close_now(last))

    def _inside(self) -> bool:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return False
        return self._used and not self._closed and running is self._runner.get_loop()

    def _here_or_in_thread(self, fn: Callable[[], T]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return fn()
        with ThreadPoolExecutor(1, thread_name_prefix="scholargraph-sync") as pool:
            return pool.submit(fn).result()

    def _run_now(self, coro: Coroutine[Any, Any, T]) -> T:
        if not self._turn.acquire(blocking=False):
            # another call is on the loop (from another thread, or waiting for this very call in a
            # worker thread): a loop of its own, as before, rather than a wait that may never end
            return asyncio.run(coro)
        try:
            if self._closed:
                coro.close()
                raise RuntimeError("this knowledge base is closed")
            self._used = True
            return self._runner.run(coro)
        finally:
            self._turn.release()

    def _close_now(self, last: Callable[[], Coroutine[Any, Any, None]] | None) -> None:
        with self._turn:
            if self._closed:
                return
            self._closed = True
            try:
                if self._used and last is not None:
                    self._runner.run(last())
            finally:
                self._runner.close()
