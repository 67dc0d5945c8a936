"""Control-plane Options as command-line flags: names, defaults, parsing and errors."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
import typer
from typer.testing import CliRunner

from fleetkeeper.cli.options import flag, parse, with_options
from fleetkeeper.options import Options


def test_flags_are_the_field_names_in_kebab_case() -> None:
    assert flag("cluster_monitor_grace_period") == "--cluster-monitor-grace-period"


@pytest.mark.parametrize(("values", "expected"), [
    ({"cluster_monitor_grace_period": "5s"}, {"cluster_monitor_grace_period": 5.0}),
    ({"graceful_eviction_timeout": "1m30s"}, {"graceful_eviction_timeout": 90.0}),
    ({"rate_limiter_base_delay": "250ms"}, {"rate_limiter_base_delay": 0.25}),
    ({"eviction_circuit_breaker_threshold": "0.3"}, {"eviction_circuit_breaker_threshold": 0.3}),
    ({"leader_elect": False, "concurrent_syncs": 2}, {"leader_elect": False, "concurrent_syncs": 2}),
    ({"scheduler_name": "edge", "cluster_probe_timeout": None}, {"scheduler_name": "edge"}),
], ids=["a duration in seconds", "a compound duration", "milliseconds", "a plain number",
        "a switch and a count", "a string; None keeps the default"])
def test_values_parse_into_options(values: dict[str, object], expected: dict[str, object]) -> None:
    parsed = parse(values)
    assert parsed == Options().replace(**expected)


@pytest.mark.parametrize(("values", "flag_name", "words"), [
    ({"cluster_monitor_grace_period": "5x"}, "--cluster-monitor-grace-period", "duration"),
    ({"eviction_circuit_breaker_threshold": "half"}, "--eviction-circuit-breaker-threshold", "number"),
    ({"resource_eviction_rate": "-1"}, "--resource-eviction-rate", "non-negative"),
], ids=["not a duration", "not a number", "a negative rate"])
def test_bad_values_name_the_flag(values: dict[str, object], flag_name: str, words: str) -> None:
    with pytest.raises(typer.BadParameter) as caught:
        parse(values)
    assert caught.value.param_hint == flag_name and words in caught.value.message


def _command(only: tuple[str, ...] | None = None) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_options(only=only)
    def run(name: str = "x", *, options: Options) -> None:
        typer.echo(f"{name} {options.cluster_monitor_grace_period:g} {options.leader_elect}")

    return app


def test_a_command_gets_one_flag_per_field_and_receives_options() -> None:
    runner = CliRunner()
    args = ["--name", "y", "--cluster-monitor-grace-period", "7s", "--no-leader-elect"]
    done = runner.invoke(_command(), args)
    assert done.exit_code == 0, done.output
    assert done.output.strip() == "y 7 False"
    assert runner.invoke(_command(), []).output.strip() == "x 40 True"


def test_help_lists_every_field_with_its_default() -> None:
    done = CliRunner().invoke(_command(), ["--help"], env={"COLUMNS": "250"})
    for fld in dataclasses.fields(Options):
        assert flag(fld.name) in done.output
    assert "[default: 40s]" in done.output


def test_a_bad_flag_value_exits_2_naming_the_flag() -> None:
    done = CliRunner().invoke(_command(), ["--cluster-monitor-grace-period", "soon"], env={"COLUMNS": "250"})
    assert done.exit_code == 2
    assert "--cluster-monitor-grace-period" in done.output


def test_only_keeps_the_named_fields() -> None:
    app = _command(only=("leader_elect", "cluster_monitor_grace_period"))
    done = CliRunner().invoke(app, ["--concurrent-syncs", "3"])
    assert done.exit_code == 2  # not a flag of this command


def test_a_command_without_options_parameter_is_refused() -> None:
    def broken(name: str) -> None: ...

    with pytest.raises(TypeError, match="options"):
        with_options()(broken)
    assert "options" not in inspect.signature(broken).parameters


def test_unknown_field_names_are_refused() -> None:
    with pytest.raises(ValueError, match="not Options fields"):
        with_options(only=("cluster_monitor_grace",))
