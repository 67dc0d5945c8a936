"""Cluster selection under spread constraints: Karmada's ``select_groups_test.go``,
``select_clusters_by_region_test.go``, ``select_clusters_test.go``,
``group_clusters_test.go``, ``util_test.go`` and ``TestSelectClusters`` cases."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.placement import SpreadConstraint
from fleetkeeper.scheduler.errors import ScheduleError
from fleetkeeper.scheduler.placement import placement_info
from fleetkeeper.scheduler.snapshot import ClusterFacts
from fleetkeeper.scheduler.spread import (
    Candidate,
    Group,
    GroupChoice,
    group_by,
    group_score,
    order_key,
    select_by_region,
    select_clusters,
    select_groups,
)

from .builders import DYNAMIC, placement


def topo(name: str, provider: str, region: str, zone: str) -> ClusterFacts:
    return ClusterFacts(name=name, provider=provider, region=region, zones=(zone,))


def cand(name: str, score: int, available: int, provider: str = "P1", region: str = "R1", zone: str = "Z1"
         ) -> Candidate:
    return Candidate(name, score=score, available=available, facts=topo(name, provider, region, zone))


# --------------------------------------------------------------------------- selectGroups


def groups(*rows: tuple[str, int, int]) -> list[GroupChoice]:
    return [GroupChoice(name, value, weight) for name, value, weight in rows]


SELECT_GROUPS_CASES = [
    pytest.param([], 2, 3, 1, [], id="no groups select nothing"),
    pytest.param(groups(("R1", 1, 80)), 2, 3, 1, [], id="fewer groups than the minimum select nothing"),
    pytest.param(groups(("R1", 1, 80), ("R2", 2, 30)), 2, 3, 4, [], id="too little value selects nothing"),
    pytest.param(groups(("R1", 1, 80)), 1, 3, 1, ["R1"], id="a single sufficient group is selected"),
    pytest.param(groups(("R1", 1, 80), ("R3", 1, 80), ("R2", 1, 60), ("R5", 2, 60), ("R4", 5, 50), ("R6", 3,
                                                                                                    50)),
                 1, 3, 10, ["R5", "R4", "R6"], id="the only feasible path wins"),
    pytest.param(groups(("R1", 1, 80), ("R2", 4, 40), ("R3", 1, 30), ("R4", 3, 30), ("R5", 3, 20), ("R6", 5,
                                                                                                    10)),
                 2, 6, 5, ["R1", "R2"], id="fewer groups are preferred when they suffice"),
    pytest.param(groups(("R1", 1, 60), ("R2", 1, 50), ("R3", 1, 40), ("R4", 3, 30), ("R5", 3, 20), ("R6", 3,
                                                                                                    10)),
                 1, 3, 6, ["R1", "R4", "R5"], id="the highest total weight wins"),
    pytest.param(groups(("R1", 1, 60), ("R2", 2, 50), ("R3", 3, 40), ("R4", 4, 30)), 1, 2, 5, ["R1", "R4"],
                 id="on equal weight the path found first wins"),
    pytest.param(groups(("R4", 1, 60), ("R3", 3, 50), ("R1", 3, 40), ("R2", 4, 30)), 1, 2, 5, ["R3", "R1"],
                 id="on equal weight the greater value wins"),
]


@pytest.mark.parametrize(("choices", "min_groups", "max_groups", "target", "expected"), SELECT_GROUPS_CASES)
def test_select_groups(choices: list[GroupChoice], min_groups: int, max_groups: int, target: int,
                       expected: list[str]) -> None:
    assert [g.name for g in select_groups(choices, min_groups, max_groups, target)] == expected


# --------------------------------------------------------------------------- by region


def region(name: str, score: int, *clusters: Candidate) -> Group:
    return Group(name, score, clusters)


def sc(field: str, min_groups: int, max_groups: int) -> SpreadConstraint:
    return SpreadConstraint(spread_by_field=field, min_groups=min_groups,
                            max_groups=max_groups)


REGIONS_A = {
    "R1": region("R1", 100, cand("member1", 100, 40), cand("member2", 80, 40)),
    "R2": region("R2", 80, cand("member3", 80, 40, region="R2"), cand("member4", 80, 40, region="R2"),
                 cand("member5", 60, 40, region="R2")),
}
REGIONS_B = {
    "R1": region("R1", 90, cand("member1", 90, 40)),
    "R2": region("R2", 70, cand("member2", 70, 40), cand("member3", 60, 40), cand("member4", 30, 40)),
    "R3": region("R3", 80, cand("member5", 80, 40), cand("member6", 50, 60)),
    "R4": region("R4", 50, cand("member7", 50, 50), cand("member8", 40, 50), cand("member9", 10, 50),
                 cand("member10", 0, 50)),
}
REGIONS_C = {
    "R1": region("R1", 70, cand("member1", 70, 40)),
    "R2": region("R2", 40, cand("member2", 40, 40), cand("member3", 40, 40), cand("member4", 40, 40)),
    "R3": region("R3", 60, cand("member5", 60, 40), cand("member6", 50, 60)),
    "R4": region("R4", 70, cand("member7", 70, 100)),
    "R5": region("R5", 50, cand("member8", 50, 50)),
}
REGIONS_D = {
    "R1": region("R1", 100, cand("member1", 100, 40), cand("member2", 80, 60)),
    "R2": REGIONS_A["R2"],
}
REGIONS_E = {"R1": region("R1", 100, cand("member1", 100, 40), cand("member2", 80, 20))}

BY_REGION_CASES = [
    pytest.param(REGIONS_A, sc("region", 1, 1), sc("cluster", 2, 2), ["member1", "member2"],
                 id="clusters come from the region with the higher score"),
    pytest.param(REGIONS_A, sc("region", 1, 1), sc("cluster", 3, 3), ["member3", "member4", "member5"],
                 id="clusters come from the region with enough clusters"),
    pytest.param(REGIONS_B, sc("region", 2, 2), sc("cluster", 4, 5), ["member1", "member2", "member3",
                                                                      "member4"],
                 id="clusters come from regions with enough clusters and a higher score"),
    pytest.param(REGIONS_C, sc("region", 1, 3), sc("cluster", 6, 8),
                 ["member1", "member5", "member2", "member6", "member3", "member4"],
                 id="more regions than the minimum when needed for the cluster count"),
    pytest.param(REGIONS_A, sc("region", 3, 3), sc("cluster", 3, 3), None, id="too few regions fail"),
    pytest.param(REGIONS_D, sc("region", 1, 1), sc("cluster", 4, 4), None, id="too few clusters fail"),
    pytest.param(REGIONS_E, sc("region", 1, 1), sc("cluster", 3, 4), None, id="no region left to add fails"),
]


@pytest.mark.parametrize(("regions", "region_c", "cluster_c", "expected"), BY_REGION_CASES)
def test_select_best_clusters_by_region(regions: dict[str, Group], region_c: SpreadConstraint,
                                        cluster_c: SpreadConstraint, expected: list[str] | None) -> None:
    if expected is None:
        with pytest.raises(ScheduleError):
            select_by_region(regions, region_c, cluster_c)
        return
    assert [c.name for c in select_by_region(regions, region_c, cluster_c)] == expected


# --------------------------------------------------------------------------- SelectBestClusters

ORDERED = [
    cand("member4", 60, 50, "P2", "R2", "Z2"),
    cand("member2", 40, 60, "P1", "R1", "Z2"),
    cand("member3", 30, 80, "P2", "R1", "Z1"),
    cand("member1", 20, 40, "P1", "R1", "Z1"),
]
CLUSTER_2_OF_4 = [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}]

SELECT_BEST_CASES = [
    pytest.param({"spreadConstraints": CLUSTER_2_OF_4}, 100, ["member4", "member2"],
                 id="by cluster score, capacity ignored without replicaScheduling"),
    pytest.param({"spreadConstraints": CLUSTER_2_OF_4,
                  "replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
                 120, ["member4", "member2"], id="duplicated ignores capacity"),
    pytest.param({"spreadConstraints": CLUSTER_2_OF_4, "replicaScheduling": {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": ["member1"]},
                                                   "weight": 2}]}}},
                 120, ["member4", "member2", "member3", "member1"],
                     id="static weights ignore spread constraints"),
    pytest.param({"spreadConstraints": CLUSTER_2_OF_4,
                  "replicaScheduling": {"replicaSchedulingType": "Divided"}},
                 120, ["member4", "member3"], id="a larger cluster is swapped in to satisfy capacity"),
]


@pytest.mark.parametrize(("policy", "replicas", "expected"), SELECT_BEST_CASES)
def test_select_best_clusters(policy: dict[str, Any], replicas: int, expected: list[str]) -> None:
    assert [c.name for c in select_clusters(ORDERED, placement_info(placement(policy)), replicas)] == expected


@pytest.mark.parametrize(("policy", "replicas", "message"), [
    pytest.param({"spreadConstraints": CLUSTER_2_OF_4,
                  "replicaScheduling": {"replicaSchedulingType": "Divided"}},
                 200, "no enough resource when selecting 2 clusters", id="insufficient capacity fails"),
    pytest.param({"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 7, "minGroups": 7}]}, 30,
                 "the number of feasible clusters is less than spreadConstraint.MinGroups",
                 id="fewer clusters than minGroups fails"),
    pytest.param({"spreadConstraints": [{"spreadByField": "zone", "maxGroups": 1, "minGroups": 1}]}, 1,
                 "just support cluster and region spread constraint",
                     id="a zone constraint alone is an error"),
])
def test_select_best_clusters_errors(policy: dict[str, Any], replicas: int, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        select_clusters(ORDERED, placement_info(placement(policy)), replicas)


@pytest.mark.parametrize(("policy", "scores", "expected"), [
    pytest.param({}, {"cluster1": 10, "cluster2": 20}, ["cluster2", "cluster1"],
                 id="all clusters are selected"),
    pytest.param({"clusterAffinity": {"clusterNames": ["cluster1", "cluster2", "cluster3"]},
                  "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1}]},
                 {"cluster1": 10, "cluster2": 20, "cluster3": 15}, ["cluster2"],
                     id="the top cluster is selected"),
    pytest.param({"clusterAffinity": {"clusterNames": ["cluster1", "cluster3"]}},
                 {"cluster1": 10, "cluster3": 15}, ["cluster3", "cluster1"], id="clusters passing affinity"),
    pytest.param({"replicaScheduling": DYNAMIC,
                  "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}]},
                 {"cluster1": 10, "cluster2": 20}, ["cluster2"],
                     id="one cluster by spread with dynamic weights"),
])
def test_select_clusters(policy: dict[str, Any], scores: dict[str, int], expected: list[str]) -> None:
    ordered = sorted((Candidate(n, score=s) for n, s in scores.items()), key=order_key)
    assert [c.name for c in select_clusters(ordered, placement_info(placement(policy)), 0)] == expected


# --------------------------------------------------------------------------- grouping and group scores

SCORED = [
    cand("member1", 20, 100, "P1", "R1", "Z1"),
    cand("member2", 40, 100, "P1", "R1", "Z2"),
    cand("member3", 30, 100, "P2", "R1", "Z1"),
    cand("member4", 60, 100, "P2", "R2", "Z2"),
]


@pytest.mark.parametrize(("fields", "counts"), [
    pytest.param([], {}, id="no constraints group nothing"),
    pytest.param(["zone"], {"zone": 2}, id="zones group into two"),
    pytest.param(["region"], {"region": 2}, id="regions group into two"),
    pytest.param(["provider"], {"provider": 2}, id="providers group into two"),
    pytest.param(["provider", "region", "zone"], {"provider": 2, "region": 2, "zone": 2},
                 id="all three fields group into two each"),
])
def test_group_clusters_with_score(fields: list[str], counts: dict[str, int]) -> None:
    ordered = sorted(SCORED, key=order_key)
    assert [c.name for c in ordered] == ["member4", "member2", "member3", "member1"]
    info = placement_info(placement({"spreadConstraints": [
        {"spreadByField": f, "minGroups": 1, "maxGroups": 1} for f in fields]}))
    for field in ("zone", "region", "provider"):
        assert len(group_by(ordered, field, info, 0) if field in fields else {}) == counts.get(field, 0)


def scored(scores: list[int], available: list[int]) -> list[Candidate]:
    return [Candidate(f"member{i + 1}", score=s, available=a) for i, (s, a) in enumerate(zip(scores,
                                                                                             available,
                                                                                              strict=True))]


GROUP_SCORE_CASES = [
    pytest.param(scored([100, 100, 0, 0, 0], [30] * 5), scored([100] * 5, [30, 30, 30, 10, 10]), 20, True, 0,
                 True,
                 id="duplicated: more clusters holding the replicas wins"),
    pytest.param(scored([100, 100, 0, 0, 0], [30, 30, 30, 10, 10]), scored([100] * 5, [30, 30, 30, 10, 10]),
                 20,
                 True, 0, False, id="duplicated: as many clusters, the higher score wins"),
    pytest.param(scored([100, 100, 0, 0, 0], [30, 30, 30, 10, 10]), scored([100] * 5, [10, 10, 10, 5, 5]),
                 100,
                 False, 2, True, id="aggregated: meeting the replicas wins"),
    pytest.param(scored([100, 100, 0, 0, 0], [10, 10, 10, 10, 5]), scored([100] * 5, [10, 10, 10, 5, 5]), 100,
                 False, 2, True, id="dynamic weight: more capacity wins"),
    pytest.param(scored([100, 100, 0, 0, 0], [10, 10, 10, 5, 5]), scored([100] * 5, [10, 10, 10, 5, 5]), 100,
                 False, 2, False, id="static weight: the higher score wins"),
    pytest.param(scored([0] * 5, [100] * 5), scored([100] * 5, [50] * 5), 100, False, 2, False,
                 id="aggregated: a higher score beats more capacity"),
]


@pytest.mark.parametrize(("first", "second", "replicas", "duplicated", "min_groups", "first_wins"),
                         GROUP_SCORE_CASES)
def test_group_score(first: list[Candidate], second: list[Candidate], replicas: int, duplicated: bool,
                     min_groups: int, first_wins: bool) -> None:
    a = group_score(first, duplicated=duplicated, replicas=replicas, min_groups=min_groups,
                    cluster_min_groups=0)
    b = group_score(second, duplicated=duplicated, replicas=replicas, min_groups=min_groups,
                    cluster_min_groups=0)
    assert (a >= b) is first_wins


@pytest.mark.parametrize(("clusters", "replicas"), [
    pytest.param([], 10, id="no clusters score zero"),
    pytest.param([Candidate("member1", score=50, available=5), Candidate("member2", score=50, available=5)],
                 10,
                 id="clusters that cannot hold the replicas score zero"),
])
def test_duplicated_group_score_is_zero(clusters: list[Candidate], replicas: int) -> None:
    assert group_score(clusters, duplicated=True, replicas=replicas, min_groups=1, cluster_min_groups=1) == 0


@pytest.mark.parametrize(("cands", "expected"), [
    pytest.param([Candidate("b", score=2), Candidate("a", score=1)], ["b", "a"], id="higher score first"),
    pytest.param([Candidate("b", score=1, available=5), Candidate("a", score=1, available=10)], ["a", "b"],
                 id="equal score, more capacity first"),
    pytest.param([Candidate("b", score=1, available=5), Candidate("a", score=1, available=5)], ["a", "b"],
                 id="equal score and capacity, name order"),
    pytest.param([Candidate("a", overflow_order=1, score=9), Candidate("b", score=1)], ["b", "a"],
                 id="a lower overflow tier comes first whatever the score"),
])
def test_candidate_order(cands: list[Candidate], expected: list[str]) -> None:
    assert [c.name for c in sorted(cands, key=order_key)] == expected
