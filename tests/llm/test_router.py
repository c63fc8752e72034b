"""Slots over several endpoints: first come first served, urgent first, the freest endpoint, and a
failing endpoint taken out and tried again later (the breaker)."""

import asyncio

import pytest

from scholargraph.llm.router import Endpoint, Router


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def one_endpoint(slots: int) -> Router:
    return Router([Endpoint(0, "http://a/v1", "m", slots)])


def test_a_freed_slot_goes_to_the_oldest_waiter_not_a_newcomer():
    """The pattern of extraction then gleaning: a call ends and the same task at once asks again."""

    async def run() -> list[str]:
        router = one_endpoint(1)
        order: list[str] = []

        async def repeat_caller() -> None:
            lease = await router.acquire()
            await asyncio.sleep(0.01)
            router.release(lease)
            lease = await router.acquire()  # asks again before the waiter has run
            order.append("repeat caller")
            router.release(lease)

        async def waiter() -> None:
            await asyncio.sleep(0)  # queues while the slot is held
            lease = await router.acquire()
            order.append("waiter")
            router.release(lease)

        await asyncio.gather(repeat_caller(), waiter())
        return order

    assert asyncio.run(run()) == ["waiter", "repeat caller"]


def test_a_cancelled_waiter_does_not_lose_the_slot():
    async def run() -> int:
        router = one_endpoint(1)
        held = await router.acquire()
        doomed = asyncio.create_task(router.acquire())
        await asyncio.sleep(0)
        router.release(held)  # handed to the doomed waiter...
        doomed.cancel()  # ...which is cancelled before it runs: the slot must come back
        await asyncio.gather(doomed, return_exceptions=True)
        return (await asyncio.wait_for(router.acquire(), 1)).slot

    assert asyncio.run(run()) == 0


def test_an_urgent_waiter_goes_before_older_bulk_waiters():
    async def run() -> list[str]:
        router = one_endpoint(1)
        order: list[str] = []
        held = await router.acquire()

        async def take(name: str, urgent: bool) -> None:
            lease = await router.acquire(urgent)
            order.append(name)
            router.release(lease)

        tasks = [asyncio.create_task(take(f"bulk {i}", False)) for i in range(3)]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(take("question", True)))
        await asyncio.sleep(0)
        router.release(held)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(run()) == ["question", "bulk 0", "bulk 1", "bulk 2"]


def test_calls_go_to_the_endpoint_with_the_most_free_capacity_and_never_past_its_slots():
    async def run() -> list[str]:
        router = Router([Endpoint(0, "http://small/v1", "m", 1), Endpoint(1, "http://big/v1", "m", 3)])
        leases = [await router.acquire() for _ in range(4)]
        late = asyncio.create_task(router.acquire())
        await asyncio.sleep(0)
        assert not late.done(), "every slot is taken: the fifth call waits"
        router.release(leases[0])
        got = await asyncio.wait_for(late, 1)
        return [lease.endpoint.base_url for lease in leases] + [got.endpoint.base_url]

    # big (0/3, more free slots) first, small (0/1) next, then big; the freed slot of big goes to the fifth
    assert asyncio.run(run()) == ["http://big/v1", "http://small/v1", "http://big/v1", "http://big/v1",
                                  "http://big/v1"]


def test_a_server_with_fewer_slots_than_configured_gets_no_more_calls_than_it_has():
    async def run() -> int:
        endpoint = Endpoint(0, "http://a/v1", "m", 8)
        endpoint.cap(2)  # what llama.cpp's /props said
        router = Router([endpoint, Endpoint(1, "http://b/v1", "m", 8)])
        leases = [await router.acquire() for _ in range(10)]
        return sum(lease.endpoint is endpoint for lease in leases)

    assert asyncio.run(run()) == 2


def test_a_failing_endpoint_is_taken_out_then_tried_by_one_call_and_put_back_when_it_answers():
    clock = Clock()

    async def run() -> None:
        a, b = Endpoint(0, "http://a/v1", "m", 4), Endpoint(1, "http://b/v1", "m", 4)
        router = Router([a, b], failures_to_trip=2, cooldown=10.0, clock=clock)
        router.failed(a, "HTTP 503")
        assert not a.out, "one failure is not enough"
        router.failed(a, "HTTP 503")
        assert a.out and "503" in a.down_reason
        leases = [await router.acquire() for _ in range(4)]
        assert all(lease.endpoint is b for lease in leases), "nothing goes to an endpoint that is out"
        for lease in leases:
            router.release(lease)
        clock.now += 10.0  # its time out is over: the next call tries it, and only that one
        trial = [await router.acquire() for _ in range(4)]
        assert [lease.endpoint for lease in trial] == [a, b, b, b]
        router.succeeded(a)
        assert not a.out
        for lease in trial:
            router.release(lease)

    asyncio.run(run())


def test_a_failed_trial_doubles_the_time_out_and_a_refused_connection_takes_it_out_at_once():
    clock = Clock()
    a, b = Endpoint(0, "http://a/v1", "m", 1), Endpoint(1, "http://b/v1", "m", 1)
    router = Router([a, b], failures_to_trip=3, cooldown=10.0, clock=clock)
    router.failed(a, "connection refused", at_once=True)
    assert a.out_until == pytest.approx(110.0)
    clock.now = 110.0
    router.failed(a, "connection refused")  # the trial call failed too
    assert a.out_until == pytest.approx(130.0)


def test_a_single_endpoint_is_never_taken_out():
    router = one_endpoint(2)
    for _ in range(10):
        router.failed(router.endpoints[0], "HTTP 500", at_once=True)
    assert not router.endpoints[0].out


def test_when_every_endpoint_is_out_calls_wait_for_the_first_to_come_back():
    async def run() -> str:
        a, b = Endpoint(0, "http://a/v1", "m", 1), Endpoint(1, "http://b/v1", "m", 1)
        router = Router([a, b], cooldown=0.05)
        router.failed(a, "refused", at_once=True)
        router.failed(b, "refused", at_once=True)
        lease = await asyncio.wait_for(router.acquire(), 5)
        return lease.endpoint.base_url

    assert asyncio.run(run()) in ("http://a/v1", "http://b/v1")
