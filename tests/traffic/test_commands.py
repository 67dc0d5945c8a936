"""``fleetkeeper traffic``, ``fault`` and ``detector``: bad input is a usage error naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetkeeper.cmd.main import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(["traffic", "--provider", "nginx"], "--provider", id="an unknown provider"),
        pytest.param(["traffic", "--listen", "nowhere"], "--listen", id="a listen address without a port"),
        pytest.param(["traffic", "--provider", "haproxy", "--listen", "127.0.0.1:0"], "fixed port",
                     id="haproxy on any port"),
        pytest.param(["fault", "clusterExplode", "member1"], "unknown action", id="an unknown fault"),
        pytest.param(["fault", "agentDown", "member1"], "fleetkeeper agent", id="an agent fault"),
        pytest.param(["fault", "setNodes", "member1"], "--nodes N", id="setNodes without a count"),
        pytest.param(["fault", "setNodes", "member1", "--nodes", "5000"], "0 to 1000",
                     id="setNodes with too many"),
        pytest.param(["fault", "setNodes", "member1", "--nodes", "-1"], "0 to 1000",
                     id="setNodes below zero"),
        pytest.param(["fault", "clusterDown", "member1", "--nodes", "2"], "only setNodes",
                     id="a node count for another fault"),
        pytest.param(["fault", "crashWorkload", "member1"], "KIND/NAME", id="a crash without a workload"),
        pytest.param(["fault", "crashWorkload", "member1", "nginx"], "expected KIND/NAME",
                     id="a workload without a kind"),
        pytest.param(["fault", "healWorkload", "member1", "service/nginx"], "not a workload kind with pods",
                     id="a kind without pods"),
        pytest.param(["fault", "clusterDown", "member1", "deployment/nginx"], "only crashWorkload",
                     id="a workload for another fault"),
    ],
)
def test_bad_input_exits_2(args: list[str], says: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert says in result.output


def test_the_detector_rejects_a_bad_duration(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text("{}")
    result = runner.invoke(app, ["detector", "--karmada-kubeconfig", str(config), "--kubeconfig", str(config),
                                 "--cluster-name", "member1", "--detect-period", "soon"])
    assert result.exit_code == 2
    assert "--detect-period" in result.output
