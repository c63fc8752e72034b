"""The knowledge base's own event loop, in its own thread.

Every facade call the server makes runs there: queries, index jobs and the short synchronous reads
(status, stats, entities). The HTTP event loop only awaits the results, so a slow query, a
commit or an index run never delays other requests, server-sent events or static files; and the
knowledge base keeps the single-loop use it was written for (its LLM client, embedding lock and
store are used from one loop, plus the pipeline's own worker threads).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from ..kb import KnowledgeBase

T = TypeVar("T")


class KBRunner:
    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="scholargraph-kb-loop", daemon=True)
        self._started = threading.Event()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        self.loop.run_forever()

    def start(self) -> KBRunner:
        self._thread.start()
        self._started.wait()
        return self

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule ``coro`` on the knowledge-base loop (from any thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the knowledge-base loop; cancelling the caller cancels it there too."""
        future = self.submit(coro)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A synchronous facade method, run on the knowledge-base loop's thread."""

        async def invoke() -> T:
            return fn(*args, **kwargs)

        return await self.run(invoke())

    def stop(self, closing: Callable[[], Coroutine[Any, Any, None]] | None = None, timeout: float = 10.0) -> None:
        if not self._thread.is_alive():
            return
        if closing is not None:
            try:
                self.submit(closing()).result(timeout)
            except Exception:  # noqa: BLE001 - shutting down: nothing more to do with a failure here
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        self.loop.close()
