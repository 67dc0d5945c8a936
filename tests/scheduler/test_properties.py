"""Properties that hold for any fleet and any policy (hypothesis).

* Divided results add up to the requested replicas;
* no result ever names a cluster a filter rejects;
* spreading by cluster never uses more than ``maxGroups`` clusters;
* the same input gives the same result — whatever order clusters arrive in, and
  whether or not the decision was shared with an equivalent binding;
* Go's unstable sort, as ported, still sorts and keeps every element.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.errors import ScheduleError
from fleetkeeper.scheduler.framework import view_of
from fleetkeeper.scheduler.gosort import go_sort
from fleetkeeper.scheduler.snapshot import Snapshot, facts_of

from .builders import AGGREGATED, DUPLICATED, DYNAMIC, NOW, binding, cluster, snapshot

NAMES = [f"member{i}" for i in range(1, 9)]
TAINT = [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]


@st.composite
def fleets(draw: st.DrawFn) -> list[Cluster]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=8, unique=True))
    out = []
    for name in names:
        out.append(cluster(
            name, labels={"env": draw(st.sampled_from(["prod", "dev"]))},
            region=draw(st.sampled_from(["r1", "r2", "r3"])),
            taints=TAINT if draw(st.booleans()) and draw(st.booleans()) else None,
            summary={"allocatable": {"pods": str(draw(st.integers(0, 30)))}}))
    return out


def weights(draw: st.DrawFn) -> dict[str, Any]:
    chosen = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": [n]}, "weight": draw(st.integers(1, 5))} for n in chosen]}}


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    kind = draw(st.sampled_from(["static", "dynamic", "aggregated", "duplicated"]))
    fixed = {"dynamic": DYNAMIC, "aggregated": AGGREGATED, "duplicated": DUPLICATED}
    policy["replicaScheduling"] = weights(draw) if kind == "static" else fixed[kind]
    if draw(st.booleans()):
        policy["clusterAffinity"] = {"labelSelector": {"matchLabels": {"env": "prod"}}}
    if draw(st.booleans()):
        policy["clusterTolerations"] = [{"key": "cluster.karmada.io/not-ready", "operator": "Exists"}]
    if draw(st.booleans()):
        low = draw(st.integers(1, 3))
        policy["spreadConstraints"] = [{"spreadByField": "cluster", "minGroups": low,
                                        "maxGroups": draw(st.integers(low, 4))}]
    return policy


def run(policy: dict[str, Any], clusters: list[Cluster], replicas: int, uid: str = "",
        snap: Snapshot | None = None) -> list[tuple[str, int]] | str:
    rb = binding(policy, replicas=replicas, uid=uid)
    try:
        return Scheduler().schedule(rb.spec, rb.status, snap or snapshot(*clusters), NOW)
    except ScheduleError as exc:
        return f"error: {exc}"


@given(fleets(), policies(), st.integers(1, 40))
def test_divided_results_add_up_to_the_replicas(clusters: list[Cluster], policy: dict[str, Any],
                                                replicas: int) -> None:
    result = run(policy, clusters, replicas)
    if isinstance(result, str) or policy["replicaScheduling"] is DUPLICATED:
        return
    assert sum(r for _, r in result) == replicas


@given(fleets(), policies(), st.integers(0, 40))
def test_no_result_names_a_cluster_a_filter_rejects(clusters: list[Cluster], policy: dict[str, Any],
                                                    replicas: int) -> None:
    result = run(policy, clusters, replicas)
    if isinstance(result, str):
        return
    scheduler = Scheduler()
    rb = binding(policy, replicas=replicas)
    view = view_of(rb.spec, rb.status, NOW)
    for name, _ in result:
        facts = facts_of(next(c for c in clusters if c.name == name))
        assert scheduler.framework.run_filters(view, facts).is_success


@given(fleets(), policies(), st.integers(1, 40))
def test_spreading_by_cluster_never_exceeds_max_groups(clusters: list[Cluster], policy: dict[str, Any],
                                                       replicas: int) -> None:
    result = run(policy, clusters, replicas)
    spread = policy.get("spreadConstraints")
    ignored = policy["replicaScheduling"] is not DYNAMIC and "weightPreference" in policy["replicaScheduling"]
    if isinstance(result, str) or not spread or ignored:
        return
    assert len(result) <= spread[0]["maxGroups"]


@given(fleets(), policies(), st.integers(0, 40), st.sampled_from(["", "a", "b", "c"]), st.randoms())
def test_equal_input_gives_equal_results(clusters: list[Cluster], policy: dict[str, Any], replicas: int,
                                         uid: str, rnd: random.Random) -> None:
    first = run(policy, clusters, replicas, uid)
    shuffled = list(clusters)
    rnd.shuffle(shuffled)
    assert run(policy, shuffled, replicas, uid) == first
    shared = snapshot(*clusters)
    run(policy, clusters, replicas, "warm-up", snap=shared)  # an equivalent binding decided first
    assert run(policy, clusters, replicas, uid, snap=shared) == first


@given(st.lists(st.integers(0, 5), max_size=60))
def test_go_sort_sorts_and_keeps_every_element(values: list[int]) -> None:
    items = list(enumerate(values))
    go_sort(items, lambda a, b: a[1] > b[1])
    assert [v for _, v in items] == sorted(values, reverse=True)
    assert sorted(items) == list(enumerate(values))
    if len(values) <= 12:  # insertion sort: stable
        assert items == sorted(enumerate(values), key=lambda p: -p[1])
