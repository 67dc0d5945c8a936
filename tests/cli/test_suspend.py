"""`fleetkeeper suspend|resume`: the pure rules, and the commands against a real API server."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.cli import connect
from fleetkeeper.cli.suspend import resumed, suspended

from .test_commands import Cli
from .test_commands import cli as cli  # the real-server fixture, shared

ALL = {"dispatching": True}


def on(*names: str) -> dict[str, Any]:
    return {"dispatchingOnClusters": {"clusterNames": list(names)}}


@pytest.mark.parametrize(
    ("current", "clusters", "after"),
    [
        pytest.param(None, None, ALL, id="suspend without clusters suspends every cluster"),
        pytest.param(None, ["b", "a"], on("a", "b"), id="suspend some clusters lists them sorted"),
        pytest.param(on("c"), ["a"], on("a", "c"), id="suspending more clusters adds to the list"),
        pytest.param(ALL, ["a"], ALL, id="suspending some while all are suspended changes nothing"),
        pytest.param(on("a"), None, ALL, id="suspend without clusters widens a list to every cluster"),
    ],
)
def test_suspended(current: dict[str, Any] | None, clusters: list[str] | None, after: dict[str, Any]) -> None:
    assert suspended(current, clusters) == after


@pytest.mark.parametrize(
    ("current", "clusters", "after"),
    [
        pytest.param(ALL, None, None, id="resume without clusters clears the suspension"),
        pytest.param(on("a", "b", "c"), ["b", "c"], on("a"), id="resume some clusters shrinks the list"),
        pytest.param(on("a"), ["a"], None, id="resuming the last listed cluster resumes everything"),
        pytest.param(None, ["a"], None, id="resuming what is not suspended changes nothing"),
    ],
)
def test_resumed(current: dict[str, Any] | None, clusters: list[str] | None, after: Any) -> None:
    assert resumed(current, clusters) == after


def test_resuming_some_clusters_of_a_full_suspension_is_refused() -> None:
    with pytest.raises(connect.BadInput, match="suspended for every cluster"):
        resumed(ALL, ["a"])


POLICY = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: rollout, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
"""


def _suspension(cli: Cli) -> Any:
    import asyncio

    async def read() -> Any:
        client = cli.client()
        try:
            policy = await client.get(PropagationPolicy, "rollout", "default")
            return policy.to_dict()["spec"].get("suspension")
        finally:
            await client.aclose()

    return asyncio.run(read())


def test_suspend_and_resume_edit_the_policy(cli: Cli) -> None:
    cli.ok("apply", "-f", cli.write("rollout.yaml", POLICY))
    assert "suspended (member2, member3)" in cli.ok("suspend", "rollout", "--clusters", "member2,member3")
    assert _suspension(cli) == on("member2", "member3")
    cli.ok("resume", "rollout", "--clusters", "member2")
    assert _suspension(cli) == on("member3")
    assert "unchanged" in cli.ok("resume", "rollout", "--clusters", "member9")
    cli.ok("resume", "rollout")
    assert _suspension(cli) is None
    cli.ok("suspend", "rollout")
    assert _suspension(cli) == ALL
    refused = cli.run("resume", "rollout", "--clusters", "member1")
    assert refused.exit_code == 2 and "suspended for every cluster" in refused.stderr
    missing = cli.run("suspend", "nope")
    assert missing.exit_code == 1 and "NotFound" in missing.stderr
