"""The remedy stories of ``examples/`` through ``fleetkeeper simulate``'s entry point: every
expectation holds, and the timeline tells detect → remedy → traffic in order, at the
thresholds' instants."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fleetkeeper.cmd.simulate import run_file
from fleetkeeper.simulation.driver import Outcome, TimelineLine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(EXAMPLES.glob("remedy-*.yaml"))


@functools.cache
def outcome(name: str) -> Outcome:
    return run_file(EXAMPLES / name)


def first(name: str, subject: str, text: str) -> TimelineLine:
    found = [line for line in outcome(name).timeline if line.subject == subject and text in line.message]
    assert found, f"{name}: no timeline line of {subject} containing {text!r}"
    return found[0]


def test_both_stories_are_there() -> None:
    assert {f.name for f in FILES} >= {"remedy-dns-down.yaml", "remedy-immediate.yaml"}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_expectation_holds(path: Path) -> None:
    result = outcome(path.name)
    assert result.expectations > 0
    assert result.passed, "\n".join(f.message() for f in result.failures)


def test_dns_down_is_detected_after_the_failure_threshold_then_blocks_traffic() -> None:
    name = "remedy-dns-down.yaml"
    down = first(name, "scenario", "dnsDown member1").t
    detected = first(name, "cluster/member1", "ServiceDomainNameResolutionReady=False").t
    remedied = first(name, "cluster/member1", "remedy actions [TrafficControl] by Remedy dns-broken").t
    blocked = first(name, "mci/default/web", "traffic to member1 blocked (TrafficControl)").t
    assert 30 <= detected - down <= 30 + 5 + 2.5  # the threshold, plus one detect and one aggregate period
    assert detected == remedied == blocked
    up = first(name, "scenario", "dnsUp member1").t
    restored = first(name, "mci/default/web", "traffic to member1 restored").t
    assert 30 <= restored - up <= 30 + 5 + 2.5
    assert first(name, "cluster/member1", "remedy actions cleared").t == restored
    assert not [line for line in outcome(name).timeline if line.subject == "cluster/member2"
                and "ServiceDomainNameResolutionReady" in line.message]


def test_an_immediate_remedy_blocks_at_once_and_its_deletion_restores() -> None:
    name = "remedy-immediate.yaml"
    applied = first(name, "scenario", "apply Remedy/upgrade-member1").t
    assert first(name, "mci/default/shop", "traffic to member1 blocked").t == applied
    deleted = first(name, "scenario", "delete Remedy/upgrade-member1").t
    assert first(name, "mci/default/shop", "traffic to member1 restored").t == deleted
