"""docs/whatif.md's offline example runs as shown: its two files, the command, the table and
the exit code, and the JSON shape it documents."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from fleetkeeper.cli.whatif import whatif

DOC = Path(__file__).resolve().parents[2] / "docs" / "whatif.md"
FENCED = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMAND = "$ fleetkeeper whatif --down member1 -f clusters.yaml -f apps.yaml"

app = typer.Typer()
app.command()(whatif)


def blocks() -> list[tuple[str, str]]:
    return FENCED.findall(DOC.read_text())


def run_example(tmp_path: Path, *args: str) -> Any:
    for lang, body in blocks():
        first = body.splitlines()[0]
        if lang == "yaml" and first.startswith("# ") and first.endswith(".yaml"):
            (tmp_path / first[2:]).write_text(body)
    files = ["-f", str(tmp_path / "clusters.yaml"), "-f", str(tmp_path / "apps.yaml")]
    return CliRunner().invoke(app, ["--down", "member1", *files, *args])


def test_the_table_and_exit_code_are_as_shown(tmp_path: Path) -> None:
    [shown] = [body for _, body in blocks() if body.startswith(COMMAND)]
    lines = shown.splitlines()
    expected_code = int(lines[lines.index("$ echo $?") + 1])
    table = lines[1:lines.index("$ echo $?")]
    result = run_example(tmp_path)
    assert result.exit_code == expected_code
    assert [line.split() for line in result.stdout.splitlines()] == [
        line.split() for line in table]


def test_the_json_is_as_shown(tmp_path: Path) -> None:
    [shown] = [body for lang, body in blocks() if lang == "json"]
    result = run_example(tmp_path, "-o", "json")
    assert json.loads(result.stdout) == json.loads(shown)


def test_the_matrix_is_as_shown(tmp_path: Path) -> None:
    command = "$ fleetkeeper whatif --each cluster -f clusters.yaml -f apps.yaml"
    [shown] = [body for _, body in blocks() if body.startswith(command)]
    run_example(tmp_path)
    files = ["-f", str(tmp_path / "clusters.yaml"), "-f", str(tmp_path / "apps.yaml")]
    result = CliRunner().invoke(app, ["--each", "cluster", *files])
    assert result.exit_code == 3
    assert [line.split() for line in result.stdout.splitlines()] == [
        line.split() for line in shown.splitlines()[1:]]
