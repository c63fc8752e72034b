"""Concurrency slots are handed out first come, first served."""

import asyncio

from scholargraph.llm.http_pools import FairSlots


def test_a_freed_slot_goes_to_the_oldest_waiter_not_a_newcomer():
    """The pattern of extraction then gleaning: a call ends and the same task at once asks again."""

    async def run() -> list[str]:
        slots = FairSlots(1)
        order: list[str] = []

        async def repeat_caller() -> None:
            index = await slots.acquire()
            await asyncio.sleep(0.01)
            slots.release(index)
            index = await slots.acquire()  # asks again before the waiter has run
            order.append("repeat caller")
            slots.release(index)

        async def waiter() -> None:
            await asyncio.sleep(0)  # queues while the slot is held
            index = await slots.acquire()
            order.append("waiter")
            slots.release(index)

        await asyncio.gather(repeat_caller(), waiter())
        return order

    assert asyncio.run(run()) == ["waiter", "repeat caller"]


def test_a_cancelled_waiter_does_not_lose_the_slot():
    async def run() -> int:
        slots = FairSlots(1)
        held = await slots.acquire()
        doomed = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0)
        slots.release(held)  # handed to the doomed waiter...
        doomed.cancel()  # ...which is cancelled before it runs: the slot must come back
        await asyncio.gather(doomed, return_exceptions=True)
        return await asyncio.wait_for(slots.acquire(), 1)

    assert asyncio.run(run()) == 0


def test_an_urgent_waiter_goes_before_older_bulk_waiters():
    async def run() -> list[str]:
        slots = FairSlots(1)
        order: list[str] = []
        held = await slots.acquire()

        async def take(name: str, urgent: bool) -> None:
            index = await slots.acquire(urgent)
            order.append(name)
            slots.release(index)

        tasks = [asyncio.create_task(take(f"bulk {i}", False)) for i in range(3)]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(take("question", True)))
        await asyncio.sleep(0)
        slots.release(held)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(run()) == ["question", "bulk 0", "bulk 1", "bulk 2"]
