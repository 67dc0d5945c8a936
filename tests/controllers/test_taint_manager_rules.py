"""Taint-manager rules: toleration arithmetic, eviction decisions, purge mode, the circuit
breaker and pacing (spec §4.4; vectors of §7.1 ``GetMinTolerationTime``,
``GetMatchingTolerations``, ``needEvictionWithCurrentTime``, ``getPurgeMode``,
``enqueueBinding`` and the rate limiter)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Taint, Toleration
from fleetkeeper.api.policy import FailoverBehavior
from fleetkeeper.api.work import ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.controllers import eviction_rules as evictions
from fleetkeeper.controllers import taint_manager_rules as rules

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def taint(key: str, value: str = "", *, added: datetime | None = None, effect: str = "NoExecute") -> Taint:
    return Taint(key=key, value=value or None, effect=effect, time_added=added)  # type: ignore[arg-type]


def tol(
    key: str | None = None,
    value: str | None = None,
    *,
    seconds: int | None = None,
    op: str | None = None,
    effect: str | None = "NoExecute",
) -> Toleration:
    return Toleration(
        key=key,
        value=value,
        operator=op or ("Equal" if key else "Exists"),
        effect=effect,
        toleration_seconds=seconds,
    )  # type: ignore[arg-type]


# --------------------------------------------------------------------------- §4.4.2 arithmetic


@pytest.mark.parametrize(
    ("taints", "used", "now", "expected"),
    [
        ([], [tol("key", "value")], NOW, rules.FOREVER),
        ([taint("key", "value")], [], NOW, 0.0),
        (
            [
                taint("key1", "value1"),
                taint("key2", "value2", added=EPOCH),
                taint("key3", "value3", added=EPOCH + timedelta(microseconds=5)),
            ],
            [
                tol("key1", "value1"),
                tol("key2", "value2", seconds=10000),
                tol("key3", "value3", seconds=20000),
            ],
            NOW,
            0.0,
        ),
        (
            [
                taint("key1", "value1"),
                taint("key2", "value2", added=EPOCH),
                taint("key3", "value3", added=EPOCH),
            ],
            [
                tol("key3", "value3"),
                tol("key4", "value4", seconds=10000),
                tol("key5", "value5", seconds=20000),
            ],
            NOW,
            rules.FOREVER,
        ),
        ([taint("k", added=NOW - timedelta(seconds=30))], [tol("k", seconds=120)], NOW, 90.0),
        (
            [taint("a", added=NOW), taint("b", added=NOW - timedelta(seconds=100))],
            [tol("a", seconds=300), tol("b", seconds=300)],
            NOW,
            200.0,
        ),
        ([taint("k")], [tol("k", seconds=120)], NOW, rules.FOREVER),
        ([taint("k", added=NOW)], [tol("k", seconds=0)], NOW, 0.0),
        ([taint("k", added=NOW - timedelta(seconds=121))], [tol("k", seconds=120)], NOW, 0.0),
    ],
    ids=[
        "no taints is forever",
        "no used tolerations is now",
        "expired tolerations (since 1970) are now",
        "tolerations without seconds for the only timed taints are forever",
        "the time left until timeAdded plus tolerationSeconds",
        "the earliest of several deadlines",
        "a taint without timeAdded never triggers",
        "tolerationSeconds 0 is now",
        "a deadline in the past is now",
    ],
)
def test_min_toleration_time(
    taints: list[Taint], used: list[Toleration], now: datetime, expected: float
) -> None:
    assert rules.min_toleration_time(taints, used, now) == expected


@pytest.mark.parametrize(
    ("taints", "tolerations", "ok", "used"),
    [
        ([], [tol("key", "value"), tol("key", "value", seconds=10000)], True, []),
        ([taint("key", "value")], [], False, []),
        (
            [taint("key", "value")],
            [tol("key", "value"), tol("key", "value", seconds=10000)],
            True,
            [tol("key", "value")],
        ),
        ([taint("key", "value")], [tol("key1", "value1"), tol("key2", "value2", seconds=10000)], False, []),
        ([taint("a"), taint("b")], [tol(seconds=60)], True, [tol(seconds=60), tol(seconds=60)]),
    ],
    ids=[
        "no taints: all tolerated, none used",
        "no tolerations: not tolerated",
        "the first matching toleration is used",
        "a taint nobody tolerates",
        "one Exists toleration covers every taint",
    ],
)
def test_matching_tolerations(
    taints: list[Taint], tolerations: list[Toleration], ok: bool, used: list[Toleration]
) -> None:
    assert rules.matching_tolerations(taints, tolerations) == (ok, used)


# --------------------------------------------------------------------------- decisions

NOT_READY = taint("cluster.karmada.io/not-ready", added=NOW - timedelta(seconds=30))


@pytest.mark.parametrize(
    ("taints", "tolerations", "action", "delay"),
    [
        ([NOT_READY], None, "never", 0.0),
        ([], [], "never", 0.0),
        ([NOT_READY], [], "now", 0.0),
        ([NOT_READY], [tol("other")], "now", 0.0),
        ([NOT_READY], [tol("cluster.karmada.io/not-ready", op="Exists", seconds=0)], "now", 0.0),
        ([NOT_READY], [tol("cluster.karmada.io/not-ready", op="Exists", seconds=120)], "later", 90.0),
        ([NOT_READY], [tol("cluster.karmada.io/not-ready", op="Exists")], "never", 0.0),
        ([NOT_READY, taint("dedicated")], [tol("cluster.karmada.io/not-ready", op="Exists")], "now", 0.0),
        ([NOT_READY], [tol("cluster.karmada.io/not-ready", op="Exists", seconds=20)], "now", 0.0),
        ([NOT_READY], [tol("cluster.karmada.io/not-ready", op="Exists", effect="NoSchedule")], "now", 0.0),
    ],
    ids=[
        "a binding never scheduled (no applied placement) is not evicted",
        "no NoExecute taint, nothing to do",
        "no tolerations: evict now",
        "a toleration for another key: evict now",
        "tolerationSeconds 0: evict now",
        "tolerationSeconds 120 on a taint added 30s ago: in 90s",
        "tolerated forever: never queued",
        "one taint tolerated forever, another untolerated: evict now",
        "an expired toleration: evict now",
        "a NoSchedule toleration does not cover NoExecute",
    ],
)
def test_decide(taints: list[Taint], tolerations: list[Toleration] | None, action: str, delay: float) -> None:
    got = rules.decide(taints, tolerations, NOW)
    assert (got.action, got.delay) == (action, delay)


def cluster(
    name: str,
    *,
    ready: str | None = "True",
    taints: list[dict[str, Any]] | None = None,
    deleting: bool = False,
) -> Cluster:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {"conditions": [{"type": "Ready", "status": ready}]} if ready else {}
    return Cluster.from_dict(
        {"metadata": meta, "spec": {"syncMode": "Push", "taints": taints}, "status": status}
    )


def test_plan_decides_every_target_cluster() -> None:
    added = (NOW - timedelta(seconds=10)).isoformat()
    clusters = {
        "m1": cluster(
            "m1",
            ready="False",
            taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute", "timeAdded": added}],
        ),
        "m2": cluster("m2"),
        "m3": cluster("m3", taints=[{"key": "maintenance", "effect": "NoExecute", "timeAdded": added}]),
    }
    tolerations = [tol("maintenance", op="Exists", seconds=60)]
    got = rules.plan(["m1", "m2", "m3", "gone"], clusters.get, tolerations, NOW)
    assert got == rules.Plan(evict=["m1"], retry_after=50.0)
    assert rules.plan(["m2"], clusters.get, tolerations, NOW) == rules.Plan([], None)


@pytest.mark.parametrize(
    ("failover", "default", "expected"),
    [
        (None, "Gracefully", "Gracefully"),
        (None, "Directly", "Directly"),
        (None, "Whatever", "Gracefully"),
        ({"cluster": {"purgeMode": "Directly"}}, "Gracefully", "Directly"),
        ({"cluster": {"purgeMode": "Gracefully"}}, "Directly", "Gracefully"),
        ({"cluster": {}}, "Directly", "Gracefully"),
        ({"cluster": {"purgeMode": "Immediately"}}, "Gracefully", "Directly"),
        ({"application": {"decisionConditions": {}}}, "Directly", "Directly"),
    ],
    ids=[
        "no failover: the option (Gracefully)",
        "no failover: the option (Directly)",
        "an unrecognised option value behaves as Gracefully",
        "failover.cluster Directly wins over the option",
        "failover.cluster Gracefully wins over the option",
        "failover.cluster without purgeMode is Gracefully",
        "the seed alias Immediately is Directly",
        "application failover settings do not count",
    ],
)
def test_purge_mode(failover: dict[str, Any] | None, default: str, expected: str) -> None:
    behavior = None if failover is None else FailoverBehavior.from_dict(failover)
    assert rules.purge_mode(behavior, default) == expected


# --------------------------------------------------------------------------- breaker and pacing


@pytest.mark.parametrize(
    ("states", "threshold", "tripped"),
    [
        (["True", "True", "True", "True"], 0.55, False),
        (["False", "True"], 0.55, False),
        (["False", "False", "True", "True"], 0.55, False),
        (["False", "False", "False", "True"], 0.55, True),
        (["Unknown", "Unknown", "False", "True"], 0.55, True),
        ([None, None, "True"], 0.55, True),
        (["False", "False", "False", "True"], 0.0, False),
        (["False", "False", "False", "True"], 0.8, False),
        ([], 0.55, False),
    ],
    ids=[
        "all ready: closed",
        "one of two down (50%): closed",
        "two of four down (50%): closed",
        "three of four down (75% > 55%): open",
        "Unknown counts as not Ready",
        "never probed counts as not Ready",
        "threshold 0 disables the breaker",
        "a higher threshold tolerates more",
        "no clusters: closed",
    ],
)
def test_circuit_breaker(states: list[str | None], threshold: float, tripped: bool) -> None:
    fleet = [cluster(f"m{i}", ready=s) for i, s in enumerate(states)]
    assert rules.breaker(fleet, threshold).open is tripped


def test_deleting_clusters_do_not_count_and_the_message_says_why() -> None:
    fleet = [cluster("a", ready="False"), cluster("b", ready="False", deleting=True), cluster("c")]
    got = rules.breaker(fleet, 0.55)
    assert (got.open, got.not_ready, got.total) == (False, 1, 2)
    tripped = rules.breaker(
        [cluster("a", ready="False"), cluster("b", ready="False"), cluster("c", ready="False"), cluster("d")],
        0.55,
    )
    assert tripped.message().startswith(
        "evictions paused: 3 of 4 clusters are not Ready or failing their probes (75% > 55%)")


def _reaching(name: str, reachable: str | None) -> Cluster:
    conds = [{"type": "Ready", "status": "True"}]
    if reachable is not None:
        conds.append({"type": "fleetkeeper.io/Reachable", "status": reachable})
    return Cluster.from_dict({"metadata": {"name": name}, "spec": {"syncMode": "Push"},
                              "status": {"conditions": conds}})


@pytest.mark.parametrize(
    ("reachable", "failing"),
    [
        pytest.param("False", True, id="a Ready cluster already failing its probes counts as failing"),
        pytest.param("True", False, id="a Ready cluster passing its probes does not"),
        pytest.param(None, False, id="a Ready cluster without the early warning does not"),
    ],
)
def test_the_breaker_sees_clusters_still_inside_their_failure_threshold(
    reachable: str | None, failing: bool
) -> None:
    assert rules.failing(_reaching("m", reachable)) is failing


def test_a_partition_trips_the_breaker_before_the_others_cross_their_threshold() -> None:
    fleet = [cluster("a", ready="False"), _reaching("b", "False"), _reaching("c", "False"),
             _reaching("d", "True")]
    assert rules.breaker(fleet, 0.55).open is True


@pytest.mark.parametrize(
    ("rate", "delay"),
    [
        (0.0, 0.0),
        (0.5, 2.0),
        (50.0, 0.02),
        (1.0, 1.0),
        (2.0, 0.5),
    ],
    ids=["0 is unthrottled", "0.5/s pauses 2s", "50/s pauses 20ms", "1/s pauses 1s", "2/s pauses 500ms"],
)
def test_pacing_delay(rate: float, delay: float) -> None:
    assert rules.pacing_delay(rate) == pytest.approx(delay)


def test_eviction_text_and_no_execute_taints() -> None:
    assert (
        rules.eviction_text("member1", "TaintUntolerated", "Gracefully")
        == "evicted from member1 (TaintUntolerated, Gracefully)"
    )
    c = cluster("m", taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}])
    assert [t.key for t in rules.no_execute_taints(c)] == ["b"]


@pytest.mark.parametrize(
    ("suspension", "held"),
    [
        pytest.param(None, False, id="no suspension: evictions go ahead"),
        pytest.param({"dispatching": True}, True, id="dispatching suspended everywhere: evictions wait"),
        pytest.param({"dispatching": False}, False, id="dispatching explicitly on: evictions go ahead"),
        pytest.param({"dispatchingOnClusters": {"clusterNames": ["member2"]}}, False,
                     id="suspended on some clusters: graceful eviction guards the old copy instead"),
        pytest.param({"scheduling": True}, False, id="scheduling suspension alone does not hold evictions"),
    ],
)
def test_evictions_wait_while_dispatching_is_suspended(suspension: dict[str, Any] | None, held: bool) -> None:
    from fleetkeeper.api.work import BindingSuspension

    value = BindingSuspension.from_dict(suspension) if suspension is not None else None
    assert rules.dispatch_held(value) is held


def evicting(rules_: list[dict[str, str]] | None, reported: dict[str, dict[str, Any]]
             ) -> tuple[ResourceBindingSpec, ResourceBindingStatus]:
    cluster: dict[str, Any] = {"purgeMode": "Directly"}
    if rules_ is not None:
        cluster["statePreservation"] = {"rules": rules_}
    spec = ResourceBindingSpec.model_validate({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
        "clusters": [{"name": "member1", "replicas": 3}, {"name": "member2", "replicas": 3}],
        "failover": {"cluster": cluster}})
    status = ResourceBindingStatus.model_validate(
        {"aggregatedStatus": [{"clusterName": n, "status": s} for n, s in reported.items()]})
    return spec, status


OPTIONS = evictions.TaskOptions(producer="TaintManager", reason="TaintUntolerated", purge_mode="Directly")
REPLICAS = [{"aliasLabelName": "test-alias", "jsonPath": "{.replicas}"}]


def test_evicting_without_state_preservation_rules_evicts_every_cluster() -> None:
    spec, status = evicting(None, {})
    out, evicted, waiting = rules.evict_clusters(spec, status, ["member1", "member2"], OPTIONS)
    assert (evicted, waiting, out.clusters or []) == (["member1", "member2"], {}, [])
    assert [t.preserved_label_state for t in out.graceful_eviction_tasks or ()] == [None, None]


def test_each_eviction_task_preserves_its_own_cluster_state() -> None:
    spec, status = evicting(REPLICAS, {"member1": {"replicas": 3}, "member2": {"replicas": 2}})
    out, evicted, waiting = rules.evict_clusters(spec, status, ["member1", "member2"], OPTIONS)
    assert (evicted, waiting) == (["member1", "member2"], {})
    assert [(t.from_cluster, t.preserved_label_state, t.clusters_before_failover)
            for t in out.graceful_eviction_tasks or ()] == [
        ("member1", {"test-alias": "3"}, None), ("member2", {"test-alias": "2"}, None)]


def test_a_cluster_without_a_reported_status_waits_and_the_others_go() -> None:
    spec, status = evicting(REPLICAS, {"member2": {"replicas": 2}})
    out, evicted, waiting = rules.evict_clusters(spec, status, ["member1", "member2"], OPTIONS)
    assert evicted == ["member2"] and list(waiting) == ["member1"] and "no status" in waiting["member1"]
    assert [t.name for t in out.clusters or ()] == ["member1"]
