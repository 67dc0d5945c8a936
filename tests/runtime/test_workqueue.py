"""The workqueue: dedup, one worker per key, delayed and rate-limited adds, shutdown."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.ratelimit import ItemExponential
from fleetkeeper.runtime.workqueue import ShutDown, Workqueue

from .helpers import run_virtual


async def drain(queue: Workqueue[str]) -> list[str]:
    """Take (and finish) every ready key, in order."""
    taken = []
    while len(queue):
        key = await queue.get()
        queue.done(key)
        taken.append(key)
    return taken


def test_repeated_adds_of_a_queued_key_coalesce() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        for key in ["a", "b", "a", "c", "b", "a"]:
            queue.add(key)
        assert len(queue) == 3
        return await drain(queue)

    assert run_virtual(main) == ["a", "b", "c"]


def test_a_key_added_while_processing_waits_for_done() -> None:
    async def main(clock: VirtualClock) -> list[object]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        queue.add("a")
        key = await queue.get()
        queue.add("a")
        queue.add("a")
        seen: list[object] = [len(queue), queue.is_processing("a")]
        queue.done(key)
        seen += [len(queue), await drain(queue)]
        return seen

    assert run_virtual(main) == [0, True, 1, ["a"]]


def test_a_key_added_during_processing_goes_to_the_back() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        queue.add("a")
        key = await queue.get()
        queue.add("a")
        queue.add("b")
        queue.done(key)
        return await drain(queue)

    assert run_virtual(main) == ["b", "a"]


def test_add_after_makes_the_key_ready_at_its_virtual_deadline() -> None:
    async def main(clock: VirtualClock) -> tuple[str, float]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        queue.add_after("a", 42.0)
        assert len(queue) == 0 and queue.parked == 1
        key = await queue.get()
        return key, clock.monotonic()

    assert run_virtual(main) == ("a", 42.0)


@pytest.mark.parametrize(
    ("delays", "ready_at"),
    [
        pytest.param([10.0, 5.0], 5.0, id="a later add with an earlier deadline wins"),
        pytest.param([5.0, 10.0], 5.0, id="a later add with a later deadline is ignored"),
        pytest.param([5.0, 0.0], 0.0, id="an immediate add makes the key ready now"),
    ],
)
def test_the_earliest_deadline_wins(delays: list[float], ready_at: float) -> None:
    async def main(clock: VirtualClock) -> list[float]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        for delay in delays:
            queue.add_after("a", delay)
        times = []
        for _ in range(3):  # the key comes out once, and only once before the last deadline
            try:
                async with asyncio.timeout(max(delays) + 1.0):
                    key = await queue.get()
            except TimeoutError:
                break
            queue.done(key)
            times.append(clock.monotonic())
        return times

    times = run_virtual(main)
    assert times[0] == ready_at
    assert times.count(ready_at) == 1


def test_delayed_keys_become_ready_in_deadline_then_insertion_order() -> None:
    async def main(clock: VirtualClock) -> list[tuple[float, str]]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        queue.add_after("late-1", 5.0)
        queue.add_after("early", 3.0)
        queue.add_after("late-2", 5.0)
        queue.add_after("late-0", 5.0)
        queue.add_after("late-0", 5.0)
        out = []
        for _ in range(4):
            key = await queue.get()
            queue.done(key)
            out.append((clock.monotonic(), key))
        return out

    assert run_virtual(main) == [(3.0, "early"), (5.0, "late-1"), (5.0, "late-2"), (5.0, "late-0")]


def test_add_after_before_the_loop_runs_is_armed_by_get() -> None:
    clock = VirtualClock()
    queue: Workqueue[str] = Workqueue(clock=clock)
    queue.add_after("a", 7.0)

    async def main() -> tuple[str, float]:
        key = await queue.get()
        return key, clock.monotonic()

    assert clock.run(main()) == ("a", 7.0)


def test_rate_limited_adds_wait_the_limiter_delay_and_forget_resets_it() -> None:
    async def main(clock: VirtualClock) -> tuple[list[float], int]:
        queue: Workqueue[str] = Workqueue(clock=clock, rate_limiter=ItemExponential(1.0, 60.0))
        gaps = []
        for _ in range(4):
            start = clock.monotonic()
            queue.add_rate_limited("a")
            key = await queue.get()
            queue.done(key)
            gaps.append(clock.monotonic() - start)
        requeues = queue.num_requeues("a")
        queue.forget("a")
        start = clock.monotonic()
        queue.add_rate_limited("a")
        await queue.get()
        gaps.append(clock.monotonic() - start)
        return gaps, requeues

    gaps, requeues = run_virtual(main)
    assert gaps == [1.0, 2.0, 4.0, 8.0, 1.0]
    assert requeues == 4


def test_waiting_getters_are_served_in_the_order_they_asked() -> None:
    async def main(clock: VirtualClock) -> list[tuple[str, str]]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        served: list[tuple[str, str]] = []

        async def getter(name: str) -> None:
            served.append((name, await queue.get()))

        async with asyncio.TaskGroup() as group:
            for name in ["g1", "g2", "g3"]:
                group.create_task(getter(name))
            await clock.settle()
            for key in ["x", "y", "z"]:
                queue.add(key)
        return served

    assert run_virtual(main) == [("g1", "x"), ("g2", "y"), ("g3", "z")]


def test_a_woken_getter_that_is_cancelled_passes_the_key_on() -> None:
    async def main(clock: VirtualClock) -> str:
        queue: Workqueue[str] = Workqueue(clock=clock)
        first = asyncio.create_task(queue.get())
        second = asyncio.create_task(queue.get())
        await clock.settle()
        queue.add("a")  # wakes ``first``…
        first.cancel()  # …which goes away before taking it
        async with asyncio.timeout(1.0):
            return await second

    assert run_virtual(main) == "a"


def test_shutdown_hands_out_ready_keys_then_raises_and_ignores_adds() -> None:
    async def main(clock: VirtualClock) -> list[object]:
        queue: Workqueue[str] = Workqueue(clock=clock)
        queue.add("ready")
        queue.add_after("parked", 5.0)
        queue.shutdown()
        queue.add("late")
        out: list[object] = [await queue.get()]
        try:
            await queue.get()
        except ShutDown:
            out.append("shut down")
        out.append(queue.parked)
        return out

    assert run_virtual(main) == ["ready", "shut down", 0]


def test_shutdown_wakes_idle_getters() -> None:
    async def main(clock: VirtualClock) -> bool:
        queue: Workqueue[str] = Workqueue(clock=clock)
        getter = asyncio.create_task(queue.get())
        await clock.settle()
        queue.shutdown()
        with pytest.raises(ShutDown):
            await getter
        return True

    assert run_virtual(main)


Op = tuple[str, str]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(["a", "b", "c"])),
        st.tuples(st.just("take"), st.just("")),
        st.tuples(st.just("done"), st.just("")),
    ),
    max_size=60,
)


@given(ops)
def test_any_sequence_of_adds_takes_and_dones_keeps_the_queue_stingy(sequence: list[Op]) -> None:
    async def main(clock: VirtualClock) -> None:
        queue: Workqueue[str] = Workqueue(clock=clock)
        processing: list[str] = []
        dirty: set[str] = set()  # added since it was last handed out
        for op, key in sequence + [("done", "")] * 60:
            if op == "add":
                queue.add(key)
                dirty.add(key)
            elif op == "take" and len(queue):
                taken = await queue.get()
                assert taken not in processing, "a key is never handed to two workers"
                assert taken in dirty
                dirty.discard(taken)
                processing.append(taken)
            elif op == "done" and processing:
                queue.done(processing.pop(0))
            assert len(queue) == len(dirty - set(processing)), "ready = added and not being processed"
        while len(queue):  # everything added is eventually handed out, once
            taken = await queue.get()
            dirty.discard(taken)
            queue.done(taken)
        assert dirty == set()

    run_virtual(main)


PRIORITIES = {"low": -5, "zero": 0, "zero2": 0, "high": 100, "mid": 10}


def test_a_queue_with_priorities_hands_out_the_highest_first_and_fifo_among_equals() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        queue: Workqueue[str] = Workqueue(clock=clock, priority=PRIORITIES.__getitem__)
        for key in ["zero", "low", "high", "zero2", "mid", "high", "zero"]:
            queue.add(key)
        assert len(queue) == 5, "adds still coalesce"
        return await drain(queue)

    assert run_virtual(main) == ["high", "mid", "zero", "zero2", "low"]


def test_delayed_and_requeued_keys_keep_their_priority() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        queue: Workqueue[str] = Workqueue(clock=clock, priority=PRIORITIES.__getitem__)
        queue.add("low")
        queue.add_after("high", 5.0)
        queue.add("zero")
        taken = await queue.get()
        queue.add(taken)  # changed while processing: back in line when done, by its priority
        queue.done(taken)
        await clock.sleep(5.0)
        return [taken, *await drain(queue)]

    assert run_virtual(main) == ["zero", "high", "zero", "low"]


@given(st.lists(st.sampled_from(sorted(PRIORITIES)), max_size=30))
def test_priority_order_is_stable_for_any_adds(keys: list[str]) -> None:
    async def main(clock: VirtualClock) -> list[str]:
        queue: Workqueue[str] = Workqueue(clock=clock, priority=PRIORITIES.__getitem__)
        for key in keys:
            queue.add(key)
        return await drain(queue)

    firsts = list(dict.fromkeys(keys))
    assert run_virtual(main) == sorted(firsts, key=lambda k: -PRIORITIES[k])


def test_retries_count_rate_limited_adds_and_not_delayed_ones() -> None:
    """``workqueue_retries_total`` as client-go counts it: each rate-limited add; a requeue
    after a time is no retry."""

    async def main(clock: VirtualClock) -> float:
        queue: Workqueue[str] = Workqueue(clock=clock, name="retries-test",
                                          rate_limiter=ItemExponential(1.0, 60.0))
        queue.add_after("a", 5.0)
        queue.add_rate_limited("b")
        queue.add_rate_limited("c")
        await drain(queue)
        return queue.metrics.retries.value

    assert run_virtual(main) == 2.0
