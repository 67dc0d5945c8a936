"""Where state lives and which kubeconfig a command picks (pure, over given environments)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetkeeper.cli.paths import NoKubeconfig, default_state_dir, resolve_kubeconfig


@pytest.mark.parametrize(("env", "expected"), [
    ({"XDG_STATE_HOME": "/xdg/state", "HOME": "/home/u"}, "/xdg/state/fleetkeeper"),
    ({"HOME": "/home/u"}, "/home/u/.local/state/fleetkeeper"),
    ({"XDG_STATE_HOME": "relative/dir", "HOME": "/home/u"}, "/home/u/.local/state/fleetkeeper"),
    ({"XDG_STATE_HOME": "  ", "HOME": "/home/u"}, "/home/u/.local/state/fleetkeeper"),
], ids=["XDG_STATE_HOME wins", "else ~/.local/state", "a relative XDG_STATE_HOME is ignored (XDG rules)",
        "a blank XDG_STATE_HOME is ignored"])
def test_the_default_state_directory_follows_xdg(env: dict[str, str], expected: str) -> None:
    assert default_state_dir(env) == Path(expected)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("explicit", "env1", "env2")}
    for path in paths.values():
        path.write_text("kind: Config\n")
    state = tmp_path / "state" / "fleetkeeper"
    state.mkdir(parents=True)
    (state / "kubeconfig").write_text("kind: Config\n")
    paths["state"] = state / "kubeconfig"
    paths["xdg"] = tmp_path / "state"
    return paths


def test_an_explicit_kubeconfig_wins(files: dict[str, Path]) -> None:
    env = {"KUBECONFIG": str(files["env1"]), "XDG_STATE_HOME": str(files["xdg"])}
    assert resolve_kubeconfig(files["explicit"], env) == files["explicit"]


def test_the_first_existing_file_of_kubeconfig_comes_next(files: dict[str, Path]) -> None:
    missing = files["xdg"] / "missing"
    env = {"KUBECONFIG": f"{missing}:{files['env2']}:{files['env1']}", "XDG_STATE_HOME": str(files["xdg"])}
    assert resolve_kubeconfig(None, env) == files["env2"]


def test_the_state_directory_kubeconfig_is_the_fallback(files: dict[str, Path]) -> None:
    assert resolve_kubeconfig(None, {"XDG_STATE_HOME": str(files["xdg"])}) == files["state"]


def test_nothing_found_says_where_it_looked_and_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NoKubeconfig) as caught:
        resolve_kubeconfig(None, {"KUBECONFIG": str(tmp_path / "nope"), "XDG_STATE_HOME": str(tmp_path)})
    message = str(caught.value)
    assert str(tmp_path / "nope") in message and str(tmp_path / "fleetkeeper" / "kubeconfig") in message
    assert "--kubeconfig" in message and "fleetkeeper up" in message


def test_a_missing_explicit_kubeconfig_is_named(tmp_path: Path) -> None:
    with pytest.raises(NoKubeconfig, match=r"--kubeconfig .*no such file"):
        resolve_kubeconfig(tmp_path / "absent", {})
