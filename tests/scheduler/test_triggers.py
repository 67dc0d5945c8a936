"""When a binding is scheduled again: Karmada's ``helper_test.go`` (placementChanged,
getAffinityIndex, getConditionByError) and ``binding_test.go`` (replicas changed,
reschedule required) cases, plus the trigger order of ``doSchedule``."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from fleetkeeper.api.placement import ClusterAffinityTerm
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.framework import FitError
from fleetkeeper.scheduler.triggers import (
    RECONCILE_SCHEDULE,
    SCALE_SCHEDULE,
    affinity_index,
    placement_changed,
    replicas_changed,
    reschedule_required,
    schedule_trigger,
    verdict,
)

from .builders import DUPLICATED, NOW, binding, placement

TOLERATION = [{"key": "foo", "operator": "Equal", "value": "foo", "effect": "NoSchedule"}]
SPREAD_1 = [{"minGroups": 1, "maxGroups": 1, "spreadByField": "cluster"}]
BASE = {"clusterAffinity": {"clusterNames": ["m1"]}, "clusterTolerations": TOLERATION,
        "spreadConstraints": SPREAD_1, "replicaScheduling": DUPLICATED}


def with_(**changes: Any) -> dict[str, Any]:
    out = dict(BASE)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def terms(*rows: tuple[str, list[str]]) -> dict[str, Any]:
    return {"clusterAffinities": [{"affinityName": n, "clusterNames": names} for n, names in rows]}


PLACEMENT_CASES = [
    pytest.param({"clusterAffinity": {"clusterNames": ["m1"]}}, None, "", True, id="nothing applied yet"),
    pytest.param(BASE, BASE, "", False, id="the same placement"),
    pytest.param(with_(clusterAffinity=None), with_(clusterAffinity={"clusterNames": ["m2"]}), "", True,
                 id="the cluster affinity changed"),
    pytest.param(BASE, with_(clusterTolerations=[{**TOLERATION[0], "operator": "Exists"}]), "", True,
                 id="the tolerations changed"),
    pytest.param(BASE, with_(spreadConstraints=[{**SPREAD_1[0], "maxGroups": 2}]), "", True,
                 id="the spread constraints changed"),
    pytest.param(BASE, with_(replicaScheduling={"replicaSchedulingType": "Divided"}), "", True,
                 id="the replica scheduling changed"),
    pytest.param(terms(("group1", ["m1"])), {}, "", True, id="affinity terms changed and none is observed"),
    pytest.param(terms(("group1", ["m1", "m2"])), terms(("group1", ["m1"])), "group1", True,
                 id="the observed term changed"),
    pytest.param(terms(("group2", ["m2"])), terms(("group1", ["m1"]), ("group2", ["m2"])), "group1", True,
                 id="the observed term was deleted"),
    pytest.param({}, terms(("group1", ["m1"])), "group1", True, id="every term was deleted"),
    pytest.param(terms(("group1", ["m1"]), ("group2", ["m1", "m2"])), terms(("group1", ["m1"])), "group1",
                 False,
                 id="a term was added but the observed one is unchanged"),
    pytest.param(terms(("group1", ["m1"]), ("group2", ["m1", "m2"])), terms(("group1", ["m1"]), ("group2",
                                                                                                 ["m2"])),
                 "group1", False, id="another term changed but the observed one is unchanged"),
    pytest.param(terms(("group1", ["m1"])), terms(("group1", ["m1"]), ("group2", ["m2"])), "group1", False,
                 id="another term was deleted but the observed one is unchanged"),
]


@pytest.mark.parametrize(("current", "applied", "observed", "changed"), PLACEMENT_CASES)
def test_placement_changed(current: dict[str, Any], applied: dict[str, Any] | None, observed: str,
                           changed: bool) -> None:
    text = "" if applied is None else json.dumps(applied)
    assert placement_changed(placement(current), text, observed) is changed


def test_an_unreadable_applied_placement_is_ignored() -> None:
    assert placement_changed(placement(BASE), "{not json", "") is False


@pytest.mark.parametrize(("observed", "index"), [
    pytest.param("", 0, id="no observed name starts at the first term"),
    pytest.param("group0", 0, id="an unknown name starts at the first term"),
    pytest.param("group3", 2, id="a known name starts at its own term"),
])
def test_affinity_index(observed: str, index: int) -> None:
    ts = [ClusterAffinityTerm(affinity_name=f"group{i}") for i in (1, 2, 3)]
    assert affinity_index(ts, observed) == index


@pytest.mark.parametrize(("strategy", "replicas", "targets", "changed"), [
    pytest.param(None, 5, [5, 5], False, id="no replica scheduling never counts as changed"),
    pytest.param(DUPLICATED, 5, [5, 5], False, id="duplicated with every target at the count"),
    pytest.param(DUPLICATED, 5, [3, 5], True, id="duplicated with a target off the count"),
    pytest.param({"replicaSchedulingType": "Divided"}, 5, [2, 3], False, id="divided targets adding up"),
    pytest.param({"replicaSchedulingType": "Divided"}, 5, [3, 3], True, id="divided targets not adding up"),
    pytest.param({"replicaSchedulingType": "Divided"}, 5, [3], True,
                 id="divided after an eviction removed a target"),
])
def test_replicas_changed(strategy: dict[str, Any] | None, replicas: int, targets: list[int],
                          changed: bool) -> None:
    policy = {} if strategy is None else {"replicaScheduling": strategy}
    rb = binding(policy, replicas=replicas, clusters=[{"name": f"m{i}", "replicas": r} for i,
                                                      r in enumerate(targets)])
    assert replicas_changed(rb.spec) is changed


@pytest.mark.parametrize(("triggered", "last", "required"), [
    pytest.param(None, 0, False, id="no reschedule requested"),
    pytest.param(0, None, False, id="never scheduled"),
    pytest.param(-60, 0, False, id="requested before the last schedule"),
    pytest.param(0, -60, True, id="requested after the last schedule"),
])
def test_reschedule_required(triggered: int | None, last: int | None, required: bool) -> None:
    spec: dict[str, Any] = {}
    status: dict[str, Any] = {}
    if triggered is not None:
        spec["rescheduleTriggeredAt"] = (NOW + timedelta(seconds=triggered)).isoformat()
    if last is not None:
        status["lastScheduledTime"] = (NOW + timedelta(seconds=last)).isoformat()
    rb = binding({}, status=status, **spec)
    assert reschedule_required(rb.spec, rb.status) is required


DIVIDED = {"clusterAffinity": {"clusterNames": ["m1", "m2"]}, "replicaScheduling": {
    "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}


@pytest.mark.parametrize(("policy", "replicas", "targets", "applied", "deleting", "trigger"), [
    pytest.param(DIVIDED, 3, [], None, [], RECONCILE_SCHEDULE, id="first scheduling"),
    pytest.param(DIVIDED, 3, [("m1", 3)], DIVIDED, [], None, id="a settled divided workload is left alone"),
    pytest.param(DIVIDED, 4, [("m1", 3)], DIVIDED, [], SCALE_SCHEDULE, id="a scaled divided workload"),
    pytest.param(DIVIDED, 3, [("m1", 3)], DIVIDED, ["m1"], RECONCILE_SCHEDULE,
                 id="a target cluster is deleting"),
    pytest.param(DIVIDED, 3, [("m1", 3)], DIVIDED, ["m2"], None, id="another cluster is deleting"),
    pytest.param({"replicaScheduling": DUPLICATED}, 3, [("m1", 3)], {"replicaScheduling": DUPLICATED}, [],
                 RECONCILE_SCHEDULE, id="duplicated is always scheduled"),
    pytest.param(DIVIDED, 0, [("m1", 0)], DIVIDED, [], RECONCILE_SCHEDULE,
                 id="a non-workload is always scheduled"),
])
def test_schedule_trigger(policy: dict[str, Any], replicas: int, targets: list[tuple[str, int]],
                          applied: dict[str, Any] | None, deleting: list[str], trigger: str | None) -> None:
    rb = binding(policy, replicas=replicas, clusters=[{"name": n, "replicas": r} for n, r in targets])
    annotation = "" if applied is None else placement(applied).model_dump_json(by_alias=True,
                                                                               exclude_none=True)
    assert schedule_trigger(rb.spec, rb.status, annotation, set(deleting)) == trigger


@pytest.mark.parametrize(("error", "status", "reason", "retry"), [
    pytest.param(None, "True", "Success", False, id="success"),
    pytest.param(ScheduleError("boom"), "False", "SchedulerError", True,
                 id="a plain error retries with backoff"),
    pytest.param(FitError(0, {}), "False", "NoClusterFit", False, id="no cluster fits waits for a change"),
    pytest.param(UnschedulableError("short"), "False", "Unschedulable", False,
                 id="unschedulable waits for a change"),
    pytest.param(UnschedulableError("insufficient replicas").wrap("failed to scale up").wrap(
        "failed to assign replicas"), "False", "Unschedulable", False, id="a wrapped unschedulable error"),
])
def test_condition_by_error(error: ScheduleError | None, status: str, reason: str, retry: bool) -> None:
    v = verdict(error)
    assert (v.type, v.status, v.reason, v.retry) == ("Scheduled", status, reason, retry)


def test_a_wrapped_error_reads_like_karmadas() -> None:
    err = UnschedulableError("insufficient replicas").wrap("failed to scale up")
    err = err.wrap("failed to assign replicas")
    assert verdict(err).message == "failed to assign replicas: failed to scale up: insufficient replicas"
