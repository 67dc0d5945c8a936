"""The API server benchmark runs end to end on a small store and reports every phase.

Figures are not asserted (no timed tests): only that each phase ran its requests."""

from __future__ import annotations

import pytest

from fleetkeeper.apiserver.bench import bench_apiserver, percentile
from fleetkeeper.clock import SystemClock


@pytest.mark.parametrize(("samples", "p", "expected"), [
    ([3.0, 1.0, 2.0], 50, 2.0), ([float(i) for i in range(1, 101)], 99, 99.0), ([5.0], 99, 5.0),
], ids=["median of three", "p99 of a hundred", "a single sample"])
def test_percentile_is_nearest_rank(samples: list[float], p: float, expected: float) -> None:
    assert percentile(samples, p) == expected


async def test_the_benchmark_measures_every_phase() -> None:
    result = await bench_apiserver(objects=120, clock=SystemClock(), requests=16)
    assert result["objects"] == 120 and result["transport"] == "https+token"
    for phase, count in (("list", 5), ("get", 16), ("create", 16), ("patch", 16), ("watch_delivery", 16)):
        figures = result[phase]
        assert isinstance(figures, dict) and figures["count"] == count, phase
        assert 0 <= figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"], phase
    verdicts = result["meets_targets"]
    assert isinstance(verdicts, dict) and set(verdicts) == {"mutating_p99", "list", "watch_delivery_p99"}


async def test_the_rbac_benchmark_authorizes_with_every_binding_stored() -> None:
    from fleetkeeper.apiserver.bench_rbac import bench_rbac

    result = await bench_rbac(bindings=50, requests=20, clock=SystemClock())
    assert result["bindings_stored"] == 52, "and the default bindings: cluster-admin, the agents'"
    assert {"first", "again", "denied", "meets_target"} <= set(result)
