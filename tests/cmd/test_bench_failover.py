"""The failover benchmark takes a shared cluster down under real controllers and reports
each milestone (its speed is not asserted: figures depend on the machine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.bench_failover import SETTLE_LIMIT, bench_failover
from fleetkeeper.cmd.main import app

MILESTONES = ("first_evicted_ms", "all_evicted_seconds", "first_rescheduled_ms", "all_rescheduled_seconds",
              "all_applied_seconds", "detection_seconds", "setup_seconds", "settle_seconds", "cpu_seconds")


async def test_every_binding_leaves_the_failed_cluster_and_is_applied_elsewhere(tmp_path: Path) -> None:
    result = await bench_failover(bindings=50, clusters=5, store_url=f"sqlite://{tmp_path}/bench.db",
                                  clock=SystemClock(), limit=120.0)
    assert result["benchmark"] == "failover" and result["store"] == "sqlite"
    assert (result["bindings"], result["clusters"]) == (50, 5)
    assert result["healthy_before"] == 50
    assert result["evicted"] == result["rescheduled"] == result["applied"] == 50
    for key in MILESTONES:
        value = result[key]
        assert isinstance(value, float) and value >= 0, key
    assert result["settle_seconds"] < SETTLE_LIMIT, "the plane came to rest before the failure"
    first, every = result["first_rescheduled_ms"], result["all_rescheduled_seconds"]
    assert isinstance(first, float) and isinstance(every, float) and first <= every * 1000


async def test_fewer_than_three_clusters_cannot_hold_the_workloads(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least three clusters"):
        await bench_failover(bindings=1, clusters=2, store_url=f"sqlite://{tmp_path}/bench.db",
                             clock=SystemClock())


def test_the_command_prints_one_json_object(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["bench", "failover", "--bindings", "6", "--clusters", "3",
                                   "--store", f"sqlite://{tmp_path}/cli.db"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["bindings"] == 6 and doc["rescheduled"] == doc["applied"] == 6
    progress = [line.split("] ", 1)[1] for line in out.stderr.splitlines()]
    assert progress[0] == "setup: registering 3 simulated clusters"
    for line in ("setup: workloads Healthy: 6/6", "member-000 goes down", "rescheduled: 6/6", "applied: 6/6"):
        assert line in progress, out.stderr


def test_profile_writes_the_measured_phase_and_marks_the_figures(tmp_path: Path) -> None:
    target = tmp_path / "failover.html"
    out = CliRunner().invoke(app, ["bench", "failover", "--bindings", "6", "--clusters", "3", "--quiet",
                                   "--store", f"sqlite://{tmp_path}/cli.db", "--profile", str(target)])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["profile"] == str(target) and doc["applied"] == 6
    page = target.read_text()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert '"identifier": "_reconcile_one' in page  # the controllers' frames are in it


def test_a_profile_in_a_missing_directory_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["bench", "failover", "--bindings", "6", "--clusters", "3",
                                   "--store", f"sqlite://{tmp_path}/cli.db",
                                   "--profile", str(tmp_path / "missing" / "p.txt")], env={"COLUMNS": "250"})
    assert out.exit_code == 2
    assert "--profile" in out.output and "is not a directory" in out.output
    assert not (tmp_path / "cli.db").exists()


def test_with_failover_readiness_on_every_binding_still_moves(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["bench", "failover", "--bindings", "12", "--clusters", "3", "--quiet",
                                   "--failover-readiness", "--store", f"sqlite://{tmp_path}/on.db"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["evicted"] == doc["rescheduled"] == doc["applied"] == 12
