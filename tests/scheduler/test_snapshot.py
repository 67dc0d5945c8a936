"""Cluster facts are parsed once per cluster version, and snapshots share their memo."""

from __future__ import annotations

from fleetkeeper.scheduler.snapshot import SnapshotBuilder

from .builders import cluster


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
