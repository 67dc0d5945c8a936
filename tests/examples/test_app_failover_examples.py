"""The application-failover scenarios of ``examples/`` run through ``fleetkeeper simulate``'s
entry point: every expectation in each file must hold, and the timeline must tell the story
in the right order."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fleetkeeper.cmd.simulate import run_file
from fleetkeeper.simulation.driver import Outcome, TimelineLine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(EXAMPLES.glob("app-failover-*.yaml"))


@functools.cache
def outcome(name: str) -> Outcome:
    return run_file(EXAMPLES / name)


def lines(name: str, subject: str, text: str) -> list[TimelineLine]:
    return [line for line in outcome(name).timeline if line.subject == subject and text in line.message]


def first(name: str, subject: str, text: str) -> TimelineLine:
    found = lines(name, subject, text)
    assert found, f"{name}: no timeline line of {subject} containing {text!r}"
    return found[0]


def test_every_application_failover_story_is_covered() -> None:
    assert {f.name for f in FILES} >= {
        "app-failover-spot-preemption.yaml", "app-failover-purge-gracefully.yaml",
        "app-failover-purge-never.yaml", "app-failover-purge-directly.yaml", "app-failover-flapping.yaml",
        "app-failover-preconditions.yaml", "app-failover-state-preservation.yaml"}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_expectation_holds(path: Path) -> None:
    result = outcome(path.name)
    assert result.expectations > 0
    assert result.passed, "\n".join(f.message() for f in result.failures)


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_story_replays_identically(path: Path) -> None:
    again = run_file(path)
    assert [line.text() for line in again.timeline] == [line.text() for line in outcome(path.name).timeline]


def test_spot_preemption_moves_the_share_after_the_toleration_and_blocks_member1() -> None:
    name, rb = "app-failover-spot-preemption.yaml", "rb/default/nginx-deployment"
    nodes_gone = first(name, "scenario", "setNodes member1 to 0").t
    evicted = first(name, rb, "evicted from member1 (ApplicationFailure, Gracefully)")
    assert 120 <= evicted.t - nodes_gone < 125
    assert "blocked for this workload until" in first(name, rb, "member1 blocked").message
    rescheduled = [line.message for line in lines(name, rb, "scheduled to")]
    assert rescheduled[-2:] == ["scheduled to {member2:6} (was {member2:4})",
                                "scheduled to {member1:2, member2:2} (was {member2:6})"]


def test_flapping_evicts_at_350s_not_at_300s_nor_after_a_reset() -> None:
    name, rb = "app-failover-flapping.yaml", "rb/default/api-deployment"
    paused = first(name, rb, "unhealthy clock paused at")
    assert 200 <= paused.t < 202
    evicted = first(name, rb, "evicted from member1")
    assert 350 <= evicted.t < 353
    assert "after 300s unhealthy" in evicted.message


def test_directly_removes_the_old_copy_before_creating_the_new_one() -> None:
    name, rb = "app-failover-purge-directly.yaml", "rb/default/batch-deployment"
    timeline = outcome(name).timeline
    deleted = next(i for i, line in enumerate(timeline)
                   if line.subject == rb and line.message.startswith("Work karmada-es-member1/"))
    created = next(i for i, line in enumerate(timeline)
                   if line.subject == rb and line.message.endswith("created in member2"))
    assert deleted < created


def test_gracefully_keeps_the_old_copy_for_the_grace_period_when_the_new_one_never_gets_healthy() -> None:
    name, rb = "app-failover-purge-gracefully.yaml", "rb/default/slow-deployment"
    evicted = first(name, rb, "evicted from member1")
    completed = first(name, rb, "eviction from member1 completed")
    assert "grace period of 120s elapsed" in completed.message
    assert 120 <= completed.t - evicted.t < 121


def test_never_keeps_the_old_copy_until_the_task_is_removed_by_hand() -> None:
    name, rb = "app-failover-purge-never.yaml", "rb/default/ledger-deployment"
    patched = first(name, "scenario", "patch ResourceBinding/ledger-deployment")
    deleted = first(name, rb, "Work karmada-es-member1/")
    assert deleted.t == patched.t


def test_preconditions_hold_failover_back() -> None:
    name = "app-failover-preconditions.yaml"
    legacy = first(name, "rb/default/legacy-deployment", "evicted from member1")
    assert 660 <= legacy.t < 662
    assert not lines(name, "rb/default/fragile-deployment", "evicted")
    assert "never been Healthy" in first(name, "rb/default/fragile-deployment", "no failover from it").message
