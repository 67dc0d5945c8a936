"""Replica assignment: Karmada's ``assignment_test.go``, ``division_algorithm_test.go``,
``generic_scheduler_test.go`` (distribution) and ``common_test.go`` (AssignReplicas) cases."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.placement import Placement, StaticClusterWeight
from fleetkeeper.scheduler.assignment import (
    assign_duplicated,
    assign_dynamic,
    assign_replicas,
    assign_static,
    static_weights,
)
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.placement import placement_info
from fleetkeeper.scheduler.spread import Candidate

from .builders import AGGREGATED, DYNAMIC, facts, placement
from .builders import static_weights as weights_policy


def cands(**allocatable: int) -> list[Candidate]:
    return [Candidate(name, allocatable=a, facts=facts(name)) for name, a in allocatable.items()]


def rules_of(policy: Placement) -> list[StaticClusterWeight]:
    rs = policy.replica_scheduling
    assert rs is not None and rs.weight_preference is not None
    return rs.weight_preference.static_weight_list or []


def names(*ns: str) -> list[Candidate]:
    return [Candidate(n, facts=facts(n)) for n in ns]


# --------------------------------------------------------------------------- dynamic division

DIVIDE_CASES = [
    pytest.param(dict(member1=18, member2=12, member3=6), 12, False, {"member1": 6, "member2": 4,
                                                                      "member3": 2},
                 id="twelve by dynamic weight 18-12-6"),
    pytest.param(dict(member1=20, member2=12, member3=6), 12, False, {"member1": 6, "member2": 4,
                                                                      "member3": 2},
                 id="twelve by dynamic weight 20-12-6"),
    pytest.param(dict(member1=6, member2=12, member3=6), 12, False, {"member1": 3, "member2": 6,
                                                                     "member3": 3},
                 id="twelve by dynamic weight 6-12-6"),
    pytest.param(dict(member2=12, member1=6, member3=6), 12, True, {"member2": 12},
                 id="twelve aggregated over 12-6-6 fits one cluster"),
    pytest.param(dict(member1=6, member2=6, member3=6), 12, True, {"member1": 6, "member2": 6},
                 id="twelve aggregated over 6-6-6 uses the first two"),
]


@pytest.mark.parametrize(("allocatable", "replicas", "aggregated", "expected"), DIVIDE_CASES)
def test_dynamic_divide(allocatable: dict[str, int], replicas: int, aggregated: bool,
                        expected: dict[str, int]) -> None:
    result = assign_dynamic(cands(**allocatable), replicas, [], aggregated=aggregated)
    assert {n: r for n, r in result if r > 0} == expected


SCALE_CASES = [
    pytest.param(dict(member1=1, member2=1, member3=1), 6, {"member1": 2, "member2": 4, "member3": 6}, False,
                 {"member1": 1, "member2": 2, "member3": 3}, id="dynamic 12 to 6 shrinks in proportion"),
    pytest.param(dict(member1=10, member2=10, member3=10), 24, {"member1": 2, "member2": 4, "member3": 6},
                 False,
                 {"member1": 6, "member2": 8, "member3": 10},
                     id="dynamic 12 to 24 adds only the extra twelve"),
    pytest.param(dict(member1=1, member2=1, member3=1), 24, {"member1": 2, "member2": 4, "member3": 6}, False,
                 None, id="dynamic 12 to 24 without capacity is unschedulable"),
    pytest.param(dict(member1=1, member2=1, member3=1), 6, {"member1": 4, "member2": 8}, True,
                 {"member2": 6}, id="aggregated 12 to 6 keeps the bigger cluster"),
    pytest.param(dict(member1=100, member2=100), 8, {"member1": 4, "member2": 8}, True,
                 {"member2": 8}, id="aggregated 12 to 8 keeps the bigger cluster"),
    pytest.param(dict(member1=4, member2=6, member3=8), 24, {"member1": 4, "member2": 8}, True,
                 {"member1": 7, "member2": 12, "member3": 5}, id="aggregated 12 to 24 over 4-6-8"),
    pytest.param(dict(member1=6, member2=6, member3=20), 24, {"member1": 4, "member2": 8}, True,
                 {"member1": 10, "member2": 14}, id="aggregated 12 to 24 prefers clusters already used"),
    pytest.param(dict(member1=1, member2=1, member3=1), 24, {"member1": 4, "member2": 8}, True,
                 None, id="aggregated 12 to 24 without capacity is unschedulable"),
    pytest.param(dict(member1=4, member3=8, member4=12), 24, {"member1": 4, "member2": 8}, True,
                 {"member1": 7, "member3": 7, "member4": 10},
                 id="aggregated 12 to 24 after member2 disappeared and member4 appeared"),
]


@pytest.mark.parametrize(("allocatable", "replicas", "previous", "aggregated", "expected"), SCALE_CASES)
def test_dynamic_scale(allocatable: dict[str, int], replicas: int, previous: dict[str, int], aggregated: bool,
                       expected: dict[str, int] | None) -> None:
    if expected is None:
        with pytest.raises(UnschedulableError):
            assign_dynamic(cands(**allocatable), replicas, list(previous.items()), aggregated=aggregated)
        return
    result = assign_dynamic(cands(**allocatable), replicas, list(previous.items()), aggregated=aggregated)
    assert {n: r for n, r in result if r > 0} == expected


SCALE_UP_CASES = [
    pytest.param(dict(member1=6, member2=8, member3=10), {}, False, {"member1": 3, "member2": 4,
                                                                     "member3": 5},
                 id="twelve by dynamic weight 6-8-10"),
    pytest.param(dict(member1=8, member2=8, member3=10), {}, False, {"member1": 4, "member2": 4,
                                                                     "member3": 4},
                 id="twelve by dynamic weight 8-8-10"),
    pytest.param(dict(member1=3, member2=3, member3=3), {}, False, None,
                 id="twelve by dynamic weight 3-3-3 fails"),
    pytest.param(dict(member1=6, member2=8, member3=10), {}, True, {"member2": 5, "member3": 7},
                 id="twelve aggregated over 6-8-10 uses the two largest"),
    pytest.param(dict(member1=12, member2=8, member3=10), {}, True, {"member1": 12},
                 id="twelve aggregated over 12-8-10 fits the largest"),
    pytest.param(dict(member1=3, member2=3, member3=3), {}, True, None,
                 id="twelve aggregated over 3-3-3 fails"),
    pytest.param(dict(member1=3, member2=3), {"member1": 6, "member3": 6}, False, {"member1": 9,
                                                                                   "member2": 3},
                 id="member3 disappeared and member2 appeared: only the lost six move"),
]


@pytest.mark.parametrize(("allocatable", "previous", "aggregated", "expected"), SCALE_UP_CASES)
def test_dynamic_scale_up(allocatable: dict[str, int], previous: dict[str, int], aggregated: bool,
                          expected: dict[str, int] | None) -> None:
    if expected is None:
        with pytest.raises(UnschedulableError, match="not enough to schedule"):
            assign_dynamic(cands(**allocatable), 12, list(previous.items()), aggregated=aggregated)
        return
    result = assign_dynamic(cands(**allocatable), 12, list(previous.items()), aggregated=aggregated)
    assert {n: r for n, r in result if r > 0} == expected


def test_an_unschedulable_error_keeps_its_kind_through_the_wrapping() -> None:
    with pytest.raises(UnschedulableError) as caught:
        assign_dynamic(cands(member1=3), 10, [])
    assert str(caught.value) == (
        "failed to scale up: Clusters available replicas 3 are not enough to schedule.")


def test_a_fresh_reschedule_ignores_the_previous_proportions() -> None:
    result = assign_dynamic(cands(member1=10, member2=2), 6, [("member1", 1), ("member2", 5)], fresh=True)
    # weights are capacity plus what runs there now: 11 and 7
    assert dict(result) == {"member1": 4, "member2": 2}


# --------------------------------------------------------------------------- static weights

STATIC_RULES_321 = weights_policy(("member1", 3), ("member2", 2), ("member3", 1))
STATIC_CASES = [
    pytest.param(["member1", "member2", "member3"], STATIC_RULES_321, 12, {"member1": 6, "member2": 4,
                                                                           "member3": 2},
                 id="twelve by weight 3-2-1"),
    pytest.param(["member1", "member2", "member3"], None, 12, {"member1": 4, "member2": 4, "member3": 4},
                 id="twelve with no weight preference weighs every cluster 1"),
    pytest.param(["member1", "member2", "member3"], STATIC_RULES_321, 13, {"member1": 7, "member2": 4,
                                                                           "member3": 2},
                 id="thirteen by weight 3-2-1"),
    pytest.param(["member1", "member2", "member3"], STATIC_RULES_321, 14, {"member1": 7, "member2": 5,
                                                                           "member3": 2},
                 id="fourteen by weight 3-2-1"),
    pytest.param(["member1", "member2"], weights_policy(("member1", 1), ("member2", 1)), 0,
                 {"member1": 0, "member2": 0}, id="zero replicas give every cluster zero"),
    pytest.param(["member1", "member2"], weights_policy(("member1", 1)), 2, {"member1": 2},
                 id="a selected cluster without a weight gets nothing"),
    pytest.param(["member1", "member2"], weights_policy(("member1", 1), ("member2", 1), ("member1", 2)), 3,
                 {"member1": 2, "member2": 1}, id="the largest of several matching weights counts"),
]


@pytest.mark.parametrize(("clusters", "policy", "replicas", "expected"), STATIC_CASES)
def test_static_weights(clusters: list[str], policy: dict[str, Any] | None, replicas: int,
                        expected: dict[str, int]) -> None:
    selected = names(*clusters)
    weights = None
    if policy is not None:
        weights = static_weights(rules_of(placement({"replicaScheduling": policy})),
                                 [c.facts for c in selected if c.facts])
    assert dict(assign_static(selected, replicas, weights)) == expected


DISTRIBUTION_CASES = [
    pytest.param(["member1", "member2"], [1, 1], 3, [("member1", 2), ("member2", 1)],
                 id="three replicas at 1-1"),
    pytest.param(["member1", "member2", "member3"], [1, 1, 1], 3, [("member1", 1), ("member2", 1),
                                                                   ("member3", 1)],
                 id="three replicas at 1-1-1 before scaling to five"),
    pytest.param(["member1", "member2", "member3"], [1, 1, 1], 5, [("member1", 2), ("member2", 2),
                                                                   ("member3", 1)],
                 id="five replicas at 1-1-1 after scaling from three"),
    pytest.param(["member1", "member2", "member3", "member4"], [2, 1, 1, 1], 7,
                 [("member1", 3), ("member2", 2), ("member3", 1), ("member4", 1)],
                 id="seven replicas at 2-1-1-1 before scaling to eight"),
    pytest.param(["member1", "member2", "member3", "member4"], [2, 1, 1, 1], 8,
                 [("member1", 3), ("member2", 2), ("member3", 2), ("member4", 1)],
                 id="eight replicas at 2-1-1-1 after scaling from seven"),
    pytest.param(["member1", "member2", "member3", "member4"], [2, 1, 1, 1], 9,
                 [("member1", 3), ("member2", 2), ("member3", 2), ("member4", 2)],
                 id="nine replicas at 2-1-1-1 before scaling to eight"),
    pytest.param(["member1", "member2", "member3", "member4"], [2, 1, 1, 1], 8,
                 [("member1", 3), ("member2", 2), ("member3", 2), ("member4", 1)],
                 id="eight replicas at 2-1-1-1 after scaling from nine"),
    pytest.param(["member1", "member2", "member3", "member4"], [1, 1, 1, 1], 6,
                 [("member1", 2), ("member2", 2), ("member3", 1), ("member4", 1)],
                 id="six replicas at 1-1-1-1 before the weights change"),
    pytest.param(["member1", "member2", "member3", "member4"], [2, 1, 1, 1], 6,
                 [("member1", 3), ("member2", 1), ("member3", 1), ("member4", 1)],
                 id="six replicas after the weights change to 2-1-1-1"),
    pytest.param(["member1", "member2", "member3"], [1, 1, 1], 5, [("member1", 2), ("member2", 2),
                                                                   ("member3", 1)],
                 id="five replicas at 1-1-1 before a cluster is added"),
    pytest.param(["member1", "member2", "member3", "member4"], [1, 1, 1, 1], 5,
                 [("member1", 2), ("member2", 1), ("member3", 1), ("member4", 1)],
                 id="five replicas at 1-1-1-1 after a cluster is added"),
    pytest.param(["member1", "member2", "member3", "member4"], [1, 1, 1, 1], 6,
                 [("member1", 2), ("member2", 2), ("member3", 1), ("member4", 1)],
                 id="six replicas at 1-1-1-1 before a cluster is removed"),
    pytest.param(["member1", "member2", "member3"], [1, 1, 1], 6, [("member1", 2), ("member2", 2),
                                                                   ("member3", 2)],
                 id="six replicas at 1-1-1 after a cluster is removed"),
]


@pytest.mark.parametrize(("clusters", "weights", "replicas", "expected"), DISTRIBUTION_CASES)
def test_distribution_of_replicas_is_exact_and_name_ordered(clusters: list[str], weights: list[int],
                                                            replicas: int,
                                                            expected: list[tuple[str, int]]) -> None:
    info = placement_info(placement({"replicaScheduling": weights_policy(*zip(clusters, weights,
                                                                              strict=True))}))
    selected = names(*clusters)
    by_name = static_weights(rules_of(info.placement), [c.facts for c in selected if c.facts])
    result = assign_replicas(selected, info, replicas=replicas, divide=True, weights=by_name)
    assert result == expected


# --------------------------------------------------------------------------- AssignReplicas

OVERFLOW = {
    "replicaScheduling": DYNAMIC,
    "clusterAffinities": [{"affinityName": "affinity1", "clusterNames": ["member1"],
                           "overflowAffinities": [{"affinityName": "overflow",
                                                   "clusterNames": ["member2"]}]}],
}


def tiered(*rows: tuple[str, int, int, int]) -> list[Candidate]:
    return [Candidate(name, available=avail, allocatable=alloc, overflow_order=order)
            for name, order, avail, alloc in rows]


ASSIGN_CASES = [
    pytest.param(names("member1"), {"replicaScheduling": {"replicaSchedulingType": "Divided",
                                                          "replicaDivisionPreference": "Weighted"}},
                 3, True, [], "", [("member1", 3)], id="a single cluster takes all replicas"),
    pytest.param(names("member1", "member2"), {}, 0, False, [], "", [("member1", 0), ("member2", 0)],
                 id="a non-workload goes everywhere without a replica count"),
    pytest.param(tiered(("member1", 0, 10, 10), ("member2", 1, 10, 10)), OVERFLOW, 5, True, [], "affinity1",
                 [("member1", 5)], id="the primary group holds everything, no overflow"),
    pytest.param(tiered(("member1", 0, 2, 2), ("member2", 1, 10, 10)), OVERFLOW, 5, True, [], "affinity1",
                 [("member1", 2), ("member2", 3)], id="the primary group is full and the rest overflows"),
    pytest.param(tiered(("member1", 0, 5, 2), ("member2", 1, 10, 10)), OVERFLOW, 8, True, [("member1", 3)],
                 "affinity1", [("member1", 5), ("member2", 3)],
                 id="replicas already assigned count toward the primary group's capacity"),
]


@pytest.mark.parametrize(("selected", "policy", "replicas", "divide", "previous", "observed", "expected"),
                         ASSIGN_CASES)
def test_assign_replicas(selected: list[Candidate], policy: dict[str, Any], replicas: int, divide: bool,
                         previous: list[tuple[str, int]], observed: str,
                         expected: list[tuple[str, int]]) -> None:
    info = placement_info(placement(policy))
    result = assign_replicas(selected, info, replicas=replicas, divide=divide, previous=previous,
                             observed=observed)
    assert result == expected
    if divide:
        assert sum(r for _, r in result) == replicas


@pytest.mark.parametrize(("selected", "policy", "replicas", "observed", "error", "message"), [
    pytest.param([], {}, 1, "", ScheduleError, "no clusters available to schedule",
                 id="no selected cluster fails"),
    pytest.param(tiered(("member1", 0, 2, 2), ("member2", 1, 2, 2)), OVERFLOW, 10, "affinity1",
                 UnschedulableError,
                 "Clusters available replicas are not enough to schedule",
                 id="every overflow tier exhausted is unschedulable"),
    pytest.param(names("member1"), {"replicaScheduling": {"replicaSchedulingType": "Divided"}}, 3, "",
                 ScheduleError, "unsupported replica scheduling strategy",
                 id="divided without a division preference is unsupported"),
])
def test_assign_replicas_errors(selected: list[Candidate], policy: dict[str, Any], replicas: int,
                                observed: str,
                                error: type[ScheduleError], message: str) -> None:
    with pytest.raises(error, match=message):
        assign_replicas(selected, placement_info(placement(policy)), replicas=replicas, divide=True,
                        observed=observed)


@pytest.mark.parametrize(("replicas", "expected"), [
    pytest.param(2, [("member1", 2), ("member2", 2)], id="duplicated gives every cluster all replicas"),
    pytest.param(0, [("member1", 0), ("member2", 0)], id="duplicated zero replicas gives zero everywhere"),
])
def test_duplicated(replicas: int, expected: list[tuple[str, int]]) -> None:
    assert assign_duplicated(names("member1", "member2"), replicas) == expected


def test_aggregated_policy_is_recognised() -> None:
    assert placement_info(placement({"replicaScheduling": AGGREGATED})).strategy == "Aggregated"
