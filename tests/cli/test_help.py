"""Help, version and shell completion: what a user types before anything else.

* Every ``--help`` — the root's, each command's, each sub-command's of ``bench`` and ``token``
  — fits 80 columns and shows every flag name whole (a table that cuts
  ``--cluster-status-up…`` hides the flag the user came for), with its default.
* ``fleetkeeper --version`` prints the version, as ``fleetkeeper version`` does.
* ``fleetkeeper completion bash`` prints a script with which bash completes command names,
  sub-command names and flags, without importing every command to list them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from fleetkeeper import __version__
from fleetkeeper.cmd.main import COMMANDS, app

NARROW = {"COLUMNS": "80"}
FLEETKEEPER = Path(sys.executable).parent / "fleetkeeper"


def command_paths() -> list[tuple[str, ...]]:
    """The root, every command, and every sub-command of a command that is a group."""
    paths: list[tuple[str, ...]] = [(), ("version",), ("completion",)]
    for name, lazy in COMMANDS.items():
        paths.append((name,))
        target = lazy.load()
        if isinstance(target, typer.Typer):
            group = typer.main.get_group(target)
            paths += [(name, sub) for sub in group.commands]
    return paths


def resolved(path: tuple[str, ...]) -> Any:
    """The click command ``fleetkeeper PATH`` runs."""
    root = typer.main.get_command(app)
    command: Any = root
    context = root.make_context("fleetkeeper", [], resilient_parsing=True)
    for name in path:
        command = command.get_command(context, name)
        context = command.make_context(name, [], parent=context, resilient_parsing=True)
    return command


def flags(path: tuple[str, ...]) -> list[str]:
    command = resolved(path)
    return [flag for param in command.params if not getattr(param, "hidden", False)
            for flag in [*param.opts, *param.secondary_opts] if flag.startswith("-")]


@pytest.mark.parametrize("path", command_paths(), ids=lambda path: " ".join(["fleetkeeper", *path]))
def test_help_fits_80_columns_and_shows_every_flag_whole(path: tuple[str, ...]) -> None:
    done = CliRunner().invoke(app, [*path, "--help"], env=NARROW)
    assert done.exit_code == 0, done.output
    wide = [line for line in done.output.splitlines() if len(line) > 80]
    assert not wide, "lines wider than 80 columns:\n" + "\n".join(wide)
    cut = [flag for flag in flags(path)
           if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", done.output)]
    assert not cut, f"flags not shown whole: {cut}\n{done.output}"


def test_help_keeps_a_default_written_in_brackets_and_groups_control_plane_flags() -> None:
    done = CliRunner().invoke(app, ["up", "--help"], env=NARROW)
    assert "[default: sqlite:///STATE_DIR/state.db]" in " ".join(done.output.split()), done.output
    assert "\nControl-plane options:\n" in done.output
    control = done.output.split("\nControl-plane options:\n", 1)[1]
    assert "--cluster-failure-threshold" in control and "--state-dir" not in control


def test_a_groups_commands_are_listed_with_their_whole_summary() -> None:
    done = CliRunner().invoke(app, ["token", "--help"], env=NARROW)
    listed = done.output.split("\nCommands:\n", 1)[1]
    assert "..." not in listed and "unjoin NAME` revokes it too" in " ".join(listed.split()), done.output


@pytest.mark.parametrize("args", [["--version"], ["version"]], ids=["the flag", "the command"])
def test_version(args: list[str]) -> None:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0 and done.output == f"{__version__}\n", done.output


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_for_the_shell(shell: str) -> None:
    done = CliRunner().invoke(app, ["completion", shell])
    assert done.exit_code == 0, done.output
    assert "_FLEETKEEPER_COMPLETE" in done.output and "fleetkeeper" in done.output


def test_completion_refuses_an_unknown_shell() -> None:
    done = CliRunner().invoke(app, ["completion", "tcsh"])
    assert done.exit_code == 2 and "tcsh" in done.output


def bash_completes(line: str) -> list[str]:
    """What bash offers for ``line`` (ending where TAB is pressed) with the printed script loaded."""
    if shutil.which("bash") is None or not FLEETKEEPER.is_file():
        pytest.skip("needs bash and the fleetkeeper console script next to this interpreter")
    script = CliRunner().invoke(app, ["completion", "bash"]).output
    words = line.split(" ")
    probe = (f"{script}\nCOMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
             "_fleetkeeper_completion fleetkeeper\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {**os.environ, "PATH": f"{FLEETKEEPER.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize(("line", "expected"), [
    ("fleetkeeper de", {"delete", "demo", "describe", "detector"}),
    ("fleetkeeper bench fa", {"failover"}),
    ("fleetkeeper up --cluster-fail", {"--cluster-failure-threshold"}),
], ids=["command names", "a group's sub-commands", "a command's flags"])
def test_bash_completes(line: str, expected: set[str]) -> None:
    assert set(bash_completes(line)) == expected


def test_the_run_scripts_help_fits_80_columns() -> None:
    done = subprocess.run(["bash", str(Path(__file__).resolve().parents[2] / "run"), "help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "./run test" in done.stdout, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 80, done.stdout
