"""Several servers behind one client: which endpoint takes the next call, and which are out.

Each endpoint has a number of slots (its ``max_concurrency``, or fewer when a llama.cpp server's
``/props`` says it runs fewer requests at once). A call waits for a slot, first come first served
with the urgent calls (a question someone waits for) ahead of the bulk ones, and gets one on the
endpoint with the most free capacity: the fewest calls in flight relative to its slots. Waiting
happens here, never in a server's queue where the client's timeout would run.

A failing endpoint (refused connection, 5xx, time-out, malformed reply) is taken out after
``endpoint_failures`` failed attempts in a row (at once for a refused connection) for
``endpoint_cooldown`` seconds; then one call at a time tries it again (a failure doubles the time
out, up to 64 times; an answer puts it back). The call that failed is retried by the client on an
endpoint still in service. With a single endpoint nothing is taken out: the client's retries with
back-off are the whole story, as before several were possible. When every endpoint is out, calls
wait for the first to be tried again.

Own code rather than LiteLLM's ``Router`` (README.md, "Several LLM servers", says why):
the choice and the breaker are this module's ~200 lines.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

MAX_COOLDOWN_DOUBLINGS = 6


@dataclass
class Endpoint:
    """One server as the client sees it: what it serves, its slots, and whether it is in service."""

    index: int
    base_url: str
    model: str
    slots: int  # configured concurrency
    api_key: str | None = None
    limit: int | None = None  # what the server says it runs at once (llama.cpp /props), if fewer
    in_flight: int = 0
    failures: int = 0  # failed attempts in a row
    times_out: int = 0  # taken out in a row (the cooldown doubles with each)
    out_until: float | None = None  # monotonic time it may be tried again; None: in service
    down_reason: str = ""
    _free: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._free = list(range(self.slots - 1, -1, -1))

    @property
    def label(self) -> str:
        """How the endpoint is named in messages and ``stats --cost``: its base URL (never the key)."""
        return self.base_url

    @property
    def capacity(self) -> int:
        return min(self.slots, self.limit or self.slots)

    @property
    def out(self) -> bool:
        return self.out_until is not None

    def cap(self, limit: int) -> None:
        """The server runs at most ``limit`` requests at once: hand out no more slots than that."""
        self.limit = max(1, limit)
        self._free = [i for i in self._free if i < self.capacity]

    def load(self) -> float:
        return self.in_flight / self.capacity

    @property
    def free(self) -> int:
        return len(self._free)

    def takes(self, now: float) -> bool:
        """A call may go here now: a slot is free and the endpoint is in service, or its time out is
        over and no other call is trying it."""
        if not self._free:
            return False
        return self.out_until is None or (now >= self.out_until and self.in_flight == 0)

    def take_slot(self) -> int:
        self.in_flight += 1
        return self._free.pop()

    def give_slot(self, slot: int) -> None:
        self.in_flight -= 1
        if slot < self.capacity:
            self._free.append(slot)


@dataclass(frozen=True)
class Lease:
    endpoint: Endpoint
    slot: int


class Router:
    """Hands out slots over ``endpoints`` and keeps each endpoint's failure record (see the module)."""

    def __init__(self, endpoints: Sequence[Endpoint], failures_to_trip: int = 3, cooldown: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        if not endpoints:
            raise ValueError("a router needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.failures_to_trip = failures_to_trip
        self.cooldown = cooldown
        self.clock = clock
        self._urgent: collections.deque[asyncio.Future[Lease]] = collections.deque()
        self._waiters: collections.deque[asyncio.Future[Lease]] = collections.deque()
        self._wakeup: asyncio.TimerHandle | None = None

    # -- slots -----------------------------------------------------------------------------
    async def acquire(self, urgent: bool = False) -> Lease:
        if not self._urgent and not self._waiters and (endpoint := self._best()) is not None:
            return Lease(endpoint, endpoint.take_slot())
        waiter: asyncio.Future[Lease] = asyncio.get_running_loop().create_future()
        queue = self._urgent if urgent else self._waiters
        queue.append(waiter)
        self._dispatch()
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(waiter.result())  # handed a slot while being cancelled: pass it on
            elif waiter in queue:
                queue.remove(waiter)
            raise

    def release(self, lease: Lease) -> None:
        lease.endpoint.give_slot(lease.slot)
        self._dispatch()

    def _best(self) -> Endpoint | None:
        """The endpoint that takes a call now: one whose time out is over gets the next call (its trial),
        else the lowest load, then the most free slots."""
        now = self.clock()
        ready = [e for e in self.endpoints if e.takes(now)]
        if not ready:
            return None
        return min(ready, key=lambda e: (not e.out, e.load(), -e.free, e.index))

    def _dispatch(self) -> None:
        for queue in (self._urgent, self._waiters):
            while queue:
                if queue[0].done():  # cancelled while waiting
                    queue.popleft()
                    continue
                endpoint = self._best()
                if endpoint is None:
                    self._wake_when_back()
                    return
                queue.popleft().set_result(Lease(endpoint, endpoint.take_slot()))

    def _wake_when_back(self) -> None:
        """Every endpoint with a free slot is out: look again when the first may be tried."""
        due = [e.out_until for e in self.endpoints if e.out_until is not None and e.in_flight == 0]
        if not due or self._wakeup is not None:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, min(due) - self.clock())

        def wake() -> None:
            self._wakeup = None
            self._dispatch()

        self._wakeup = loop.call_later(delay + 0.001, wake)

    # -- health ------------------------------------------------------------------------------
    @property
    def breaks(self) -> bool:
        """Endpoints are taken out only when there is another to go to."""
        return len(self.endpoints) > 1

    def succeeded(self, endpoint: Endpoint) -> None:
        back = endpoint.out
        endpoint.failures = 0
        endpoint.times_out = 0
        endpoint.out_until = None
        endpoint.down_reason = ""
        if back:
            self._dispatch()

    def failed(self, endpoint: Endpoint, reason: str, at_once: bool = False) -> None:
        """One attempt on ``endpoint`` got no answer; ``at_once``: take it out now (refused connection)."""
        endpoint.failures += 1
        if not self.breaks:
            return
        if endpoint.out or at_once or endpoint.failures >= self.failures_to_trip:
            self.take_out(endpoint, reason)

    def take_out(self, endpoint: Endpoint, reason: str) -> None:
        doublings = min(endpoint.times_out, MAX_COOLDOWN_DOUBLINGS)
        endpoint.times_out += 1
        endpoint.out_until = self.clock() + self.cooldown * 2**doublings
        endpoint.down_reason = reason

    def another_in_service(self, endpoint: Endpoint) -> bool:
        """Whether a retry can go elsewhere at once (no need to back off)."""
        return any(e is not endpoint and not e.out for e in self.endpoints)

    def close(self) -> None:
        """Forget the event loop's timer and waiters (a client used from another loop next)."""
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None
        self._urgent.clear()
        self._waiters.clear()
