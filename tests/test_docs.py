"""The documentation holds: every Markdown file it names exists, and its scenarios run.

* Each file of the repository that users read or run (``src/``, ``tests/``, ``docs/``,
  ``examples/``, the README, ``run``) may name a Markdown file only if the repository has
  it: as a Markdown link target, or in backticks. A name in backticks is a path from the
  repository root or from the naming file's folder.
* Each fenced YAML block of the scenario format's documentation that is a whole scenario
  (``kind: Scenario``) runs, in process, exactly as ``fleetkeeper simulate`` runs it, and
  every expectation holds; each scenario action and check has its entry in that document.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from fleetkeeper.cmd.simulate import run_file
from fleetkeeper.simulation import checks, scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_DOC = ROOT / "docs" / "scenario-format.md"
SCANNED = ("src", "tests", "docs", "examples", "README.md", "run")

#: ``[text](target)``: the target, up to an optional ``#anchor`` or title
LINK = re.compile(r"\]\(\s*<?([^)\s>#]+)")
#: a name in single or double backticks that ends in .md
BACKTICKED = re.compile(r"`+([^`\s]+?\.md)(?:#[^`\s]*)?`+")
FENCED_YAML = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def repository_files() -> list[Path]:
    """The scanned files of the checkout: tracked, or new and not ignored."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *SCANNED],
            cwd=ROOT, capture_output=True, check=True, text=True,
        ).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted({ROOT / name for name in listed if name and (ROOT / name).is_file()})


def named_markdown(text: str) -> set[str]:
    """Markdown files a text names: link targets and backticked names."""
    links = {t for t in LINK.findall(text) if t.endswith(".md") and "://" not in t}
    return links | set(BACKTICKED.findall(text))


def exists(name: str, named_in: Path) -> bool:
    return any((base / name).is_file() for base in (ROOT, named_in.parent))


def test_named_markdown_files_exist() -> None:
    missing: list[str] = []
    for path in repository_files():
        if path == Path(__file__).resolve():
            continue  # its examples of naming below are not references
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        missing += [
            f"{path.relative_to(ROOT)}: {name}" for name in sorted(named_markdown(text))
            if not exists(name, path)
        ]
    assert not missing, "files name Markdown files the repository does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("see [the format](docs/scenario-format.md#actions-do)", {"docs/scenario-format.md"}),
        ("format: `NOTES.md` of the project", {"NOTES.md"}),
        ("the Store contract (``docs/architecture.md``, Contracts)", {"docs/architecture.md"}),
        ("[Karmada](https://github.com/karmada-io/karmada/blob/master/README.md)", set()),
        ("a `.mdx` file, `README.md.j2`, `config.yaml`", set()),
    ],
    ids=["a link with an anchor", "single backticks", "double backticks", "a web link is not ours",
         "other names are not Markdown files"],
)
def test_what_counts_as_naming_a_markdown_file(text: str, names: set[str]) -> None:
    assert named_markdown(text) == names


def documented_scenarios() -> list[str]:
    blocks = FENCED_YAML.findall(SCENARIO_DOC.read_text(encoding="utf-8"))
    return [b for b in blocks if isinstance(doc := yaml.safe_load(b), dict) and doc.get("kind") == "Scenario"]


def test_the_scenario_format_has_a_whole_scenario() -> None:
    assert documented_scenarios()


@pytest.mark.parametrize("number", range(len(documented_scenarios()) if SCENARIO_DOC.is_file() else 1))
def test_documented_scenario_runs_and_holds(number: int, tmp_path: Path) -> None:
    story = tmp_path / "scenario.yaml"
    story.write_text(documented_scenarios()[number], encoding="utf-8")
    outcome = run_file(story)
    assert outcome.passed, "\n".join(f.message() for f in outcome.failures)
    assert outcome.expectations > 0


@pytest.mark.parametrize("name", [*scenario.ACTIONS, *checks.CHECKS])
def test_every_action_and_check_is_documented(name: str) -> None:
    assert f"`{name}:" in SCENARIO_DOC.read_text(encoding="utf-8")
