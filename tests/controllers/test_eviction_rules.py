"""Eviction-task rules: the binding helpers (spec §4.6.1, §7.7) and the assessment of
tasks (§4.6.2, §7.2) under the invariants of docs/architecture.md — every invariant has its rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Toleration
from fleetkeeper.api.work import GracefulEvictionTask, ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.controllers import eviction_rules as rules

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
TM = rules.TaskOptions(producer="TaintManager", reason="TaintUntolerated", purge_mode="Gracefully")


def spec(
    clusters: list[tuple[str, int]] | None = None, tasks: list[dict[str, Any]] | None = None, **extra: Any
) -> ResourceBindingSpec:
    return ResourceBindingSpec.from_dict(
        {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "nginx",
            },
            "clusters": [{"name": n, "replicas": r} for n, r in clusters] if clusters is not None else None,
            "gracefulEvictionTasks": tasks,
            **extra,
        }
    )


def task(
    cluster: str, *, ago: float | None = 0.0, reason: str = "TaintUntolerated", **fields: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"fromCluster": cluster, "reason": reason, "producer": "TaintManager", **fields}
    if ago is not None:
        out["creationTimestamp"] = (NOW - timedelta(seconds=ago)).isoformat()
    return out


# --------------------------------------------------------------------------- GracefulEvictCluster


def names(s: ResourceBindingSpec) -> list[str]:
    return [t.name for t in s.clusters or ()]


def evicted(s: ResourceBindingSpec) -> list[str]:
    return [t.from_cluster for t in s.graceful_eviction_tasks or ()]


@pytest.mark.parametrize(
    ("before", "tasks", "cluster", "after", "after_tasks"),
    [
        ([("m1", 1), ("m2", 2), ("m3", 3)], None, "m1", ["m2", "m3"], ["m1"]),
        ([("m1", 1), ("m2", 2), ("m3", 3)], None, "m2", ["m1", "m3"], ["m2"]),
        ([("m1", 1), ("m2", 2), ("m3", 3)], None, "m3", ["m1", "m2"], ["m3"]),
        ([("m1", 1), ("m2", 2)], [task("m3")], "m1", ["m2"], ["m3", "m1"]),
        ([("m1", 1), ("m2", 2)], [task("m1", reason="ApplicationFailure")], "m1", ["m2"], ["m1"]),
        ([("m1", 1), ("m2", 2)], None, "m9", ["m1", "m2"], []),
        ([], None, "m1", [], []),
    ],
    ids=[
        "evict the head target",
        "evict a middle target",
        "evict the tail target",
        "append to existing tasks",
        "an existing task for the cluster is left untouched",
        "a cluster that is not a target: no task",
        "no targets: no task",
    ],
)
def test_graceful_evict_cluster(
    before: list[tuple[str, int]],
    tasks: list[dict[str, Any]] | None,
    cluster: str,
    after: list[str],
    after_tasks: list[str],
) -> None:
    got = rules.graceful_evict_cluster(spec(before, tasks), cluster, TM)
    assert names(got) == after
    assert evicted(got) == after_tasks


def test_a_new_task_carries_the_options_and_the_replicas_it_had() -> None:
    now = NOW
    options = rules.TaskOptions(
        producer="TaintManager", reason="TaintUntolerated", purge_mode="Directly", creation_timestamp=now
    )
    got = rules.graceful_evict_cluster(spec([("m1", 2), ("m2", 0)]), "m1", options)
    new = (got.graceful_eviction_tasks or [])[0]
    assert (
        new.from_cluster,
        new.purge_mode,
        new.replicas,
        new.reason,
        new.producer,
        new.creation_timestamp,
    ) == ("m1", "Directly", 2, "TaintUntolerated", "TaintManager", now)
    assert (
        new.grace_period_seconds is None
        and new.suppress_deletion is None
        and new.clusters_before_failover is None
    )
    zero = rules.graceful_evict_cluster(spec([("m1", 2), ("m2", 0)]), "m2", TM)
    assert (zero.graceful_eviction_tasks or [])[0].replicas is None, "replicas only when > 0"


def test_evicting_the_last_target_leaves_no_clusters() -> None:
    got = rules.graceful_evict_cluster(spec([("m1", 3)]), "m1", TM)
    assert got.clusters is None and evicted(got) == ["m1"]


@pytest.mark.parametrize(
    ("s", "existing", "directly"),
    [
        (spec([("m1", 1)]), {"m1"}, set()),
        (spec([("m1", 1)], [task("m2", purgeMode="Gracefully")]), {"m1", "m2"}, set()),
        (spec([("m1", 1)], [task("m2", purgeMode="Directly"), task("m3")]), {"m1", "m3"}, {"m2"}),
        (spec([("m1", 1)], requiredBy=[{"name": "x", "clusters": [{"name": "m4"}]}]), {"m1", "m4"}, set()),
    ],
    ids=[
        "targets",
        "plus graceful tasks",
        "not Directly tasks (an empty purge mode is graceful)",
        "plus requiredBy targets",
    ],
)
def test_existing_and_directly_clusters(
    s: ResourceBindingSpec, existing: set[str], directly: set[str]
) -> None:
    assert rules.existing_clusters(s) == existing
    assert rules.directly_clusters(s) == directly


def test_helpers() -> None:
    s = spec([("m1", 2)], [task("m2")])
    assert rules.target_contains(s, "m1") and not rules.target_contains(s, "m2")
    assert rules.cluster_in_tasks(s, "m2") and not rules.cluster_in_tasks(s, "m1")
    assert (rules.assigned_replicas(s, "m1"), rules.assigned_replicas(s, "m9")) == (2, 0)


def test_applied_tolerations() -> None:
    assert rules.applied_tolerations({}) is None
    placement = (
        '{"clusterTolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}]}'
    )
    got = rules.applied_tolerations({"policy.karmada.io/applied-placement": placement})
    assert got == (Toleration(key="k", operator="Exists", effect="NoExecute", toleration_seconds=5),)
    assert rules.applied_tolerations({"policy.karmada.io/applied-placement": "{}"}) == ()
    with pytest.raises(ValueError, match="cannot be decoded"):
        rules.applied_tolerations({"policy.karmada.io/applied-placement": "{nope"})


def member(ready: str | None = "True", taints: list[dict[str, Any]] | None = None) -> Cluster:
    status = {"conditions": [{"type": "Ready", "status": ready}]} if ready else {}
    return Cluster.from_dict(
        {"metadata": {"name": "m1"}, "spec": {"syncMode": "Push", "taints": taints}, "status": status}
    )


@pytest.mark.parametrize(
    ("cluster", "tolerations", "back"),
    [
        (member(), (), True),
        (None, (), False),
        (member("False"), (), False),
        (member("Unknown"), (), False),
        (member(taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]), (), False),
        (
            member(taints=[{"key": "maintenance", "effect": "NoExecute"}]),
            (Toleration(key="maintenance", operator="Exists"),),
            True,
        ),
        (member(taints=[{"key": "x", "effect": "NoSchedule"}]), (), True),
    ],
    ids=[
        "ready and untainted",
        "gone",
        "not ready",
        "unknown",
        "still tainted NoExecute",
        "a NoExecute taint the binding tolerates",
        "a NoSchedule taint does not matter",
    ],
)
def test_source_recovered(cluster: Cluster | None, tolerations: tuple[Toleration, ...], back: bool) -> None:
    assert rules.source_recovered(cluster, tolerations) is back


# --------------------------------------------------------------------------- assessment


def view(
    targets: list[str],
    *,
    scheduled: bool = True,
    health: dict[str, str] | None = None,
    applied: list[str] | None = None,
    condition: str | None = "True",
    reason: str = "Success",
    last: float | None = 0.0,
    assigned: dict[str, int] | None = None,
    reported: dict[str, int | None] | None = None,
) -> rules.EvictionView:
    return rules.EvictionView(
        targets=tuple(targets),
        has_scheduled=scheduled,
        health=health or {},
        applied=frozenset(applied if applied is not None else (health or {})),
        scheduled_status=condition,
        scheduled_reason=reason if condition else None,
        last_scheduled_time=None if last is None else NOW - timedelta(seconds=last),
        assigned=assigned or {},
        reported=reported or {},
    )


def gtask(cluster: str = "m1", **fields: Any) -> GracefulEvictionTask:
    return GracefulEvictionTask.from_dict(task(cluster, **fields))


H = "Healthy"
ASSESS = [
    # Karmada's Test_assessSingleTask
    (
        "timed out with a dispatched replacement: drop",
        gtask(ago=700),
        view(["m2"], health={"m2": "Unhealthy"}),
        False,
        "drop",
    ),
    (
        "not yet scheduled: keep",
        gtask(ago=10),
        view(["m2"], scheduled=False, health={"m2": H}),
        False,
        "keep",
    ),
    (
        "scheduled and every target healthy: drop",
        gtask(ago=10),
        view(["m2", "m3"], health={"m2": H, "m3": H}),
        False,
        "drop",
    ),
    (
        "a target unhealthy: keep",
        gtask(ago=10),
        view(["m2", "m3"], health={"m2": H, "m3": "Unhealthy"}),
        False,
        "keep",
    ),
    ("a target unknown: keep", gtask(ago=10), view(["m2"], health={"m2": "Unknown"}), False, "keep"),
    ("a target without status: keep", gtask(ago=10), view(["m2", "m3"], health={"m2": H}), False, "keep"),
    (
        "suppressDeletion true: keep even after the timeout",
        gtask(ago=7000, suppressDeletion=True),
        view(["m2"], health={"m2": H}),
        False,
        "keep",
    ),
    ("suppressDeletion false: drop at once", gtask(ago=1, suppressDeletion=False), view([]), False, "drop"),
    # stamping
    (
        "a task without creationTimestamp is stamped first",
        gtask(ago=None),
        view(["m2"], health={"m2": H}),
        False,
        "stamp",
    ),
    # Failover safety (docs/architecture.md): never homeless
    ("an empty schedule is never all healthy", gtask(ago=10), view([]), False, "keep"),
    (
        "the timeout does not drop a task with no replacement scheduled",
        gtask(ago=700),
        view([]),
        False,
        "block",
    ),
    (
        "the timeout does not drop a task whose replacement is not dispatched",
        gtask(ago=700),
        view(["m2"], applied=[]),
        False,
        "block",
    ),
    (
        "the timeout does not drop a task whose scheduling failed",
        gtask(ago=700),
        view([], condition="False", reason="NoClusterFit"),
        False,
        "block",
    ),
    (
        "the timeout does not drop a task whose rescheduling failed, whatever an old target applied before",
        gtask(ago=700),
        view(["m2"], applied=["m2"], condition="False", reason="NoClusterFit"),
        False,
        "block",
    ),
    (
        "a target still running its old share is not a dispatched replacement",
        gtask(ago=700),
        view(["m2"], applied=["m2"], assigned={"m2": 4}, reported={"m2": 2}),
        False,
        "block",
    ),
    (
        "a target holding its new share is a dispatched replacement, healthy or not",
        gtask(ago=700),
        view(["m2"], health={"m2": "Unhealthy"}, assigned={"m2": 4}, reported={"m2": 4}),
        False,
        "drop",
    ),
    (
        "an applied target without a schedule made since the eviction is no replacement",
        gtask(ago=700),
        view(["m2"], applied=["m2"], last=800),
        False,
        "block",
    ),
    (
        "a replacement on the source cluster itself does not count",
        gtask(ago=700),
        view(["m1"], applied=["m1"]),
        False,
        "block",
    ),
    (
        "Directly: the timeout drops even without a replacement",
        gtask(ago=700, purgeMode="Directly"),
        view([]),
        False,
        "drop",
    ),
    (
        "Directly: an empty observed schedule counts as done",
        gtask(ago=10, purgeMode="Directly"),
        view([]),
        False,
        "drop",
    ),
    (
        "Never without suppressDeletion waits for a person",
        gtask(ago=7000, purgeMode="Never"),
        view(["m2"], health={"m2": H}),
        False,
        "keep",
    ),
    # Failover safety (docs/architecture.md): clear when the source recovers before the move
    (
        "the source recovered and nothing moved yet: clear",
        gtask(ago=10),
        view(["m2"], health={"m2": H}, scheduled=False, last=100),
        True,
        "clear",
    ),
    (
        "the source recovered and scheduling failed: clear",
        gtask(ago=700),
        view([], condition="False", reason="NoClusterFit", last=None),
        True,
        "clear",
    ),
    (
        "the source recovered but the workload moved: drop when healthy",
        gtask(ago=10),
        view(["m2"], health={"m2": H}, last=5),
        True,
        "drop",
    ),
    (
        "the source recovered, moved, not yet healthy: keep",
        gtask(ago=10),
        view(["m2"], health={"m2": "Unhealthy"}, last=5),
        True,
        "keep",
    ),
    (
        "an application failure is not cleared by the cluster being Ready",
        gtask(ago=10, reason="ApplicationFailure"),
        view(["m2"], health={"m2": "Unhealthy"}, last=100),
        True,
        "keep",
    ),
    (
        "the source still down and nothing moved: keep",
        gtask(ago=10),
        view([], condition="False", last=None),
        False,
        "keep",
    ),
]


@pytest.mark.parametrize(
    ("t", "v", "recovered", "verdict"), [c[1:] for c in ASSESS], ids=[c[0] for c in ASSESS]
)
def test_assess_task(t: GracefulEvictionTask, v: rules.EvictionView, recovered: bool, verdict: str) -> None:
    got = rules.assess_task(t, v, recovered=recovered, now=NOW, default_timeout=600)
    assert got.verdict == verdict, got.why


@pytest.mark.parametrize(
    ("reported", "verdict"),
    [
        (2, "keep"),
        (3, "drop"),
        (None, "drop"),
    ],
    ids=[
        "a healthy verdict at the old replica count is stale",
        "healthy at the scheduled replicas",
        "a kind that reports no replicas is judged by health alone",
    ],
)
def test_health_must_be_reported_for_the_new_schedule(reported: int | None, verdict: str) -> None:
    s = spec([("m2", 3)], [task("m1", ago=10)])
    status = {
        "schedulerObservedGeneration": 1,
        "aggregatedStatus": [
            {
                "clusterName": "m2",
                "applied": True,
                "health": "Healthy",
                "status": {} if reported is None else {"replicas": reported, "readyReplicas": reported},
            }
        ],
    }
    v = rules.view_of(s, ResourceBindingStatus.from_dict(status), 1)
    got = rules.assess_tasks(s, v, recovered=(), now=NOW, default_timeout=600)
    assert [x.verdict for x in got.verdicts] == [verdict]


def test_per_task_grace_periods_never_leak() -> None:
    s = spec([("m3", 3)], [task("m1", ago=120, gracePeriodSeconds=60), task("m2", ago=120)])
    v = view(["m3"], health={"m3": "Unhealthy"})
    got = rules.assess_tasks(s, v, recovered=(), now=NOW, default_timeout=600)
    assert [(x.task.from_cluster, x.verdict) for x in got.verdicts] == [("m1", "drop"), ("m2", "keep")]
    assert [t.from_cluster for t in got.kept] == ["m2"]
    assert rules.next_retry(got.kept, NOW, 600) == 480.0


def test_assess_tasks_stamps_and_keeps_the_rest_in_order() -> None:
    s = spec(
        [("m4", 3)], [task("m1", ago=None), task("m2", ago=10), task("m3", ago=10, suppressDeletion=False)]
    )
    got = rules.assess_tasks(
        s, view(["m4"], health={"m4": "Unhealthy"}), recovered=(), now=NOW, default_timeout=600
    )
    assert [(x.task.from_cluster, x.verdict) for x in got.verdicts] == [
        ("m1", "stamp"),
        ("m2", "keep"),
        ("m3", "drop"),
    ]
    assert [t.from_cluster for t in got.kept] == ["m1", "m2"]
    assert got.kept[0].creation_timestamp == NOW
    assert got.changed


def test_nothing_changes_when_every_task_is_kept() -> None:
    s = spec([("m4", 3)], [task("m1", ago=10)])
    got = rules.assess_tasks(
        s, view(["m4"], health={"m4": "Unknown"}), recovered=(), now=NOW, default_timeout=600
    )
    assert not got.changed
    blocked = rules.assess_tasks(
        spec([], [task("m1", ago=700)]), view([]), recovered=(), now=NOW, default_timeout=600
    )
    assert not blocked.changed and [v.verdict for v in blocked.verdicts] == ["block"]
    assert blocked.verdicts[0].message() == "eviction from m1 kept: no replacement scheduled"


def test_clearing_restores_the_cluster_with_the_replicas_it_had() -> None:
    s = spec([("m2", 2)], [task("m1", ago=10, replicas=1)])
    got = rules.assess_tasks(
        s,
        view(["m2"], health={"m2": "Healthy"}, scheduled=False, last=100),
        recovered=["m1"],
        now=NOW,
        default_timeout=600,
    )
    assert [v.verdict for v in got.verdicts] == ["clear"]
    out = rules.apply_assessment(s, got)
    assert [(t.name, t.replicas) for t in out.clusters or ()] == [("m2", 2), ("m1", 1)]
    assert out.graceful_eviction_tasks is None
    assert got.verdicts[0].message() == "eviction from m1 cleared: m1 recovered before the workload moved"


def test_drop_messages_say_why() -> None:
    healthy = rules.assess_task(
        gtask(ago=10),
        view(["m2", "m3"], health={"m2": H, "m3": H}),
        recovered=False,
        now=NOW,
        default_timeout=600,
    )
    assert healthy.message() == "eviction from m1 completed: m2, m3 healthy"
    timed = rules.assess_task(
        gtask(ago=700), view(["m2"], applied=["m2"]), recovered=False, now=NOW, default_timeout=600
    )
    assert (
        timed.message() == "eviction from m1 completed: grace period of 600s elapsed; replacement "
        "dispatched to m2"
    )


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ([], None),
        ([task("m1", ago=100)], 500.0),
        ([task("m1", ago=100), task("m2", ago=550)], 50.0),
        ([task("m1", ago=100, gracePeriodSeconds=120), task("m2", ago=10)], 20.0),
        ([task("m1", ago=100, suppressDeletion=True)], None),
        ([task("m1", ago=700)], None),
    ],
    ids=[
        "no tasks",
        "time left of one task",
        "the earliest of several",
        "a task's own grace period",
        "suppressed tasks never time out",
        "a deadline already passed needs no timer",
    ],
)
def test_next_retry(tasks: list[dict[str, Any]], expected: float | None) -> None:
    kept = [GracefulEvictionTask.from_dict(t) for t in tasks]
    assert rules.next_retry(kept, NOW, 600) == expected
