"""The propagation benchmark runs the real pipeline end to end and reports what it measured
(its speed is not asserted: figures depend on the machine)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.bench_propagation import bench_propagation
from fleetkeeper.cmd.main import app


async def test_every_work_ends_applied_and_healthy_and_every_figure_is_reported(tmp_path: Path) -> None:
    result = await bench_propagation(templates=20, clusters=2, store_url=f"sqlite://{tmp_path}/bench.db",
                                     clock=SystemClock(), limit=120.0)
    assert result["benchmark"] == "propagation" and result["store"] == "sqlite"
    assert (result["templates"], result["clusters"]) == (20, 2)
    assert result["completed_templates"] == 20 and result["works"] == 40
    for key in ("seconds", "works_per_second", "setup_seconds", "cpu_seconds"):
        value = result[key]
        assert isinstance(value, float) and value >= 0, key


def test_the_command_prints_one_json_object_and_keeps_logs_off_stdout(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["bench", "propagation", "--templates", "3", "--clusters", "2",
                                   "--store", f"sqlite://{tmp_path}/cli.db"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["completed_templates"] == 3 and doc["works"] == 6
    assert "setup: 2 simulated clusters, 3 Deployments" in out.stderr
    assert "templates applied and Healthy everywhere: 3/3" in out.stderr


def test_quiet_prints_no_progress(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["bench", "propagation", "--templates", "2", "--clusters", "1", "--quiet",
                                   "--store", f"sqlite://{tmp_path}/cli.db"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["completed_templates"] == 2
    assert out.stderr == ""


def test_profile_writes_a_text_report_of_the_timed_part(tmp_path: Path) -> None:
    target = tmp_path / "propagation.txt"
    out = CliRunner().invoke(app, ["bench", "propagation", "--templates", "3", "--clusters", "2", "--quiet",
                                   "--store", f"sqlite://{tmp_path}/cli.db", "--profile", str(target)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["profile"] == str(target)
    report = target.read_text()
    assert "Recorded:" in report and "_run_once" in report
