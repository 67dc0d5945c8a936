"""Rate limiters: the delays they hand out, alone and combined."""

from __future__ import annotations

import pytest

from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.ratelimit import ItemExponential, MaxOf, TokenBucket, default_rate_limiter

from .helpers import run_virtual


@pytest.mark.parametrize(
    ("failures", "expected"),
    [
        pytest.param(1, [0.005], id="the first failure waits the base delay of 5 ms"),
        pytest.param(4, [0.005, 0.01, 0.02, 0.04], id="each further failure doubles the delay"),
        pytest.param(20, [min(0.005 * 2**n, 1000.0) for n in range(20)],
                     id="after eighteen doublings the delay is capped at 1000 s"),
    ],
)
def test_item_exponential_sequence(failures: int, expected: list[float]) -> None:
    limiter = ItemExponential(0.005, 1000.0)
    assert [limiter.when("k") for _ in range(failures)] == pytest.approx(expected)
    assert limiter.num_requeues("k") == failures


def test_item_exponential_stays_at_the_cap_for_huge_failure_counts() -> None:
    limiter = ItemExponential(0.005, 1000.0)
    delays = [limiter.when("k") for _ in range(5000)]
    assert delays[-1] == 1000.0
    assert max(delays) == 1000.0


def test_item_exponential_keys_are_independent_and_forget_resets_one() -> None:
    limiter = ItemExponential(0.005, 1000.0)
    for _ in range(3):
        limiter.when("a")
    assert limiter.when("b") == pytest.approx(0.005)
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)
    assert limiter.when("b") == pytest.approx(0.01)


@pytest.mark.parametrize(
    ("base", "cap"),
    [
        pytest.param(0.0, 1.0, id="a zero base is refused"),
        pytest.param(2.0, 1.0, id="a cap below the base is refused"),
    ],
)
def test_item_exponential_rejects_bad_bounds(base: float, cap: float) -> None:
    with pytest.raises(ValueError):
        ItemExponential(base, cap)


def test_token_bucket_allows_a_burst_then_spaces_calls_at_the_rate() -> None:
    async def main(clock: VirtualClock) -> tuple[list[float], list[float]]:
        bucket = TokenBucket(10.0, 100, clock=clock)
        burst = [bucket.when(f"k{i}") for i in range(100)]
        beyond = [bucket.when("x") for _ in range(3)]
        return burst, beyond

    burst, beyond = run_virtual(main)
    assert burst == [0.0] * 100
    assert beyond == pytest.approx([0.1, 0.2, 0.3])


def test_token_bucket_refills_with_time_but_never_beyond_the_burst() -> None:
    async def main(clock: VirtualClock) -> tuple[float, list[float]]:
        bucket = TokenBucket(10.0, 100, clock=clock)
        for _ in range(100):
            bucket.when("k")
        await clock.sleep(1.0)  # ten tokens come back
        after_one_second = [bucket.when("k") for _ in range(11)][-1]
        await clock.sleep(3600.0)  # a long calm refills to the burst, not more
        return after_one_second, [bucket.when("k") for _ in range(101)]

    eleventh, after_calm = run_virtual(main)
    assert eleventh == pytest.approx(0.1)
    assert after_calm[:100] == [0.0] * 100
    assert after_calm[100] == pytest.approx(0.1)


def test_max_of_takes_the_longest_delay_and_forgets_everywhere() -> None:
    slow, fast = ItemExponential(1.0, 100.0), ItemExponential(0.001, 100.0)
    limiter = MaxOf(fast, slow)
    assert [limiter.when("k") for _ in range(3)] == pytest.approx([1.0, 2.0, 4.0])
    assert fast.num_requeues("k") == 3, "every part must see every failure"
    limiter.forget("k")
    assert (slow.num_requeues("k"), fast.num_requeues("k"), limiter.num_requeues("k")) == (0, 0, 0)


def test_default_rate_limiter_is_exponential_until_the_bucket_runs_dry() -> None:
    async def main(clock: VirtualClock) -> tuple[list[float], float]:
        limiter = default_rate_limiter(clock)
        per_key = [limiter.when("hot") for _ in range(3)]
        for i in range(97):
            limiter.when(f"other-{i}")
        return per_key, limiter.when("cold")

    per_key, cold = run_virtual(main)
    assert per_key == pytest.approx([0.005, 0.01, 0.02])
    assert cold == pytest.approx(0.1), "the 101st failure overall waits for a token"
