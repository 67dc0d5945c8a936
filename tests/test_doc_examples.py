"""Every shell and YAML example of the README and of the user documentation runs.

A fenced block's info string says how its example is checked:

* ``sh`` — run by bash (``-euo pipefail``) in a scratch directory holding the repository's
  ``examples/`` and ``samples/`` and the page's ``yaml file=NAME`` blocks, with the project's
  ``fleetkeeper`` and ``kubectl`` first on ``PATH`` and ``HOME`` in the scratch directory;
* ``sh up`` — the one ``fleetkeeper up`` the documentation starts: the test starts it so (on a
  free port), and ``sh plane`` blocks then run against it, every page's in order, as one script
  (so an ``export`` holds for the blocks after it);
* ``sh tested-in=PATH[,PATH]`` — too long or too big to run here (the test suite itself, a
  benchmark, several processes): the named tests run it, and they must exist;
* ``yaml`` — a whole scenario (``kind: Scenario``; :mod:`tests.test_docs` runs those),
  ``yaml file=NAME`` — a file the page's shell examples use (it must parse), or ``yaml step`` — a
  scenario step, checked by adding it to the page's first whole scenario and loading that;
* ``console`` — a transcript, commands with their output; ``console tested-in=PATH[,PATH]`` names
  the tests that replay it.

Output (``text``, ``json`` or a bare fence) is not an example. The pages checked are :data:`PAGES`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper.simulation import scenario

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/concepts.md", "docs/cli.md", "docs/scenario-format.md", "docs/operations.md",
         "docs/ha.md", "docs/rbac.md", "docs/api.md", "docs/monitoring.md", "docs/whatif.md",
         "docs/members.md", "docs/dashboard.md", "docs/benchmarks.md", "docs/architecture.md")
#: what a scratch directory holds of the repository
LINKED = ("examples", "samples")
BIN = Path(sys.prefix) / "bin"
FENCE = re.compile(r"^```([\w-]*)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
SHELL = frozenset({"sh", "bash", "shell"})
MARKS = {"sh": frozenset({"up", "plane", "tested-in"}), "yaml": frozenset({"file", "step"}),
         "console": frozenset({"tested-in"})}
#: bound on one offline example, on the plane starting, and on all the plane examples together
OFFLINE, START, PLANE = 120.0, 60.0, 300.0


@dataclass(frozen=True)
class Example:
    """One fenced example: where it is, its language, the marks of its info string, its text."""

    page: str
    line: int
    language: str
    marks: dict[str, str] = field(hash=False)
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def examples(page: str) -> list[Example]:
    """The shell, YAML and console blocks of ``page``."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        language = ("sh" if match.group(1) in SHELL else "yaml" if match.group(1) in ("yaml", "yml")
                    else match.group(1) if match.group(1) == "console" else "")
        if language:
            marks = dict(word.partition("=")[::2] for word in match.group(2).split())
            line = text.count("\n", 0, match.start()) + 1
            found.append(Example(page, line, language, marks, match.group(3)))
    return found


def all_examples() -> list[Example]:
    return [example for page in PAGES if (ROOT / page).is_file() for example in examples(page)]


def offline() -> list[Example]:
    return [e for e in all_examples() if e.language == "sh" and not e.marks]


def plane_examples() -> list[Example]:
    return [e for e in all_examples() if "plane" in e.marks]


def environment(scratch: Path) -> dict[str, str]:
    """What an example runs with: the project's commands first, a home of its own, no kubeconfig."""
    if not (BIN / "fleetkeeper").exists():
        pytest.skip(f"{BIN / 'fleetkeeper'} missing: the project is not installed in this environment")
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    unset = ("KUBECONFIG", "XDG_STATE_HOME", "XDG_CONFIG_HOME")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return {**env, "HOME": str(home), "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "COLUMNS": "100",
            "PYTHONUNBUFFERED": "1"}


def scratch_dir(tmp_path: Path, page: str) -> Path:
    """A working directory with the repository's examples and samples and the page's files."""
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    for example in examples(page):
        if "file" in example.marks:
            (tmp_path / example.marks["file"]).write_text(example.text, encoding="utf-8")
    return tmp_path


def bash(script: str, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


# --------------------------------------------------------------------------- every example is checked


def test_the_pages_have_examples() -> None:
    assert {e.page for e in all_examples()} >= {"README.md", "docs/cli.md", "docs/concepts.md"}
    assert [e for e in all_examples() if "up" in e.marks] and plane_examples() and offline()


@pytest.mark.parametrize("example", all_examples(), ids=lambda e: e.where)
def test_each_example_says_how_it_is_checked(example: Example) -> None:
    unknown = set(example.marks) - MARKS[example.language]
    assert not unknown, f"{example.where}: unknown marks {sorted(unknown)}"
    for path in filter(None, example.marks.get("tested-in", "").split(",")):
        assert (ROOT / path).is_file(), f"{example.where}: tested-in names {path}, which does not exist"
    if example.language == "yaml" and not example.marks:
        doc = yaml.safe_load(example.text)
        assert isinstance(doc, dict) and doc.get("kind") == "Scenario", (
            f"{example.where}: a YAML example is a whole scenario, or marked file=NAME or step")
    if example.language == "yaml" and "file" in example.marks:
        assert list(yaml.safe_load_all(example.text)), f"{example.where}: the file is empty"


def test_one_plane_is_started_and_only_by_fleetkeeper_up() -> None:
    ups = [e for e in all_examples() if "up" in e.marks]
    assert len(ups) == 1, [e.where for e in ups]
    assert up_command(ups[0])[:2] == ["fleetkeeper", "up"]


@pytest.mark.parametrize("example", [e for e in all_examples() if "step" in e.marks], ids=lambda e: e.where)
def test_a_documented_step_loads_in_the_pages_scenario(example: Example) -> None:
    whole = next(yaml.safe_load(e.text) for e in examples(example.page)
                 if e.language == "yaml" and not e.marks)
    steps = whole["spec"]["timeline"]
    steps.append({"at": steps[-1]["at"], **yaml.safe_load(example.text)})
    assert scenario.parse(whole).timeline


# --------------------------------------------------------------------------- offline examples


@pytest.mark.parametrize("example", offline(), ids=lambda e: e.where)
def test_offline_example_runs(example: Example, tmp_path: Path) -> None:
    cwd = scratch_dir(tmp_path, example.page)
    done = bash(example.text, cwd, environment(cwd), OFFLINE)
    assert done.returncode == 0, f"{example.where} failed:\n{example.text}\n{done.stdout}\n{done.stderr}"


# --------------------------------------------------------------------------- examples on a running plane


def up_command(example: Example) -> list[str]:
    lines = [line for line in example.text.splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) == 1, f"{example.where}: one command starts the plane"
    return shlex.split(lines[0], comments=True)


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """``fleetkeeper up`` as the documentation starts it, on a free port; stopped afterwards."""
    if not (BIN / "kubectl").exists():
        pytest.skip(f"{BIN / 'kubectl'} missing: ./run test installs it")
    if shutil.which("jq") is None:
        pytest.skip("jq missing: ./run test installs it (Debian package jq)")
    cwd = scratch_dir(tmp_path, "README.md")
    env = environment(cwd)
    up = next(e for e in all_examples() if "up" in e.marks)
    args = [sys.executable, "-m", "fleetkeeper.cmd.main", *up_command(up)[1:], "--port", "0"]
    out = cwd / "up.out"
    with out.open("wb") as sink:
        process = subprocess.Popen(args, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START
        while "Ready in" not in out.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, f"fleetkeeper up exited:\n{out.read_text()}"
            time.sleep(0.2)
        assert "Ready in" in out.read_text(), f"fleetkeeper up did not get ready:\n{out.read_text()}"
        yield cwd, env
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def test_plane_examples_run_in_order(plane: tuple[Path, dict[str, str]]) -> None:
    cwd, env = plane
    for page in PAGES:
        for example in examples(page) if (ROOT / page).is_file() else []:
            if "file" in example.marks:
                (cwd / example.marks["file"]).write_text(example.text, encoding="utf-8")
    script = "\n".join(f"echo '>>> {e.where}' >&2\n{e.text}" for e in plane_examples())
    done = bash(script, cwd, env, PLANE)
    last = re.findall(r">>> (\S+)", done.stderr)
    assert done.returncode == 0, (f"the example at {last[-1] if last else '?'} failed:\n"
                                  f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


def test_what_counts_as_an_example() -> None:
    page: dict[str, Any] = {}
    text = "```sh tested-in=a,b\nx\n```\n```text\nout\n```\n```yaml file=c.yaml\nk: v\n```\n"
    for match in FENCE.finditer(text):
        page[match.group(1)] = dict(word.partition("=")[::2] for word in match.group(2).split())
    assert page == {"sh": {"tested-in": "a,b"}, "text": {}, "yaml": {"file": "c.yaml"}}
