"""Failover readiness against a running ``fleetkeeper up`` (a separate process, the CLI as a user
runs it): ``whatif --down member1`` says beforehand where the seed story's nginx goes, and the
real failover, once ``fault clusterDown member1`` has run its course, puts it there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_up import KUBECTL, SEED, Fleet, healthy, wait_for

pytestmark = pytest.mark.skipif(not KUBECTL.exists(), reason=f"{KUBECTL} missing")

FAILOVER = ["--cluster-failure-threshold", "2s", "--cluster-success-threshold", "2s"]


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    started = Fleet(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def whatif(fleet: Fleet, *args: str) -> tuple[int, Any]:
    done = fleet.cli("whatif", *args, "-o", "json")
    assert done.returncode in (0, 3), f"whatif failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.returncode, json.loads(done.stdout)


def test_whatif_down_member1_is_where_the_failover_puts_nginx(fleet: Fleet) -> None:
    fleet.up(*FAILOVER)
    fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}), "nginx healthy")

    code, answer = whatif(fleet, "--down", "member1")
    assert code == 0
    [nginx] = answer["workloads"]
    assert nginx["binding"] == "default/nginx-deployment"
    assert nginx["before"] == {"member1": 1, "member2": 2}
    assert (nginx["pendingReplicas"], nginx["homeless"], nginx["blocked"]) == (0, False, False)

    done = fleet.cli("fault", "clusterDown", "member1")
    assert done.returncode == 0, done.stderr
    wait_for(lambda: healthy(fleet, "nginx-deployment", nginx["after"]), f"nginx healthy on {nginx['after']}")
    rb = fleet.json("get", "rb", "nginx-deployment", "-n", "default")
    assert {c["name"]: c["replicas"] for c in rb["spec"]["clusters"]} == nginx["after"] == {"member2": 3}
