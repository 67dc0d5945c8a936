"""Service-name-resolution detector rules: the threshold state machine of the proposal,
the node verdicts, the leader's aggregation (spec §4.14, §7.5 vectors)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fleetkeeper.agent import detector_rules as rules
from fleetkeeper.api.cluster import ClusterStatus
from fleetkeeper.api.meta import Condition

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
#: different on purpose, so each case shows which threshold applies
THRESHOLDS = rules.Thresholds(success=20.0, failure=40.0)
OK, FAIL = None, "lookup kubernetes.default: the cluster DNS answered SERVFAIL"


def verdict(status: str, *, heartbeat_ago: float = 0.0, transition_ago: float = 100.0) -> rules.NodeVerdict:
    return rules.NodeVerdict(status, "", "", NOW - timedelta(seconds=heartbeat_ago),  # type: ignore[arg-type]
                             NOW - timedelta(seconds=transition_ago))


def seen_since(status: str, ago: float) -> rules.ThresholdState:
    return rules.ThresholdState(status, NOW - timedelta(seconds=ago))  # type: ignore[arg-type]


# The proposal's table: detectionFlag (the verdict stored for the node) × this lookup ×
# how long the lookups have said so. The failure threshold delays True → False, the
# success threshold False → True (Karmada's implementation; the proposal swapped them).
@pytest.mark.parametrize(
    ("flag", "lookup", "seen_for", "expected"),
    [
        pytest.param("True", OK, 0, "True", id="flag true and success: normal at once"),
        pytest.param("True", OK, 100, "True", id="flag true and success for long: normal"),
        pytest.param("True", FAIL, 0, "True", id="flag true and a first failure: still normal"),
        pytest.param("True", FAIL, 39, "True", id="flag true, failing inside the failure threshold: normal"),
        pytest.param("True", FAIL, 40, "False", id="flag true, failing for the failure threshold: abnormal"),
        pytest.param("True", FAIL, 20, "True", id="flag true, failing for the success threshold: normal"),
        pytest.param("False", FAIL, 0, "False", id="flag false and failure: abnormal at once"),
        pytest.param("False", FAIL, 100, "False", id="flag false and failure for long: abnormal"),
        pytest.param("False", OK, 0, "False", id="flag false and a first success: still abnormal"),
        pytest.param("False", OK, 19, "False", id="flag false, succeeding inside the threshold: abnormal"),
        pytest.param("False", OK, 20, "True", id="flag false, succeeding for the success threshold: normal"),
    ],
)
def test_threshold_state_machine(flag: str, lookup: str | None, seen_for: float, expected: str) -> None:
    seen = rules.observed(lookup)
    state = seen_since(seen.status, seen_for)
    result, after = rules.adjusted(state, verdict(flag), seen, NOW, THRESHOLDS)
    assert result.status == expected
    assert after == state  # the same observation keeps its start


def test_a_changed_observation_restarts_the_window() -> None:
    seen = rules.observed(FAIL)
    result, state = rules.adjusted(seen_since("True", 300), verdict("True"), seen, NOW, THRESHOLDS)
    assert (result.status, state) == ("True", seen_since("False", 0))


def test_the_first_detection_is_stored_as_seen_when_nothing_is_stored() -> None:
    result, _ = rules.adjusted(None, None, rules.observed(FAIL), NOW, THRESHOLDS)
    assert result.status == "False" and result.reason == "ServiceDomainNameResolutionFailed"
    assert result.message == FAIL


def test_a_first_failure_after_a_restart_cannot_skip_the_failure_threshold() -> None:
    result, state = rules.adjusted(None, verdict("True"), rules.observed(FAIL), NOW, THRESHOLDS)
    assert result.status == "True"
    after = NOW + timedelta(seconds=40)
    later, _ = rules.adjusted(state, verdict("True"), rules.observed(FAIL), after, THRESHOLDS)
    assert later.status == "False"


def test_storing_moves_the_heartbeat_always_and_the_transition_on_change() -> None:
    current = verdict("True", heartbeat_ago=5, transition_ago=100)
    same = rules.stored(current, Condition(type=rules.CONDITION, status="True"), NOW)
    assert (same.last_heartbeat_time, same.last_transition_time) == (NOW, current.last_transition_time)
    flipped = rules.stored(current, rules.observed(FAIL), NOW)
    assert (flipped.status, flipped.last_transition_time, flipped.message) == ("False", NOW, FAIL)
    first = rules.stored(None, rules.observed(OK), NOW)
    assert (first.last_heartbeat_time, first.last_transition_time) == (NOW, NOW)


def test_a_verdict_survives_the_wire_and_garbage_does_not_parse() -> None:
    original = verdict("False", heartbeat_ago=1.5)
    assert rules.NodeVerdict.from_wire(original.to_wire()) == original
    import json

    assert rules.NodeVerdict.from_wire(json.dumps(original.to_wire())) == original
    for junk in (None, "", "{", {"status": "Maybe"}, {"status": "True"}, 7):
        assert rules.NodeVerdict.from_wire(junk) is None


def report(name: str, status: str | None, *, ready: bool = True,
           heartbeat_ago: float = 0.0) -> rules.NodeReport:
    found = None if status is None else verdict(status, heartbeat_ago=heartbeat_ago)
    return rules.NodeReport(name, ready, found)


@pytest.mark.parametrize(
    ("reports", "expected"),
    [
        pytest.param([], None, id="no nodes: nothing is written"),
        pytest.param([report("a", "False", ready=False)], None, id="only NotReady nodes: nothing is written"),
        pytest.param([report("a", "False"), report("b", "False")], "False", id="every node fails: alarm"),
        pytest.param([report("a", "False"), report("b", "True")], "True", id="mixed verdicts: no alarm"),
        pytest.param([report("a", "True"), report("b", "True")], "True", id="every node resolves: ready"),
        pytest.param([report("a", "False"), report("b", None)], None,
                     id="a node without a verdict: Unknown, skip"),
        pytest.param([report("a", "False"), report("b", "False", heartbeat_ago=61)], None,
                     id="a stale verdict: Unknown, skip"),
        pytest.param([report("a", "False"), report("b", "False", heartbeat_ago=60)], "False",
                     id="a verdict exactly at the stale threshold still counts"),
        pytest.param([report("a", "False"), report("b", "True", ready=False)], "False",
                     id="a NotReady node does not vote"),
    ],
)
def test_aggregation(reports: list[rules.NodeReport], expected: str | None) -> None:
    result = rules.aggregate(reports, NOW, 60.0)
    assert (result.status if result else None) == expected


def test_cluster_conditions_use_karmadas_words() -> None:
    alarm, fine = rules.cluster_condition(True), rules.cluster_condition(False)
    assert (alarm.reason, alarm.message) == ("ServiceDomainNameResolutionFailed",
                                            "service domain name resolution is unready")
    assert (fine.reason, fine.message) == ("ServiceDomainNameResolutionReady",
                                          "service domain name resolution is ready")


@pytest.mark.parametrize(
    ("before", "after", "recorded"),
    [
        pytest.param(None, "True", False, id="a first healthy report is no news"),
        pytest.param(None, "False", True, id="a first failing report is"),
        pytest.param("True", "False", True, id="a change of status is"),
        pytest.param("False", "False", False, id="a new message for the same status is not"),
    ],
)
def test_which_writes_go_on_the_timeline(before: str | None, after: str, recorded: bool) -> None:
    old = None if before is None else Condition(type=rules.CONDITION, status=before)  # type: ignore[arg-type]
    new = Condition(type=rules.CONDITION, status=after)  # type: ignore[arg-type]
    assert rules.worth_recording(old, new) is recorded


def test_the_cluster_status_keeps_every_other_condition() -> None:
    status = ClusterStatus(conditions=[Condition(type="Ready", status="True")], remedy_actions=["X"])
    out = rules.desired_cluster_status(status, rules.cluster_condition(True), NOW)
    assert [c.type for c in out.conditions or ()] == ["Ready", rules.CONDITION]
    assert out.remedy_actions == ["X"]


def test_node_readiness_comes_from_the_ready_condition() -> None:
    assert rules.node_ready({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert not rules.node_ready({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}})
    assert not rules.node_ready({})


@pytest.mark.parametrize(
    ("host", "names"),
    [
        pytest.param("kubernetes.default", ["kubernetes.default.default.svc.cluster.local.",
                                            "kubernetes.default.svc.cluster.local.",
                                            "kubernetes.default.cluster.local.", "kubernetes.default."],
                     id="a short name tries the search list first"),
        pytest.param("a.b.c.d.e.f", ["a.b.c.d.e.f.", "a.b.c.d.e.f.default.svc.cluster.local.",
                                     "a.b.c.d.e.f.svc.cluster.local.", "a.b.c.d.e.f.cluster.local."],
                     id="a name with ndots or more is tried as is first"),
        pytest.param("kubernetes.default.svc.cluster.local.", ["kubernetes.default.svc.cluster.local."],
                     id="a fully qualified name is tried alone"),
    ],
)
def test_search_names(host: str, names: list[str]) -> None:
    assert rules.search_names(host) == names
