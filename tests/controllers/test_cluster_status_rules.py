"""Cluster status rules: probe answers, the threshold state machine, what gets written.

The threshold table ports Karmada's ``TestThresholdAdjustedReadyCondition`` (spec §7.6)
and adds the cases fleetkeeper decides differently or more precisely: the first
observation after a restart, and transient probe errors.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fleetkeeper.api.cluster import ClusterStatus
from fleetkeeper.api.meta import Condition
from fleetkeeper.controllers import cluster_status_rules as rules
from fleetkeeper.members.interface import ClusterSummary

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
THRESHOLDS = rules.Thresholds(success=30.0, failure=30.0)


def ready(status: str, reason: str = "") -> Condition:
    return Condition(type="Ready", status=status, reason=reason)  # type: ignore[arg-type]


def state(status: str, ago: float | None) -> rules.ThresholdState:
    return rules.ThresholdState(status, None if ago is None else NOW - timedelta(seconds=ago))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("code", "online", "healthy"),
    [
        (200, True, True),
        (201, True, False),
        (206, True, False),
        (404, False, False),
        (500, False, False),
        (503, False, False),
        (None, False, False),
    ],
    ids=[
        "200 is healthy",
        "201 is online but unhealthy",
        "206 is online but unhealthy",
        "a 404 from the final endpoint is offline",
        "a 500 is offline (outside 200-206)",
        "a 503 is offline",
        "a transport error or timeout is offline",
    ],
)
def test_a_probe_answer_means_online_and_healthy_or_not(
    code: int | None, online: bool, healthy: bool
) -> None:
    assert rules.health_of(code) == rules.Health(online, healthy)


def test_only_a_missing_readyz_falls_back_to_healthz() -> None:
    assert rules.needs_healthz(404)
    assert not rules.needs_healthz(500)
    assert not rules.needs_healthz(None)
    assert not rules.needs_healthz(200)


@pytest.mark.parametrize(
    ("health", "status", "reason"),
    [
        (rules.Health(False, False), "False", "ClusterNotReachable"),
        (rules.Health(True, False), "False", "ClusterNotReady"),
        (rules.Health(True, True), "True", "ClusterReady"),
    ],
    ids=["offline is not reachable", "online but unhealthy is not ready", "healthy is ready"],
)
def test_health_becomes_karmadas_ready_condition(health: rules.Health, status: str, reason: str) -> None:
    cond = rules.observed_ready(health)
    assert (cond.type, cond.status, cond.reason) == ("Ready", status, reason)
    assert cond.message


CASES = [
    # Karmada's TestThresholdAdjustedReadyCondition
    ("cluster just joined in ready state", None, None, "True", "True"),
    ("cluster just joined in not-ready state", None, None, "False", "False"),
    ("cluster stays ready", state("True", None), "True", "True", "True"),
    (
        "cluster becomes not ready but still not reach failure threshold",
        state("False", 15),
        "True",
        "False",
        "True",
    ),
    ("cluster becomes not ready and reaches failure threshold", state("False", 30), "True", "False", "False"),
    ("cluster stays not ready", state("False", 60), "False", "False", "False"),
    ("cluster recovers but still not reach success threshold", state("True", 15), "False", "True", "False"),
    ("cluster recovers and reaches success threshold", state("True", 30), "False", "True", "True"),
    (
        "ready condition changes from true to false holds the old status",
        state("True", 600),
        "True",
        "False",
        "True",
    ),
    (
        "ready condition changes from false to true holds the old status",
        state("False", 600),
        "False",
        "True",
        "False",
    ),
    ("current condition is nil, should return observed condition", state("False", 30), None, "True", "True"),
    # fleetkeeper additions
    ("false to unknown is never delayed", state("False", 600), "False", "Unknown", "Unknown"),
    ("unknown to false is never delayed", state("Unknown", 600), "Unknown", "False", "False"),
    ("the first probe after a restart confirming ready is not delayed", None, "True", "True", "True"),
    ("the first probe after a restart seeing recovery is not delayed", None, "False", "True", "True"),
    ("the first probe after a restart staying not ready is not delayed", None, "False", "False", "False"),
    (
        "a failed first probe after a restart does not bypass the failure threshold",
        None,
        "True",
        "False",
        "True",
    ),
]


@pytest.mark.parametrize(
    ("prior", "current", "observed", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_threshold_adjusted_ready(
    prior: rules.ThresholdState | None, current: str | None, observed: str, expected: str
) -> None:
    got, _ = rules.threshold_adjusted(
        prior, None if current is None else ready(current), ready(observed), NOW, THRESHOLDS
    )
    assert got.status == expected


def run(sequence: list[tuple[float, str]], *, stored: str, prior: rules.ThresholdState | None) -> list[str]:
    """Feed observations at the given seconds; the stored condition follows what is written."""
    current = ready(stored)
    written = []
    st = prior
    for at, observed in sequence:
        current, st = rules.threshold_adjusted(
            st, current, ready(observed), NOW + timedelta(seconds=at), THRESHOLDS
        )
        written.append(current.status)
    return written


def test_a_transient_error_between_successes_never_flips_ready() -> None:
    seen = run(
        [(0, "True"), (10, "False"), (20, "True"), (30, "True"), (40, "False"), (50, "True")],
        stored="True",
        prior=None,
    )
    assert seen == ["True"] * 6


def test_a_failure_must_persist_for_the_whole_threshold() -> None:
    seen = run(
        [(0, "True"), (10, "False"), (20, "False"), (30, "False"), (40, "False")], stored="True", prior=None
    )
    assert seen == ["True", "True", "True", "True", "False"]


def test_after_a_restart_a_failure_still_waits_the_threshold() -> None:
    seen = run([(0, "False"), (10, "False"), (20, "False"), (30, "False")], stored="True", prior=None)
    assert seen == ["True", "True", "True", "False"]


def test_a_flapping_member_restarts_the_success_window() -> None:
    seen = run(
        [(0, "True"), (10, "True"), (20, "False"), (30, "True"), (40, "True"), (60, "True")],
        stored="False",
        prior=state("False", 100),
    )
    assert seen == ["False", "False", "False", "False", "False", "True"]


def test_api_enablements_drop_subresources_and_sort() -> None:
    raw = [
        {
            "groupVersion": "v1",
            "resources": [
                {"name": "pods/status", "kind": "Pod"},
                {"name": "pods", "kind": "Pod"},
                {"name": "configmaps", "kind": "ConfigMap"},
            ],
        },
        {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
        {"groupVersion": "x/v1", "resources": [{"name": "things/scale", "kind": "Scale"}]},
    ]
    got = rules.api_enablements(raw)
    assert [g.group_version for g in got] == ["apps/v1", "v1"]
    assert [r.name for r in got[1].resources or ()] == ["configmaps", "pods"]


@pytest.mark.parametrize(
    ("raw", "status", "reason"),
    [
        ([], "False", "Empty"),
        ([{"groupVersion": "v1", "resources": [{"name": "pods", "kind": "Pod"}]}], "True", "Complete"),
    ],
    ids=["nothing discovered is Empty", "something discovered is Complete"],
)
def test_complete_api_enablements_condition(raw: list[dict[str, object]], status: str, reason: str) -> None:
    cond = rules.api_enablements_condition(rules.api_enablements(raw))  # type: ignore[arg-type]
    assert (cond.type, cond.status, cond.reason) == ("CompleteAPIEnablements", status, reason)


def test_desired_status_keeps_other_conditions_and_sets_collected_facts() -> None:
    before = ClusterStatus.from_dict(
        {
            "conditions": [
                {
                    "type": "ServiceDomainNameResolutionReady",
                    "status": "True",
                    "reason": "x",
                    "lastTransitionTime": "2025-12-31T00:00:00Z",
                }
            ],
            "remedyActions": ["TrafficControl"],
        }
    )
    summary = ClusterSummary(
        kubernetes_version="v1.31.0",
        api_enablements=[
            {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}
        ],
        node_summary={"totalNum": 3, "readyNum": 2},
        resource_summary={"allocatable": {"cpu": "12", "pods": "330"}},
    )
    got = rules.desired_status(before, rules.observed_ready(rules.Health(True, True)), summary, NOW)
    assert [c.type for c in got.conditions or ()] == [
        "ServiceDomainNameResolutionReady",
        "Ready",
        "CompleteAPIEnablements",
    ]
    assert got.remedy_actions == ["TrafficControl"]
    assert got.kubernetes_version == "v1.31.0"
    assert got.node_summary is not None and got.node_summary.ready_num == 2
    assert got.resource_summary is not None and got.resource_summary.allocatable == {
        "cpu": "12",
        "pods": "330",
    }
    again = rules.desired_status(
        got, rules.observed_ready(rules.Health(True, True)), summary, NOW + timedelta(1)
    )
    assert again == got, "writing the same observation again changes nothing"


def test_without_a_summary_only_ready_changes() -> None:
    before = ClusterStatus.from_dict(
        {
            "kubernetesVersion": "v1.30.0",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "ClusterReady",
                    "lastTransitionTime": "2025-12-31T00:00:00Z",
                }
            ],
        }
    )
    got = rules.desired_status(before, rules.observed_ready(rules.OFFLINE), None, NOW)
    assert got.kubernetes_version == "v1.30.0"
    cond = got.conditions[0] if got.conditions else None
    assert cond is not None and (cond.status, cond.reason, cond.last_transition_time) == (
        "False",
        "ClusterNotReachable",
        NOW,
    )


@pytest.mark.parametrize(
    ("health", "ready_status", "collects"),
    [
        (rules.Health(True, True), "True", True),
        (rules.Health(True, True), "False", False),
        (rules.Health(True, False), "True", False),
        (rules.OFFLINE, "True", False),
    ],
    ids=[
        "healthy and ready collects",
        "healthy but held not ready does not",
        "unhealthy does not",
        "offline held ready does not",
    ],
)
def test_summary_is_collected_only_from_a_healthy_ready_member(
    health: rules.Health, ready_status: str, collects: bool
) -> None:
    assert rules.collects_summary(health, ready(ready_status)) is collects


def test_ready_text_and_change_detection() -> None:
    cond = rules.observed_ready(rules.OFFLINE)
    assert rules.ready_text(cond) == "Ready=False (ClusterNotReachable)"
    assert rules.ready_changed(None, cond)
    assert rules.ready_changed(rules.observed_ready(rules.Health(True, False)), cond)
    assert not rules.ready_changed(cond, cond)
    assert rules.collection_failed("boom").reason == "StatusCollectionFailed"
