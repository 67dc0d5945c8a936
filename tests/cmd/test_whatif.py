"""``fleetkeeper whatif --simulate``: what it refuses before it connects (the simulated run itself is
checked against a running plane in tests/e2e/test_whatif.py and on a snapshot in
tests/readiness/test_replay.py); without the flag the command is the what-if."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fleetkeeper.cmd.main import app


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--simulate", "-f", "fleet.yaml"], "--simulate reads the running plane", id="offline"),
    pytest.param(["--simulate", "--each", "cluster"], "--simulate reads the running plane", id="each"),
    pytest.param(["--simulate", "--horizon", "0s"], "--horizon: must be more than 0", id="no time"),
    pytest.param(["--simulate", "--horizon", "2d"], "--horizon", id="not a duration"),
    pytest.param(["--simulate", "-o", "xml"], "--output", id="output"),
])
def test_bad_use_exits_2(args: list[str], message: str) -> None:
    done = CliRunner().invoke(app, ["whatif", "--down", "member1", *args])
    assert done.exit_code == 2, done.output
    assert message in done.output


def test_without_simulate_it_is_the_what_if() -> None:
    done = CliRunner().invoke(app, ["whatif", "--down", "member9", "-f", "/nonexistent/fleet.yaml"])
    assert done.exit_code == 2 and "fleet.yaml" in done.output
