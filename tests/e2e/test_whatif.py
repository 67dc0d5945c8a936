"""Failover readiness against a running ``fleetkeeper up`` (a separate process, the CLI as a user
runs it): ``whatif --down member1`` (and ``describe cluster member1``) says beforehand where the
seed story's nginx goes, and the real failover, once ``fault clusterDown member1`` has run its
course, puts it there; with ``--failover-readiness`` a workload's ``FailoverReady`` condition
turns False (``NoSpareCapacity``) when member2 is down to one node and True when its nodes
return, and ``kubectl get rb`` shows it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_up import KUBECTL, SEED, Fleet, healthy, wait_for, workload

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

    described = fleet.cli("describe", "cluster", "member1")
    assert described.returncode == 0, described.stderr
    assert "If it fails:" in described.stdout and "1 workload moves, 0 short, 0 homeless" in described.stdout
    code, answer = whatif(fleet, "--down", "member1")
    assert code == 0
    [nginx] = answer["workloads"]
    assert nginx["binding"] == "default/nginx-deployment"
    assert nginx["before"] == {"member1": 1, "member2": 2}
    assert (nginx["pendingReplicas"], nginx["homeless"], nginx["blocked"]) == (0, False, False)

    simulated = fleet.cli("whatif", "--down", "member1", "--simulate", "--horizon", "5m", "-o", "json")
    assert simulated.returncode == 0, f"{simulated.stdout}\n{simulated.stderr}"
    [timed] = json.loads(simulated.stdout)["workloads"]
    assert timed["after"] == nginx["after"]
    assert 0 < timed["rescheduledAfterSeconds"] <= timed["readyAfterSeconds"] < 300

    done = fleet.cli("fault", "clusterDown", "member1")
    assert done.returncode == 0, done.stderr
    wait_for(lambda: healthy(fleet, "nginx-deployment", nginx["after"]), f"nginx healthy on {nginx['after']}")
    rb = fleet.json("get", "rb", "nginx-deployment", "-n", "default")
    assert {c["name"]: c["replicas"] for c in rb["spec"]["clusters"]} == nginx["after"] == {"member2": 3}


def ready_for_failover(fleet: Fleet, name: str) -> tuple[str, str, str] | None:
    rb = fleet.json("get", "rb", name, "-n", "default")
    found = [c for c in rb.get("status", {}).get("conditions", []) if c["type"] == "FailoverReady"]
    return (found[0]["status"], found[0]["reason"], found[0]["message"]) if found else None


def ready_status(fleet: Fleet, name: str) -> str:
    return (ready_for_failover(fleet, name) or ("",))[0]


def test_failover_ready_follows_member2_s_nodes(fleet: Fleet) -> None:
    fleet.up("--failover-readiness")
    web = workload("web", 3, {"member1": 1, "member2": 2}).replace(
        "{name: web, image: nginx}", "{name: web, image: nginx, resources: {requests: {cpu: '3'}}}")
    fleet.kubectl_ok("apply", "-f", "-", stdin=web)
    wait_for(lambda: healthy(fleet, "web-deployment", {"member1": 1, "member2": 2}), "web healthy")
    wait_for(lambda: ready_status(fleet, "web-deployment") == "True", "FailoverReady True")
    header, row = fleet.kubectl_ok("get", "rb", "web-deployment", "-n", "default").splitlines()[:2]
    assert header.split()[3] == "READY-FOR-FAILOVER" and row.split()[3] == "True"

    assert fleet.cli("fault", "setNodes", "member2", "--nodes", "1").returncode == 0
    _, reason, message = wait_for(
        lambda: (found := ready_for_failover(fleet, "web-deployment")) and found[0] == "False" and found,
        "FailoverReady False")
    assert reason == "NoSpareCapacity" and message.startswith("if cluster member1 fails, 1 replica")

    assert fleet.cli("fault", "setNodes", "member2", "--nodes", "3").returncode == 0
    wait_for(lambda: ready_status(fleet, "web-deployment") == "True", "FailoverReady True")
