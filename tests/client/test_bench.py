"""The client write benchmark times real typed writes and reports them (its speed is not asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.client.bench import bench_client_updates
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import SystemClock, VirtualClock
from fleetkeeper.cmd.main import app
from fleetkeeper.store import open_store


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_every_binding_is_written_once_through_admission_and_reaches_the_watch(
    tmp_path: Path, backend: str
) -> None:
    url = "memory://" if backend == "memory" else f"sqlite://{tmp_path}/bench.db"
    clock = SystemClock()
    store = open_store(url, clock=clock)
    try:
        result = await bench_client_updates(store, clock, "writes", 12)
        assert result["client_objects"] == 12
        rate, cost = result["client_updates_per_second"], result["client_update_us"]
        assert isinstance(rate, float) and isinstance(cost, float) and rate > 0 and cost > 0
        bindings = (await LocalClient(store, clock=clock).list(ResourceBinding, "writes")).items
        assert len(bindings) == 12
        for binding in bindings:  # one replica moved, once; admission kept the generation honest
            targets = [(t.name, t.replicas) for t in binding.spec.clusters or ()]
            assert targets == [("member1", 1), ("member2", 2)]
            assert binding.metadata.generation == 2
    finally:
        await store.close()


async def test_under_a_virtual_clock_no_rate_is_made_up() -> None:
    clock = VirtualClock()
    store = open_store("memory://", clock=clock)
    try:
        result = await bench_client_updates(store, clock, "writes", 3)
    finally:
        await store.close()
    assert result["client_updates_per_second"] is None and result["client_update_us"] is None


def test_bench_store_reports_the_cost_of_one_typed_write(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["bench", "store", "--store", f"sqlite://{tmp_path}/cli.db",
                                   "--objects", "30", "--watchers", "2", "--batch", "5"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["objects"] == 30 and doc["client_objects"] == 30
    assert doc["client_update_us"] > 0 and doc["updates_per_second"] > 0
