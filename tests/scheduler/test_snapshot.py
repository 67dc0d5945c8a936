"""Cluster facts are parsed once per cluster version, and snapshots share their memo —
across snapshots too, for entries the clusters' changes cannot affect."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.scheduler import snapshot
from fleetkeeper.scheduler.snapshot import SnapshotBuilder

from .builders import cluster, pods


def test_unchanged_clusters_keep_their_facts_between_snapshots() -> None:
    builder = SnapshotBuilder()
    a1, b1 = cluster("a"), cluster("b")
    a1.metadata.resource_version, b1.metadata.resource_version = "1", "1"
    first = builder.build([a1, b1])
    b2 = cluster("b", region="r2")
    b2.metadata.resource_version = "2"
    second = builder.build([a1, b2])
    assert second.by_name["a"] is first.by_name["a"]
    assert second.by_name["b"] is not first.by_name["b"] and second.by_name["b"].region == "r2"


def test_deleting_clusters_are_counted_but_never_candidates() -> None:
    snap = SnapshotBuilder().build([cluster("a"), cluster("b", deleting=True)])
    assert len(snap) == 2
    assert [c.name for c in snap.live] == ["a"] and snap.deleting == {"b"}


def test_the_memo_computes_once_per_key() -> None:
    snap = SnapshotBuilder().build([cluster("a")])
    calls: list[int] = []

    def compute(value: int) -> int:
        calls.append(value)
        return value

    assert snap.memo("k", lambda: compute(42)) == 42
    assert snap.memo("k", lambda: compute(43)) == 42
    assert calls == [42]


def _versioned(name: str, version: str, **kwargs: Any) -> Cluster:
    built = cluster(name, **kwargs)
    built.metadata.resource_version = version
    return built


@pytest.mark.parametrize(
    ("second", "topology_kept", "capacity_kept"),
    [
        pytest.param(
            {"summary": pods(10)}, True, True, id="a new version that changes nothing read keeps both"
        ),
        pytest.param({"summary": pods(20)}, True, False, id="new capacity keeps only what topology decides"),
        pytest.param(
            {"summary": pods(10), "labels": {"env": "prod"}}, False, False, id="new labels keep nothing"
        ),
        pytest.param(
            {"summary": pods(10), "taints": [{"key": "k", "effect": "NoSchedule"}]},
            False,
            False,
            id="a new taint keeps nothing",
        ),
    ],
)
@pytest.mark.parametrize("prepared", [False, True], ids=["parsed at build", "prepared at the event"])
def test_a_new_snapshot_keeps_the_memo_entries_its_changes_cannot_affect(
    second: dict[str, Any], topology_kept: bool, capacity_kept: bool, prepared: bool
) -> None:
    builder = SnapshotBuilder()
    first = builder.build([_versioned("a", "1", summary=pods(10)), _versioned("b", "1")])
    first.memo("verdicts", lambda: "topology", topology_only=True)
    first.memo("allocatable", lambda: "capacity")
    changed = _versioned("a", "2", **second)
    if prepared:
        builder.prepare(changed)
    later = builder.build([changed, _versioned("b", "1")])
    assert (later.memo("verdicts", lambda: "fresh", topology_only=True) == "topology") is topology_kept
    assert (later.memo("allocatable", lambda: "fresh") == "capacity") is capacity_kept


def test_a_cluster_joining_or_leaving_keeps_nothing() -> None:
    builder = SnapshotBuilder()
    builder.build([_versioned("a", "1")]).memo("verdicts", lambda: "old", topology_only=True)
    assert (
        builder.build([_versioned("a", "1"), _versioned("b", "1")]).memo(
            "verdicts", lambda: "fresh", topology_only=True
        )
        == "fresh"
    )


def test_facts_prepared_at_an_event_are_the_ones_the_next_build_uses() -> None:
    builder = SnapshotBuilder()
    builder.build([_versioned("a", "1"), _versioned("b", "1")])
    a2, b2 = _versioned("a", "2", region="r2"), _versioned("b", "2", region="r2")
    builder.prepare(a2)
    builder.prepare(_versioned("b", "2", region="stale"))  # a version the build will not see
    ready_a = builder._ready["a"]
    snap = builder.build([a2, _versioned("b", "3", region="r3")])
    assert snap.by_name["a"] is ready_a and snap.by_name["a"].region == "r2"
    assert snap.by_name["b"].region == "r3" and snap.by_name["b"].version == "3"
    assert builder._ready == {}, "prepared facts are used once"
    again = builder.build([a2, b2])
    assert again.by_name["a"] is ready_a, "an unchanged cluster keeps its facts"


def test_memo_tables_no_snapshot_keeps_are_freed_a_step_per_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "RETIRE_STEP", 4)
    builder = SnapshotBuilder()
    first = builder.build([_versioned("a", "1", summary=pods(10))])
    for index in range(6):
        first.memo(("verdict", index), lambda: "topology", topology_only=True)
        first.memo(("room", index), lambda: "capacity")
    topology, capacity = first.memos
    second = builder.build([_versioned("a", "2", summary=pods(20))])  # new capacity: topology kept
    assert second.memos[0] is topology and len(topology) == 6, "a kept table is never retired"
    assert len(capacity) == 6, "retired, not freed at once"
    builder.build([_versioned("a", "2", summary=pods(20))])
    assert len(capacity) == 2
    builder.build([_versioned("a", "3", summary=pods(20), labels={"env": "prod"})])  # retires topology
    assert (len(capacity), len(topology)) == (0, 6)
    builder.build([_versioned("a", "3", summary=pods(20), labels={"env": "prod"})])
    assert len(topology) == 2
    builder.build([_versioned("a", "3", summary=pods(20), labels={"env": "prod"})])
    assert len(topology) == 0 and builder._retired == []
