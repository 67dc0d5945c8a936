"""The whole algorithm over real cluster objects: the seed stories, fit errors,
the clusterAffinities fallback and capacity from resource summaries."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.framework import FitError

from .builders import DUPLICATED, DYNAMIC, NOW, binding, cluster, pods, snapshot, static_weights

NOT_READY = [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]
SEED_WEIGHTS = {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                "replicaScheduling": static_weights(("member1", 1), ("member2", 2))}


def schedule(policy: dict[str, Any], members_: list[Cluster], **spec: Any) -> dict[str, int]:
    rb = binding(policy, **spec)
    return dict(Scheduler().schedule(rb.spec, rb.status, snapshot(*members_), NOW))


def members(n: int, **kwargs: Any) -> list[Cluster]:
    return [cluster(f"member{i}", **kwargs) for i in range(1, n + 1)]


@pytest.mark.parametrize(("replicas", "expected"), [
    pytest.param(3, {"member1": 1, "member2": 2}, id="three replicas at weights 1 and 2"),
    pytest.param(9, {"member1": 3, "member2": 6}, id="nine replicas at weights 1 and 2"),
])
def test_seed_static_weights(replicas: int, expected: dict[str, int]) -> None:
    assert schedule(SEED_WEIGHTS, members(2), replicas=replicas) == expected


def test_seed_static_weights_after_member1_is_evicted() -> None:
    clusters = [cluster("member1", taints=NOT_READY), cluster("member2")]
    result = schedule(SEED_WEIGHTS, clusters, replicas=3, clusters=[{"name": "member2", "replicas": 2}],
                      gracefulEvictionTasks=[{"fromCluster": "member1", "reason": "TaintUntolerated",
                                              "producer": "TaintManager", "replicas": 1}])
    assert result == {"member2": 3}


DUPLICATED_SEED = {"clusterAffinity": {"clusterNames": ["member1", "member2", "member3", "member5"]},
                   "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 2}],
                   "replicaScheduling": DUPLICATED}


def test_seed_duplicated_initial_schedule_spreads_to_two_clusters() -> None:
    result = schedule(DUPLICATED_SEED, members(5), replicas=2)
    assert len(result) == 2 and set(result.values()) == {2} and "member4" not in result


@pytest.mark.parametrize(("capacity", "partner"), [
    pytest.param({}, "member3", id="equal clusters: member1 stays and the name order picks member3"),
    pytest.param({"member5": 10, "member3": 5}, "member5",
                 id="more room on member5: member1 stays, member5 joins"),
])
def test_seed_duplicated_failover_when_member2_fails(capacity: dict[str, int], partner: str) -> None:
    clusters = [cluster(f"member{i}", taints=NOT_READY if i == 2 else None,
                        summary=pods(capacity[f"member{i}"]) if f"member{i}" in capacity else None)
                for i in range(1, 6)]
    result = schedule(DUPLICATED_SEED, clusters, replicas=2, clusters=[{"name": "member1", "replicas": 2}],
                      gracefulEvictionTasks=[{"fromCluster": "member2", "reason": "TaintUntolerated",
                                              "producer": "TaintManager"}])
    assert result == {"member1": 2, partner: 2}


def test_no_cluster_fits_names_every_reason() -> None:
    clusters = [cluster("member1", taints=NOT_READY), cluster("member2", apis=[]), cluster("member3"),
                cluster("member4", deleting=True)]
    rb = binding({"clusterAffinity": {"clusterNames": ["member1", "member2", "member4"]}}, replicas=1)
    with pytest.raises(FitError) as caught:
        Scheduler().schedule(rb.spec, rb.status, snapshot(*clusters), NOW)
    assert str(caught.value) == (
        "0/4 clusters are available: 1 cluster(s) did not have the API resource, "
        "1 cluster(s) did not match the placement cluster affinity constraint, "
        "1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}.")
    assert caught.value.cluster_reasons() == [
        'cluster "member1" is not fit, reason: cluster(s) had untolerated taint '
        "{cluster.karmada.io/not-ready:NoExecute}",
        'cluster "member2" is not fit, reason: cluster(s) did not have the API resource',
        'cluster "member3" is not fit, reason: '
        "cluster(s) did not match the placement cluster affinity constraint",
    ]


def test_no_cluster_at_all() -> None:
    rb = binding({}, replicas=1)
    with pytest.raises(FitError, match=r"^0/0 clusters are available: no cluster exists\.$"):
        Scheduler().schedule(rb.spec, rb.status, snapshot(), NOW)


def test_dynamic_weights_follow_the_capacity_in_resource_summaries() -> None:
    clusters = [cluster("member1", summary=pods(6)), cluster("member2", summary=pods(8)),
                cluster("member3", summary=pods(10))]
    assert schedule({"replicaScheduling": DYNAMIC}, clusters, replicas=12) == {
        "member1": 3, "member2": 4, "member3": 5}


def test_dynamic_weights_beyond_capacity_are_unschedulable() -> None:
    rb = binding({"replicaScheduling": DYNAMIC}, replicas=30)
    clusters = snapshot(cluster("member1", summary=pods(6)), cluster("member2", summary=pods(8)),
                        cluster("member3", summary=pods(10)))
    with pytest.raises(UnschedulableError) as caught:
        Scheduler().schedule(rb.spec, rb.status, clusters, NOW)
    assert str(caught.value) == ("failed to assign replicas: failed to scale up: "
                                 "Clusters available replicas 24 are not enough to schedule.")


def test_requests_bound_capacity_by_the_scarcest_resource() -> None:
    big = {"allocatable": {"pods": "100", "cpu": "4", "memory": "8Gi"},
           "allocated": {"pods": "20", "cpu": "1", "memory": "2Gi"}}
    clusters = [cluster("member1", summary=big), cluster("member2", summary=pods(100))]
    rb = binding({"replicaScheduling": DYNAMIC}, replicas=6,
                 requirements={"resourceRequest": {"cpu": "500m", "memory": "1Gi"}})
    # member2 reports no cpu, so nothing with a cpu request fits there
    assert dict(Scheduler().schedule(rb.spec, rb.status, snapshot(*clusters), NOW)) == {"member1": 6}


def test_a_non_workload_goes_to_every_cluster_without_counts() -> None:
    assert schedule({"replicaScheduling": {"replicaSchedulingType": "Divided",
                                           "replicaDivisionPreference": "Weighted"}}, members(3)) == {
        "member1": 0, "member2": 0, "member3": 0}


def test_spread_errors_are_reported_as_selection_failures() -> None:
    rb = binding({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 3}]},
                 replicas=1)
    with pytest.raises(ScheduleError,
                       match=r"^failed to select clusters: the number of feasible clusters is less"):
        Scheduler().schedule(rb.spec, rb.status, snapshot(*members(2)), NOW)


AFFINITIES = {"clusterAffinities": [
    {"affinityName": "primary", "clusterNames": ["member1"]},
    {"affinityName": "backup", "clusterNames": ["member2"]},
], "replicaScheduling": DUPLICATED}


def test_cluster_affinities_fall_back_to_the_next_term() -> None:
    rb = binding(AFFINITIES, replicas=1)
    outcome = Scheduler().schedule_binding(rb.spec, rb.status, snapshot(
        cluster("member1", taints=NOT_READY), cluster("member2")), NOW,
            describe="ResourceBinding(default/nginx)")
    assert outcome.clusters == [("member2", 1)]
    assert outcome.affinity_name == "backup"
    assert outcome.term_failures == [
        "failed to schedule ResourceBinding(default/nginx) with clusterAffiliates index(0): 0/2 clusters are "
        "available: 1 cluster(s) did not match the placement cluster affinity constraint, "
        "1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}."]


def test_cluster_affinities_never_go_back_to_an_earlier_term() -> None:
    rb = binding(AFFINITIES, replicas=1, status={"schedulerObservingAffinityName": "backup"})
    outcome = Scheduler().schedule_binding(rb.spec, rb.status, snapshot(*members(2)), NOW)
    assert (outcome.clusters, outcome.affinity_name) == ([("member2", 1)], "backup")


def test_every_term_failing_to_fit_clears_the_result() -> None:
    rb = binding(AFFINITIES, replicas=1, clusters=[{"name": "member1", "replicas": 1}])
    outcome = Scheduler().schedule_binding(rb.spec, rb.status, snapshot(cluster("member3")), NOW)
    assert outcome.clusters == [] and isinstance(outcome.error, FitError) and outcome.affinity_name is None


def test_empty_workload_propagation_keeps_zero_replica_clusters() -> None:
    rb = binding(SEED_WEIGHTS, replicas=1)
    result = Scheduler(empty_workload_propagation=True).schedule(rb.spec, rb.status, snapshot(*members(2)),
                                                                 NOW)
    assert result == [("member2", 1), ("member1", 0)]


def test_equivalent_bindings_share_filter_work_but_not_their_targets() -> None:
    snap = snapshot(*members(3))
    scheduler = Scheduler()
    first = binding(SEED_WEIGHTS, replicas=3, name="a")
    second = binding(SEED_WEIGHTS, replicas=3, name="b",
                     clusters=[{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}])
    assert scheduler.schedule(first.spec, first.status, snap, NOW) == [("member1", 1), ("member2", 2)]
    assert scheduler.schedule(second.spec, second.status, snap, NOW) == [("member1", 1), ("member2", 2)]


OVERFLOW = {"replicaScheduling": DYNAMIC, "clusterAffinities": [
    {"affinityName": "primary", "clusterNames": ["member1"],
     "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["member2"]}]}]}


def test_overflow_groups_take_what_the_primary_group_cannot_hold() -> None:
    rb = binding(OVERFLOW, replicas=5)
    outcome = Scheduler().schedule_binding(rb.spec, rb.status, snapshot(
        cluster("member1", summary=pods(2)), cluster("member2", summary=pods(10)), cluster("member3")), NOW)
    assert (dict(outcome.clusters or []), outcome.affinity_name) == ({"member1": 2, "member2": 3}, "primary")


def test_an_explicit_reschedule_starts_from_scratch() -> None:
    clusters = [cluster("member1", summary=pods(10)), cluster("member2", summary=pods(10))]
    previous = [{"name": "member1", "replicas": 5}, {"name": "member2", "replicas": 1}]
    steady = schedule({"replicaScheduling": DYNAMIC}, clusters, replicas=8, clusters=previous)
    fresh = schedule({"replicaScheduling": DYNAMIC}, clusters, replicas=8, clusters=previous,
                     rescheduleTriggeredAt="2026-01-01T00:00:10Z",
                     status={"lastScheduledTime": "2026-01-01T00:00:00Z"})
    assert steady == {"member1": 6, "member2": 2}  # only the two extra replicas are placed
    assert fresh == {"member1": 5, "member2": 3}  # all eight by weights 15 and 11, from scratch
