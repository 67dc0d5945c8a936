"""Kubeconfig contexts: ``fleetkeeper kubeconfig`` names them after the plane, so two planes'
kubeconfigs merge side by side, and every command that connects picks one with ``--context``
from ``--kubeconfig``, ``$KUBECONFIG`` (merged) or the plane's own file and ``~/.kube/config``.

Two planes, each an API server over its own sqlite store with its identity in that store,
serve HTTPS on free loopback ports; the commands run in-process through typer's runner.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from fleetkeeper.apiserver import ApiServerApp, ServerThread, build_app, identity
from fleetkeeper.apiserver.certs import write_tls
from fleetkeeper.apiserver.credentials import StoreTokens
from fleetkeeper.apiserver.kubeconfig import write_kubeconfig
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.main import app
from fleetkeeper.store import open_store

CLOCK = SystemClock()
WIDE = {"COLUMNS": "250"}


@dataclass
class Plane:
    url: str
    kubeconfig: Path
    agent_kubeconfig: Path
    name: str


def _identity(root: Path) -> tuple[identity.Identity, str]:
    async def load() -> tuple[identity.Identity, str]:
        store = open_store(f"sqlite:///{root / 'state.db'}", clock=CLOCK)
        try:
            plane = await identity.load_identity(store, clock=CLOCK, hosts=["127.0.0.1"])
            tokens = StoreTokens(store, admin=plane.admin_token, clock=CLOCK)
            return plane, await tokens.issue("edge1")
        finally:
            await store.close()
    return asyncio.run(load())


@pytest.fixture(scope="module")
def planes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Plane]]:
    servers, made = [], []
    try:
        for index in range(2):
            root = tmp_path_factory.mktemp(f"plane{index}")
            plane, agent = _identity(root)
            tls = write_tls(root / "pki", plane.ca_cert, plane.serving)

            @asynccontextmanager
            async def factory(root: Path = root,
                              admin: str = plane.admin_token) -> AsyncIterator[ApiServerApp]:
                store = open_store(f"sqlite:///{root / 'state.db'}", clock=CLOCK)
                tokens = StoreTokens(store, admin=admin, clock=CLOCK)
                await tokens.start()
                try:
                    yield build_app(store, clock=CLOCK, tokens=tokens)
                finally:
                    await tokens.stop()
                    await store.close()

            server = ServerThread(factory, tls=tls).start()
            servers.append(server)
            admin = write_kubeconfig(root / "kubeconfig", server.url, plane.ca_cert, plane.admin_token,
                                     name=plane.name, user=f"{plane.name}-admin")
            agent_file = write_kubeconfig(root / "agent.kubeconfig", server.url, plane.ca_cert, agent)
            made.append(Plane(server.url, admin, agent_file, plane.name))
            _run(["apply", "-f", "-"], {"KUBECONFIG": str(admin)}, stdin=(
                f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: plane{index}, namespace: default}}\n"))
        yield made
    finally:
        for server in servers:
            server.stop()


def _run(args: list[str], env: dict[str, str], stdin: str | None = None) -> Any:
    done = CliRunner().invoke(app, args, input=stdin, env={**WIDE, **env})
    assert done.exit_code == 0, f"fleetkeeper {' '.join(args)} ({done.exit_code}):\n{done.output}"
    return done


def scratch(tmp_path: Path, **more: str) -> dict[str, str]:
    """An environment that never reads the user's kubeconfig or state directory."""
    return {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg"), "KUBECONFIG": "", **more}


def configmaps(env: dict[str, str], *extra: str) -> list[str]:
    out = _run(["get", "configmaps", "-o", "json", *extra], env).stdout
    return [item["metadata"]["name"] for item in yaml.safe_load(out)["items"]]


def test_two_planes_kubeconfigs_merge_side_by_side_and_context_picks_one(planes: list[Plane],
                                                                          tmp_path: Path) -> None:
    one, two = planes
    assert one.name != two.name and one.name.startswith("fleetkeeper-")
    printed = []
    for plane in planes:
        out = _run(["kubeconfig", "--kubeconfig", str(plane.kubeconfig)], scratch(tmp_path)).stdout
        doc = yaml.safe_load(out)
        assert doc["current-context"] == plane.name
        assert doc["users"][0]["name"] == f"{plane.name}-admin"
        assert doc["clusters"][0]["cluster"]["server"] == plane.url
        printed.append(tmp_path / f"{plane.name}.kubeconfig")
        printed[-1].write_text(out)
    merged = scratch(tmp_path, KUBECONFIG=f"{printed[0]}:{printed[1]}")
    assert configmaps(merged) == ["plane0"]  # the first file's current context
    assert configmaps(merged, "--context", two.name) == ["plane1"]
    unknown = CliRunner().invoke(app, ["get", "configmaps", "--context", "nope"], env={**WIDE, **merged})
    assert unknown.exit_code == 2 and "no context named 'nope'" in unknown.output


def test_without_kubeconfig_the_planes_own_file_comes_first_then_kube_config(planes: list[Plane],
                                                                              tmp_path: Path) -> None:
    one, two = planes
    env = scratch(tmp_path)
    (tmp_path / "xdg" / "fleetkeeper").mkdir(parents=True)
    (tmp_path / "xdg" / "fleetkeeper" / "kubeconfig").write_text(one.kubeconfig.read_text())
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    (tmp_path / "home" / ".kube" / "config").write_text(two.kubeconfig.read_text())
    assert configmaps(env) == ["plane0"]
    assert configmaps(env, "--context", two.name) == ["plane1"]
    (tmp_path / "xdg" / "fleetkeeper" / "kubeconfig").unlink()
    assert configmaps(env) == ["plane1"]  # ~/.kube/config alone


def test_kubeconfig_names_a_context_per_server_and_warns_of_an_uncovered_host(planes: list[Plane],
                                                                              tmp_path: Path) -> None:
    one = planes[0]
    port = one.url.rsplit(":", 1)[1]
    done = CliRunner().invoke(app, [
        "kubeconfig", "--kubeconfig", str(one.kubeconfig), "--context-name", "prod",
        "--server", one.url, "--server", f"https://localhost:{port}", "--server", "https://lb.example:443"],
        env={**WIDE, **scratch(tmp_path)})
    assert done.exit_code == 0, done.output
    assert "does not cover lb.example: start the replicas with --tls-san lb.example" in done.stderr
    doc = yaml.safe_load(done.stdout)
    assert [c["name"] for c in doc["contexts"]] == ["prod-1", "prod-2", "prod-3"]
    assert {c["context"]["user"] for c in doc["contexts"]} == {"prod-admin"}
    assert doc["current-context"] == "prod-1"
    path = tmp_path / "prod.kubeconfig"
    path.write_text(done.stdout)
    env = scratch(tmp_path, KUBECONFIG=str(path))
    assert configmaps(env, "--context", "prod-2") == ["plane0"]  # localhost: the certificate covers it


@pytest.mark.parametrize(("args", "words"), [
    (["--server", "http://127.0.0.1:1"], "must be https://HOST[:PORT]"),
    (["--server", "https://h/x"], "without a path"),
    (["--context-name", "has space"], "--context-name"),
], ids=["plain http", "a path", "a bad name"])
def test_bad_kubeconfig_input_exits_2(planes: list[Plane], tmp_path: Path, args: list[str],
                                      words: str) -> None:
    done = CliRunner().invoke(app, ["kubeconfig", "--kubeconfig", str(planes[0].kubeconfig), *args],
                              env={**WIDE, **scratch(tmp_path)})
    assert done.exit_code == 2 and words in done.output, done.output


def test_an_agent_token_may_not_print_the_planes_kubeconfig(planes: list[Plane], tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["kubeconfig", "--kubeconfig", str(planes[0].agent_kubeconfig)],
                              env={**WIDE, **scratch(tmp_path)})
    assert done.exit_code == 1 and "Forbidden" in done.output, done.output
