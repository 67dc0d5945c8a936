"""Cluster controller rules: system taints follow Ready, heartbeats, messages (spec §4.2, §7.1, §7.6)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Taint
from fleetkeeper.api.meta import Condition
from fleetkeeper.controllers import cluster_rules as rules

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CREATED = NOW - timedelta(minutes=10)
NR = {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}
UR = {"key": "cluster.karmada.io/unreachable", "effect": "NoSchedule"}
NR_EXEC = {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute", "timeAdded": "2026-01-01T11:00:00Z"}
USER = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
GRACES = rules.Graces(monitor=40.0, startup=60.0)


def taints(*items: dict[str, Any]) -> list[Taint]:
    return [Taint.from_dict(t) for t in items]


def ready(status: str, reason: str = "ClusterReady", at: datetime = CREATED) -> Condition:
    return Condition(type="Ready", status=status, reason=reason, last_transition_time=at)  # type: ignore[arg-type]


def keys(items: list[Taint] | None) -> list[str]:
    return [f"{t.key}:{t.effect}" for t in items or ()]


@pytest.mark.parametrize(
    ("current", "status", "expected"),
    [
        ([], None, ["cluster.karmada.io/not-ready:NoSchedule"]),
        ([], "False", ["cluster.karmada.io/not-ready:NoSchedule"]),
        ([UR], "False", ["cluster.karmada.io/not-ready:NoSchedule"]),
        ([], "Unknown", ["cluster.karmada.io/unreachable:NoSchedule"]),
        ([NR], "Unknown", ["cluster.karmada.io/unreachable:NoSchedule"]),
        ([NR, UR], "True", []),
        ([USER, NR, NR_EXEC], "True", ["dedicated:NoSchedule", "cluster.karmada.io/not-ready:NoExecute"]),
    ],
    ids=[
        "a new cluster without Ready gets not-ready",
        "ready false adds not-ready",
        "ready false swaps unreachable for not-ready",
        "ready unknown adds unreachable",
        "ready unknown swaps not-ready for unreachable",
        "ready true removes both",
        "ready true leaves user taints and the NoExecute taint of the same key alone",
    ],
)
def test_system_taints_follow_ready(
    current: list[dict[str, Any]], status: str | None, expected: list[str]
) -> None:
    got = rules.sync_ready_taints(taints(*current), None if status is None else ready(status), NOW)
    assert got is not None
    assert keys(got) == expected


@pytest.mark.parametrize(
    ("current", "status"),
    [
        ([NR], "False"),
        ([UR], "Unknown"),
        ([USER], "True"),
        ([], "True"),
    ],
    ids=["not-ready already there", "unreachable already there", "nothing to remove", "no taints at all"],
)
def test_nothing_to_change_means_no_write(current: list[dict[str, Any]], status: str) -> None:
    assert rules.sync_ready_taints(taints(*current), ready(status), NOW) is None


def test_added_taints_go_last_stamped_now_and_kept_taints_keep_their_time() -> None:
    got = rules.sync_ready_taints(taints(NR_EXEC, USER), ready("False"), NOW)
    assert got is not None
    assert keys(got) == [
        "cluster.karmada.io/not-ready:NoExecute",
        "dedicated:NoSchedule",
        "cluster.karmada.io/not-ready:NoSchedule",
    ]
    assert got[0].time_added == datetime(2026, 1, 1, 11, 0, tzinfo=UTC)
    assert got[2].time_added == NOW


@pytest.mark.parametrize(
    ("current", "message"),
    [
        ([], "cluster now does not have taints"),
        ([NR], "cluster now has taints([{Key:cluster.karmada.io/not-ready,Effect:NoSchedule}])"),
        (
            [NR, USER],
            "cluster now has taints([{Key:cluster.karmada.io/not-ready,Effect:NoSchedule},"
            "{Key:dedicated,Value:gpu,Effect:NoSchedule}])",
        ),
    ],
    ids=["no taints", "one taint", "a taint with a value"],
)
def test_taints_message_is_karmadas(current: list[dict[str, Any]], message: str) -> None:
    assert rules.taints_message(taints(*current)) == message


def test_system_taints_are_identified_by_key_and_effect() -> None:
    assert rules.is_system_taint(taints(NR)[0])
    assert rules.is_system_taint(taints(UR)[0])
    assert not rules.is_system_taint(taints(NR_EXEC)[0])
    assert rules.taint_text(taints(USER)[0]) == "dedicated=gpu:NoSchedule"
    added, removed = rules.taint_diff(taints(NR, USER), taints(USER, NR_EXEC))
    assert (keys(added), keys(removed)) == (
        ["cluster.karmada.io/not-ready:NoExecute"],
        ["cluster.karmada.io/not-ready:NoSchedule"],
    )


def test_execution_space_is_labelled_system() -> None:
    ns = rules.execution_space("member1")
    assert ns.name == "karmada-es-member1"
    assert ns.labels() == {"karmada.io/system": "true"}


# --------------------------------------------------------------------------- heartbeats


def cluster(mode: str = "Pull", cond: Condition | None = None) -> Cluster:
    data: dict[str, Any] = {
        "metadata": {"name": "member3", "creationTimestamp": "2026-01-01T11:50:00Z"},
        "spec": {"syncMode": mode},
    }
    if cond is not None:
        data["status"] = {"conditions": [cond.to_dict()]}
    return Cluster.from_dict(data)


def test_a_push_cluster_is_only_recorded() -> None:
    old = rules.HealthRecord(NOW - timedelta(hours=1), ready("True"))
    got = rules.monitor(old, cluster("Push", ready("True")), None, NOW, GRACES)
    assert got.ready is None and got.record == old


def test_a_pull_cluster_silent_past_the_grace_becomes_unknown() -> None:
    record = rules.HealthRecord(NOW - timedelta(seconds=41), ready("True"), NOW - timedelta(seconds=41))
    got = rules.monitor(record, cluster(cond=ready("True")), NOW - timedelta(seconds=41), NOW, GRACES)
    assert got.ready is not None
    assert (got.ready.status, got.ready.reason, got.ready.last_transition_time) == (
        "Unknown",
        "ClusterStatusUnknown",
        NOW,
    )
    assert got.written is not None and got.written.ready == got.ready
    assert got.record == record, "until the write succeeds the old record stays"


def test_a_pull_cluster_within_the_grace_is_left_alone() -> None:
    record = rules.HealthRecord(NOW - timedelta(seconds=39), ready("True"), NOW - timedelta(seconds=39))
    assert (
        rules.monitor(record, cluster(cond=ready("True")), NOW - timedelta(seconds=39), NOW, GRACES).ready
        is None
    )


def test_a_pull_cluster_turns_unknown_exactly_when_the_grace_runs_out() -> None:
    record = rules.HealthRecord(NOW - timedelta(seconds=40), ready("True"), NOW - timedelta(seconds=40))
    got = rules.monitor(record, cluster(cond=ready("True")), NOW - timedelta(seconds=40), NOW, GRACES)
    assert got.ready is not None and got.ready.status == "Unknown"


@pytest.mark.parametrize(
    ("renewed_ago", "credited_ago"),
    [
        pytest.param(3, 3, id="a renewal seen late counts from its renewTime"),
        pytest.param(30, 5, id="a renewTime further back than one monitor period is clamped to it"),
        pytest.param(-10, 0, id="a renewTime in the future counts as now"),
    ],
)
def test_lease_renewals_are_credited_at_their_renew_time(renewed_ago: int, credited_ago: int) -> None:
    graces = rules.Graces(GRACES.monitor, GRACES.startup, skew_window=5)
    old = rules.HealthRecord(NOW - timedelta(seconds=60), ready("True"), NOW - timedelta(seconds=60))
    renewed = NOW - timedelta(seconds=renewed_ago)
    got = rules.monitor(old, cluster(cond=ready("True")), renewed, NOW, graces)
    assert got.record.probe_timestamp == NOW - timedelta(seconds=credited_ago)
    assert got.record.lease_renew_time == renewed


def test_the_deadline_is_the_credited_heartbeat_plus_the_grace() -> None:
    record = rules.HealthRecord(NOW - timedelta(seconds=10), ready("True"), NOW - timedelta(seconds=10))
    assert rules.deadline(record, cluster(cond=ready("True")), GRACES) == NOW + timedelta(seconds=30)
    assert rules.deadline(record, cluster("Push", ready("True")), GRACES) is None
    assert rules.deadline(record, cluster(cond=ready("Unknown")), GRACES) is None


def test_a_renewed_lease_is_a_heartbeat() -> None:
    record = rules.HealthRecord(NOW - timedelta(seconds=100), ready("True"), NOW - timedelta(seconds=100))
    got = rules.monitor(record, cluster(cond=ready("True")), NOW - timedelta(seconds=5), NOW, GRACES)
    assert got.ready is None
    assert got.record.probe_timestamp == NOW and got.record.lease_renew_time == NOW - timedelta(seconds=5)


def test_a_changed_ready_condition_is_a_heartbeat() -> None:
    record = rules.HealthRecord(NOW - timedelta(seconds=100), ready("True"), None)
    got = rules.monitor(record, cluster(cond=ready("False", "ClusterNotReachable", NOW)), None, NOW, GRACES)
    assert got.ready is None and got.record.probe_timestamp == NOW


def test_a_cluster_that_never_posted_status_gets_the_startup_grace() -> None:
    young = rules.monitor(None, cluster(), None, datetime(2026, 1, 1, 11, 50, 59, tzinfo=UTC), GRACES)
    assert young.ready is None
    old = rules.monitor(young.record, cluster(), None, datetime(2026, 1, 1, 11, 51, 1, tzinfo=UTC), GRACES)
    assert old.ready is not None
    assert (old.ready.status, old.ready.reason) == ("Unknown", "ClusterStatusNeverUpdated")


def test_an_unknown_cluster_is_not_written_again() -> None:
    unknown = ready("Unknown", "ClusterStatusUnknown")
    record = rules.HealthRecord(NOW - timedelta(seconds=100), unknown, NOW - timedelta(seconds=100))
    got = rules.monitor(record, cluster(cond=unknown), NOW - timedelta(seconds=100), NOW, GRACES)
    assert got.ready is None


def test_the_first_look_starts_the_clock_now() -> None:
    got = rules.monitor(None, cluster(cond=ready("True")), None, NOW, GRACES)
    assert got.ready is None and got.record.probe_timestamp == NOW
