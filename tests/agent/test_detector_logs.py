"""While a member is down its DNS detectors cannot reach their Lease nor their node; each
says so once, then about once a minute of (virtual) time with the count it held back — not
at every retry or detection period (the seed story: member1 is down from 60 s to 200 s)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml
from structlog.testing import capture_logs

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import run_scenario

STORY = Path(__file__).resolve().parents[2] / "examples" / "seed-blog-member1-down.yaml"


def test_detectors_of_a_down_member_say_their_lease_failures_rarely() -> None:
    with capture_logs() as logs:
        outcome = run_scenario(scenario.parse(yaml.safe_load(STORY.read_text())), PlaneFactory("memory://"),
                               clock=VirtualClock())
    assert outcome.passed, [f.message() for f in outcome.failures]
    failed = [entry for entry in logs if entry["event"] == "lease request failed"]
    by_node = Counter(entry["identity"] for entry in failed)
    assert by_node, "the outage is said"
    assert all(identity.startswith("member1-") for identity in by_node), by_node
    # 140 s down, a retry every 2 s: the first failure, then at most one a minute, per node
    assert max(by_node.values()) <= 4, by_node
    assert any(entry.get("suppressed", 0) >= 20 for entry in failed), [e.get("suppressed") for e in failed]
    assert not [entry for entry in logs if entry.get("exc_info")]
    unread = Counter(entry["host"] for entry in logs if entry["event"] == "LoadCorednsConditionFailed")
    assert unread and max(unread.values()) <= 4, unread
