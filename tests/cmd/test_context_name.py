"""``--context-name`` names the admin kubeconfig's context, cluster and user that ``fleetkeeper up``
and ``fleetkeeper apiserver`` write; a bad name exits 2 before anything starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fleetkeeper.cmd.main import app
from fleetkeeper.store.etcd_testing import free_port

FLEETKEEPER = [sys.executable, "-m", "fleetkeeper.cmd.main"]


def test_the_apiserver_writes_its_kubeconfig_under_the_name_asked_for(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "xdg"), "KUBECONFIG": ""}
    process = subprocess.Popen([*FLEETKEEPER, "apiserver", "--store", "memory://", "--state-dir", str(state),
                                "--port", str(free_port()), "--context-name", "prod"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (state / "kubeconfig").exists():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "no kubeconfig within 60 s"
            time.sleep(0.1)
        doc = yaml.safe_load((state / "kubeconfig").read_text())
        assert doc["current-context"] == "prod"
        context = doc["contexts"][0]["context"]
        assert (context["cluster"], context["user"]) == ("prod", "prod-admin")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


@pytest.mark.parametrize("command", ["up", "apiserver"])
def test_a_bad_context_name_exits_2(command: str, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, [command, "--state-dir", str(tmp_path / "state"), "--context-name", "a b"],
                              env={"COLUMNS": "200"})
    assert done.exit_code == 2 and "--context-name" in done.output, done.output
    assert not (tmp_path / "state").exists()
