"""``fleetkeeper bench readiness`` runs a real full pass over the generated fleet (figures are
not asserted: performance is measured by the benchmark, never by a timed test)."""

from __future__ import annotations

from typer.testing import CliRunner

from fleetkeeper.cmd.bench import app
from fleetkeeper.readiness.bench import bench_readiness


def test_a_small_pass_reports_its_figures_and_classes() -> None:
    result = bench_readiness(clusters=8, bindings=120, seed=3)
    assert {"seconds", "bindings_per_second", "classes", "bindings", "clusters", "at_risk"} <= set(result)
    assert result["clusters"] == 8
    assert isinstance(result["bindings"], int) and 100 <= result["bindings"] <= 120
    assert isinstance(result["classes"], int) and 0 < result["classes"] <= result["bindings"]


def test_the_command_prints_one_json_line() -> None:
    import json

    done = CliRunner().invoke(app, ["readiness", "--clusters", "4", "--bindings", "20"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["benchmark"] == "readiness"
