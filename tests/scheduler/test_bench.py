"""The benchmark runs the real core over a generated fleet (figures are not asserted:
performance is measured by ``fleetkeeper bench``, never by a timed test)."""

from __future__ import annotations

import random

from fleetkeeper.scheduler.bench import bench_scheduler, fleet, placements


def test_a_small_benchmark_schedules_every_binding_and_reports_its_figures() -> None:
    result = bench_scheduler(bindings=300, clusters=12, seed=3)
    assert {"bindings", "clusters", "seconds", "per_second", "p99_ms", "p50_ms", "outcomes"} <= set(result)
    assert (result["bindings"], result["clusters"]) == (300, 12)
    outcomes = result["outcomes"]
    assert isinstance(outcomes, dict) and sum(outcomes.values()) == 300 and outcomes["scheduled"] > 250


def test_the_generated_fleet_and_policies_follow_the_seed() -> None:
    first = fleet(20, random.Random(7)), placements(fleet(20, random.Random(7)), random.Random(8))
    again = fleet(20, random.Random(7)), placements(fleet(20, random.Random(7)), random.Random(8))
    assert [c.to_dict() for c in first[0]] == [c.to_dict() for c in again[0]]
    assert first[1] == again[1]
    kinds = {p["replicaScheduling"].get("replicaDivisionPreference",
                                        p["replicaScheduling"]["replicaSchedulingType"])
             for p in first[1]}
    assert kinds == {"Weighted", "Duplicated", "Aggregated"}
