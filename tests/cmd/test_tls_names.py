"""The names a replica asks its serving certificate to cover are checked before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetkeeper.cmd.components import MAX_TLS_SANS, host_problem
from fleetkeeper.cmd.main import app


@pytest.mark.parametrize("value", ["10.0.0.1", "::1", "lb.example.com", "*.fleet.example", "localhost"])
def test_addresses_and_dns_names_are_accepted(value: str) -> None:
    assert host_problem(value) is None


@pytest.mark.parametrize("value", ["bad_name", "-x-", "a..b", "x" * 300, "lb.example.com:6443", ""])
def test_anything_else_is_refused(value: str) -> None:
    assert host_problem(value)


@pytest.mark.parametrize(("args", "flag"), [
    (["--tls-san", "bad_name"], "--tls-san"),
    ([arg for i in range(MAX_TLS_SANS + 1) for arg in ("--tls-san", f"n{i}.example")], "--tls-san"),
    (["--advertise-address", "https://10.0.0.1"], "--advertise-address"),
], ids=["a bad name", "too many", "a URL"])
@pytest.mark.parametrize("command", ["up", "apiserver"])
def test_a_bad_name_exits_2_naming_the_flag(command: str, args: list[str], flag: str, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, [command, "--state-dir", str(tmp_path / "state"), *args],
                              env={"COLUMNS": "200"})
    assert done.exit_code == 2 and flag in done.output, done.output
    assert not (tmp_path / "state").exists()  # refused before anything was made
