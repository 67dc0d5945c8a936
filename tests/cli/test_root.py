"""The root command: every sub-command is registered, listed from its own help, and loaded lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from fleetkeeper.cmd.main import COMMANDS, app, load_command

WIDE = {"COLUMNS": "250"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_help_line_is_the_commands_own(name: str) -> None:
    target = COMMANDS[name].load()
    own = target.info.help if isinstance(target, typer.Typer) else (target.__doc__ or "")
    assert isinstance(own, str)
    assert own.strip().splitlines()[0] == COMMANDS[name].help
    assert load_command(name).name == name


def test_root_help_lists_every_command_in_order() -> None:
    done = CliRunner().invoke(app, ["--help"], env=WIDE)
    assert done.exit_code == 0, done.output
    positions = [done.output.find(f"\n  {name} ") for name in [*COMMANDS, "version", "completion"]]
    assert -1 not in positions, done.output
    assert positions == sorted(positions)


def _run_fresh(*invocations: list[str], loaded: tuple[str, ...]) -> str:
    """Run ``fleetkeeper`` with each argument list in a fresh interpreter; its output, then
    ``HEAVY [...]``: the modules starting with one of ``loaded`` that got imported."""
    probe = (
        "import sys\n"
        "from fleetkeeper.cmd.main import app\n"
        f"for args in {list(invocations)!r}:\n"
        "    try:\n"
        "        app(args)\n"
        "    except SystemExit as exit:\n"
        "        assert exit.code in (0, None), exit.code\n"
        f"heavy = sorted(m for m in sys.modules if m.startswith({loaded!r})\n"
        "               and m != 'fleetkeeper.cmd.main')\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_root_help_and_version_import_no_command_module() -> None:
    """Start-up stays light: listing commands loads none of them, nor the API models."""
    heavy = ("fleetkeeper.cli.", "fleetkeeper.api", "fleetkeeper.apiserver", "fleetkeeper.members",
             "fleetkeeper.cmd.")
    out = _run_fresh(["--help"], ["version"], ["--version"], loaded=heavy)
    assert "HEAVY []" in out, out


def test_simulate_help_loads_neither_the_control_plane_nor_the_api_models() -> None:
    """The scenario command's help comes without the plane it runs: the imports wait for a run."""
    out = _run_fresh(["simulate", "--help"], loaded=(
        "fleetkeeper.api", "fleetkeeper.cmd.app", "fleetkeeper.simulation", "fleetkeeper.controllers"))
    assert "Usage: " in out and "--timeline" in out, out
    assert "HEAVY []" in out, out


def test_a_command_runs_and_an_unknown_one_is_refused() -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["schedule", "--help"], env=WIDE)
    assert done.exit_code == 0 and "Usage: fleetkeeper schedule" in done.output, done.output
    unknown = runner.invoke(app, ["frobnicate"], env=WIDE)
    assert unknown.exit_code == 2 and "No such command 'frobnicate'" in unknown.output
