"""The store benchmark runs end to end and reports every figure (its speed is not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetkeeper.clock import SystemClock
from fleetkeeper.store.bench import bench_store, binding


@pytest.mark.parametrize("backend", ["memory", "sqlite"], ids=["on memory", "on sqlite"])
async def test_the_benchmark_reports_rates_and_fanout_latency(tmp_path: Path, backend: str) -> None:
    url = "memory://" if backend == "memory" else f"sqlite://{tmp_path}/bench.db"
    result = await bench_store(url, clock=SystemClock(), objects=40, watchers=3, batch=7)
    assert result["backend"] == backend and result["objects"] == 40
    for key in ("creates_per_second", "updates_per_second", "creates_per_second_unbatched",
                "updates_per_second_unbatched", "loaded_updates_per_second", "events_delivered_per_second"):
        value = result[key]
        assert isinstance(value, float) and value > 0, key
    assert result["watch_samples"] == 40 * 3
    p50, p99, top = result["watch_p50_ms"], result["watch_p99_ms"], result["watch_max_ms"]
    assert isinstance(p50, float) and isinstance(p99, float) and isinstance(top, float)
    assert 0 <= p50 <= p99 <= top


async def test_a_second_run_on_the_same_file_uses_fresh_names(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/bench.db"
    await bench_store(url, clock=SystemClock(), objects=5, watchers=1, batch=2)
    again = await bench_store(url, clock=SystemClock(), objects=5, watchers=1, batch=2)
    assert again["watch_samples"] == 5


def test_benchmark_objects_are_about_a_kilobyte_of_binding() -> None:
    obj = binding("ns", 1)
    assert obj["kind"] == "ResourceBinding" and obj["spec"]["clusters"]
