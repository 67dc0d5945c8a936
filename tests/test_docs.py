"""The documentation holds: every file it names exists, and its scenarios run.

* Each file of the repository that users read or run (``src/``, ``tests/``, ``docs/``,
  ``examples/``, ``samples/``, the README, ``run``) and every ``--help`` may name a Markdown
  file only if the repository has it: as a Markdown link target or in backticks, and — in
  what users read (the README, ``docs/``, ``run``, the help, the messages of ``src/``) — bare
  too. A name is a path from the repository root or from the naming file's folder. The README,
  the pages of ``docs/``, ``run`` and the help name paths of the repository (``examples/…``,
  ``samples/…``, ``tests/…``) only if they exist, and nothing names notes kept outside it.
* Each fenced YAML block of the scenario format's documentation that is a whole scenario
  (``kind: Scenario``) runs, in process, exactly as ``fleetkeeper simulate`` runs it, and
  every expectation holds; each scenario action and check has its entry in that document.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import typer
import typer.main
import yaml

from fleetkeeper.cmd.simulate import run_file
from fleetkeeper.simulation import checks, scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_DOC = ROOT / "docs" / "scenario-format.md"
SCANNED = ("src", "tests", "docs", "examples", "samples", "README.md", "run")
#: what users read first: their repository paths must exist too
USER_FACING = ("docs", "README.md", "run")

#: ``[text](target)``: the target, up to an optional ``#anchor`` or title
LINK = re.compile(r"\]\(\s*<?([^)\s>#]+)")
#: a name in single or double backticks that ends in .md
BACKTICKED = re.compile(r"`+([^`\s]+?\.md)(?:#[^`\s]*)?`+")
#: a bare name ending in .md (web addresses are taken out first)
BARE = re.compile(r"(?<![\w./-])((?:\.\./|/)?\w[\w./-]*\.md)(?![\w-]|\.\w)")
WEB = re.compile(r"\w+://\S+")
#: a path into the repository's own folders
REPO_PATH = re.compile(r"(?<![\w./~$-])((?:src|tests|docs|examples|samples|\.ci)/[\w./-]*[\w/])")
#: where internal notes live, which a user of the repository does not have
OUTSIDE = ("../shared", "/work/shared")
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


def named_markdown(text: str, *, bare: bool = True) -> set[str]:
    """Markdown files a text names: link targets, backticked names and (``bare``) bare names."""
    links = {t for t in LINK.findall(text) if t.endswith(".md") and "://" not in t}
    return links | set(BACKTICKED.findall(text)) | (set(BARE.findall(WEB.sub(" ", text))) if bare else set())


def exists(name: str, named_in: Path) -> bool:
    return any((base / name).is_file() for base in (ROOT, named_in.parent))


def help_texts() -> dict[str, str]:
    """``fleetkeeper … --help`` of the root and of every command and sub-command."""
    from typer.testing import CliRunner

    from fleetkeeper.cmd.main import COMMANDS, app

    paths: list[list[str]] = [[], ["version"], ["completion"]]
    for name, lazy in COMMANDS.items():
        target = lazy.load()
        paths.append([name])
        if isinstance(target, typer.Typer):
            paths += [[name, sub] for sub in typer.main.get_group(target).commands]
    return {" ".join(["fleetkeeper", *p, "--help"]): CliRunner().invoke(app, [*p, "--help"]).output
            for p in paths}


def problems_naming_files(text: str, named_in: Path, *, user_facing: bool, bare: bool = True) -> list[str]:
    """What ``text`` names that the repository does not have (bare Markdown names too with ``bare``)."""
    missing = [name for name in sorted(named_markdown(text, bare=bare)) if not exists(name, named_in)]
    missing += [place for place in OUTSIDE if place in text]
    if user_facing:
        missing += [p for p in sorted(set(REPO_PATH.findall(WEB.sub(" ", text))))
                    if not (ROOT / p.rstrip("/")).exists()]
    return missing


def test_named_markdown_files_exist() -> None:
    missing: list[str] = []
    for path in repository_files():
        if path == Path(__file__).resolve():
            continue  # its examples of naming below are not references
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        top = path.relative_to(ROOT).parts[0]
        missing += [f"{path.relative_to(ROOT)}: {name}" for name in problems_naming_files(
            text, path, user_facing=top in USER_FACING, bare=top in (*USER_FACING, "src"))]
    assert not missing, "files name files the repository does not have:\n" + "\n".join(missing)


def test_help_names_only_files_the_repository_has() -> None:
    missing = [f"{command}: {name}" for command, text in help_texts().items()
               for name in problems_naming_files(text, ROOT / "README.md", user_facing=True)]
    assert not missing, "help names files the repository does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("see [the format](docs/scenario-format.md#actions-do)", {"docs/scenario-format.md"}),
        ("format: `NOTES.md` of the project", {"NOTES.md"}),
        ("the Store contract (``docs/architecture.md``, Contracts)", {"docs/architecture.md"}),
        ("[Karmada](https://github.com/karmada-io/karmada/blob/master/README.md)", set()),
        ("a `.mdx` file, `README.md.j2`, `config.yaml`", set()),
        ("the format: SCENARIO-FORMAT.md, and ../shared/DESIGN.md.",
         {"SCENARIO-FORMAT.md", "../shared/DESIGN.md"}),
        ("see https://karmada.io/docs/README.md for more", set()),
    ],
    ids=["a link with an anchor", "single backticks", "double backticks", "a web link is not ours",
         "other names are not Markdown files", "bare names", "a bare web address is not ours"],
)
def test_what_counts_as_naming_a_markdown_file(text: str, names: set[str]) -> None:
    assert named_markdown(text) == names


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("see DESIGN.md", ["DESIGN.md"]),
        ("notes in ../shared", ["../shared"]),
        ("`examples/seed-blog-member1-down.yaml` and examples/none.yaml", ["examples/none.yaml"]),
        ("kubectl apply -f samples/nginx/ (docs/cli.md)", []),
        ("~/docs/x.yaml and $HOME/tests/y, https://github.com/karmada-io/karmada/tree/master/samples/x", []),
    ],
    ids=["a Markdown file it lacks", "notes outside", "a path it lacks", "paths it has", "not its paths"],
)
def test_what_counts_as_naming_a_missing_file(text: str, problems: list[str]) -> None:
    assert problems_naming_files(text, ROOT / "README.md", user_facing=True) == problems


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


#: ``[text](page.md#anchor)`` or ``[text](#anchor)``: the page (maybe none) and the anchor
ANCHORED = re.compile(r"\]\(\s*([^)\s#]*\.md|)#([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {slug(h) for h in re.findall(r"^#{1,6}\s+(.+)$", text, flags=re.MULTILINE)}


def test_links_to_a_section_find_it() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target, anchor in ANCHORED.findall(page.read_text(encoding="utf-8")):
            linked = (page.parent / target) if target else page
            if linked.is_file() and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target}#{anchor}")
    assert not broken, "links to sections that do not exist:\n" + "\n".join(broken)


def test_a_headings_anchor() -> None:
    assert slug("What-ifs, offline") == "what-ifs-offline"
    assert slug("Running `fleetkeeper up`") == "running-fleetkeeper-up"


def test_the_cli_page_tells_every_command() -> None:
    from fleetkeeper.cmd.main import app

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    root = typer.main.get_command(app)
    commands = root.list_commands(root.make_context("fleetkeeper", [], resilient_parsing=True))  # type: ignore[attr-defined]
    untold = [name for name in commands if f"`{name}`" not in text and f"fleetkeeper {name}" not in text]
    assert not untold, f"docs/cli.md does not tell these commands: {untold}"


def test_the_architecture_page_places_every_package() -> None:
    """Its package layering names each package (``api/``), and each package inside one by its path
    (``api/printing``) or by its name (the interpreter's ``native`` rules)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text.split("## Package layering", 1)[1].split("```")[1]
    source = ROOT / "src" / "fleetkeeper"
    unplaced = []
    for init in sorted(source.glob("*/**/__init__.py")):
        package = init.parent.relative_to(source).as_posix()
        parent, _, name = package.rpartition("/")
        placed = f"{package}/" in tree if not parent else package in tree or re.search(rf"\b{name}\b", tree)
        if not placed:
            unplaced.append(package)
    assert not unplaced, f"docs/architecture.md's package layering does not place: {unplaced}"
