"""Leader-election rules over a Lease record: free, take, claim, release."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fleetkeeper.api.coordination import LeaseSpec
from fleetkeeper.runtime import lease as rules

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def held(by: str | None, renewed_ago: float | None, duration: int | None = 15) -> LeaseSpec:
    return LeaseSpec(
        holder_identity=by, lease_duration_seconds=duration,
        renew_time=None if renewed_ago is None else NOW - timedelta(seconds=renewed_ago),
        acquire_time=NOW - timedelta(hours=1), lease_transitions=3,
    )


@pytest.mark.parametrize(
    ("spec", "free"),
    [
        pytest.param(held(None, 1), True, id="a lease nobody holds is free"),
        pytest.param(held("", 1), True, id="a released lease (empty holder) is free"),
        pytest.param(held("a", 1), False, id="a lease renewed a second ago is held"),
        pytest.param(held("a", 15), False, id="a lease is still held at exactly renew time plus duration"),
        pytest.param(held("a", 15.001), True, id="a lease past renew time plus duration has expired"),
        pytest.param(held("a", None), True, id="a lease never renewed is free"),
        pytest.param(held("a", 1, duration=None), True, id="a lease without a duration is free"),
    ],
)
def test_is_free(spec: LeaseSpec, free: bool) -> None:
    assert rules.is_free(spec, NOW) is free


@pytest.mark.parametrize(
    ("spec", "identity", "allowed"),
    [
        pytest.param(held("me", 1), "me", True, id="the holder may always renew"),
        pytest.param(held("me", 100), "me", True, id="the holder may renew even after expiry"),
        pytest.param(held("other", 1), "me", False, id="a live lease of another holder cannot be taken"),
        pytest.param(held("other", 100), "me", True, id="an expired lease of another holder can be taken"),
    ],
)
def test_can_take(spec: LeaseSpec, identity: str, allowed: bool) -> None:
    assert rules.can_take(spec, identity, NOW) is allowed


def test_claiming_a_missing_lease_starts_at_zero_transitions() -> None:
    spec = rules.claimed(None, "me", lease_duration=15.0, now=NOW)
    assert spec == LeaseSpec(holder_identity="me", lease_duration_seconds=15, acquire_time=NOW,
                             renew_time=NOW, lease_transitions=0)


def test_renewing_moves_only_the_renew_time() -> None:
    before = held("me", 2)
    after = rules.claimed(before, "me", lease_duration=15.0, now=NOW)
    assert after.renew_time == NOW
    assert (after.acquire_time, after.lease_transitions) == (before.acquire_time, 3)


def test_taking_over_counts_a_transition_and_resets_acquire_time() -> None:
    after = rules.claimed(held("other", 100), "me", lease_duration=15.0, now=NOW)
    assert (after.holder_identity, after.acquire_time, after.renew_time, after.lease_transitions) == (
        "me", NOW, NOW, 4)


def test_fractional_durations_round_up_to_whole_seconds() -> None:
    assert rules.claimed(None, "me", lease_duration=2.5, now=NOW).lease_duration_seconds == 3


def test_release_clears_the_holder_keeps_transitions_and_frees_the_lease_now() -> None:
    after = rules.released(held("me", 1), now=NOW)
    assert (after.holder_identity, after.lease_duration_seconds, after.lease_transitions) == ("", 1, 3)
    assert rules.is_free(after, NOW)
