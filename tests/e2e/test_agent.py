"""A network Pull agent (``fleetkeeper agent``) in its own process against ``fleetkeeper up``.

(c) the agent keeps its cluster Ready and runs its share of a workload; its token reaches
only its own Cluster, Lease and Works (403 elsewhere); killed with SIGKILL, its heartbeats
stop, the cluster turns Ready=Unknown after the (shortened) grace period and the workload
moves to a Push cluster. Also: an agent token minted with ``fleetkeeper token
create-agent`` while ``up`` runs is accepted without a restart, and an agent whose
cluster is not registered yet registers it (Pull mode) itself.
"""

from __future__ import annotations

import signal
import ssl
from typing import Any

import httpx
import yaml

from .test_up import PROCESS, Fleet, binding, fleet, healthy, ready_clusters, wait_for, workload

__all__ = ["fleet"]  # the fixture, shared with test_up

GRACE = ["--cluster-monitor-grace-period", "5s"]
#: an agent renewing every second (4 s × 0.25), probing its member every second
AGENT_FAST = ["--lease-duration", "4s", "--cluster-status-update-frequency", "1s"]


def start_agent(fleet: Fleet, name: str) -> Any:
    kubeconfig = fleet.state / f"agent-{name}.kubeconfig"
    return fleet.start(f"agent-{name}", "agent", "--kubeconfig", str(kubeconfig), "--cluster-name", name,
                       "--member", f"simulated://{name}", *AGENT_FAST)


def ready_reason(fleet: Fleet, name: str) -> tuple[str, str] | None:
    cluster = fleet.json("get", "cluster", name)
    for condition in cluster.get("status", {}).get("conditions") or []:
        if condition["type"] == "Ready":
            return condition["status"], condition.get("reason", "")
    return None


def test_a_pull_agent_keeps_its_cluster_ready_until_killed_then_workloads_move(fleet: Fleet) -> None:
    up = fleet.up("--clusters", "2", "--pull-agent", "edge1", *GRACE)
    assert "pull agent   edge1: fleetkeeper agent --kubeconfig" in up.stdout
    agent = start_agent(fleet, "edge1")
    wait_for(lambda: ready_clusters(fleet).get("edge1") == "True", "edge1 Ready through its agent")
    lease = fleet.json("get", "lease", "edge1", "-n", "karmada-cluster")
    assert lease["spec"]["holderIdentity"] == "edge1" and lease["spec"]["leaseDurationSeconds"] == 4

    fleet.kubectl_ok("apply", "-f", "-", stdin=workload("web", 4, {"edge1": 1, "member1": 1}))
    wait_for(lambda: healthy(fleet, "web-deployment", {"edge1": 2, "member1": 2}),
             "web Healthy on edge1 (applied by the agent) and member1")

    # least privilege: the agent's token reaches its own objects only
    agent_kubeconfig = fleet.state / "agent-edge1.kubeconfig"
    own = fleet.kubectl("get", "works", "-n", "karmada-es-edge1", "-o", "name", kubeconfig=agent_kubeconfig)
    assert own.returncode == 0 and own.stdout.startswith("work.work.karmada.io/web-"), own.stderr
    other = fleet.kubectl("get", "works", "-n", "karmada-es-member1", kubeconfig=agent_kubeconfig)
    assert other.returncode != 0 and "Forbidden" in other.stderr
    token = yaml.safe_load(agent_kubeconfig.read_text())["users"][0]["user"]["token"]
    ca = ssl.create_default_context(cafile=str(fleet.state / "pki" / "ca.crt"))
    refused = httpx.get(f"{fleet.server}/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works",
                        headers={"Authorization": f"Bearer {token}"}, verify=ca, timeout=10)
    assert refused.status_code == 403 and refused.json()["reason"] == "Forbidden"

    assert agent.stop(signal.SIGKILL) == -signal.SIGKILL
    wait_for(lambda: ready_reason(fleet, "edge1") == ("Unknown", "ClusterStatusUnknown"),
             "edge1 Ready=Unknown once its heartbeats are older than the grace period")
    wait_for(lambda: healthy(fleet, "web-deployment", {"member1": 4}),
             "web moved to member1 and Healthy there")
    described = fleet.cli("describe", "cluster", "edge1")
    assert described.returncode == 0, described.stderr
    assert "Ready=Unknown (ClusterStatusUnknown)" in described.stdout.split("Failover timeline")[1]
    # what the agent saw of its cluster is on the plane's timeline, beside the plane's own entries
    entries = fleet.json("get", "timelineentries", "--field-selector", "subject.name=edge1")["items"]
    seen = {(e["action"], e["message"].split(" ")[0], e["component"]) for e in entries}
    assert ("ConditionChanged", "Ready=True", "cluster-status-controller") in seen, seen
    assert "Heartbeat:" in described.stdout
    assert binding(fleet, "web-deployment")["spec"].get("gracefulEvictionTasks") in (None, [])
    assert up.stop() == 0


def test_an_agent_token_minted_while_up_runs_registers_its_own_cluster(fleet: Fleet) -> None:
    up = fleet.up("--clusters", "1", *GRACE)
    minted = fleet.start("token", "token", "create-agent", "edge2", "--state-dir", str(fleet.state))
    assert minted.popen.wait(PROCESS) == 0, minted.stderr
    assert f"agent kubeconfig for edge2: {fleet.state / 'agent-edge2.kubeconfig'}" in minted.stdout

    agent = start_agent(fleet, "edge2")  # edge2 was never joined: the agent registers it
    wait_for(lambda: ready_clusters(fleet).get("edge2") == "True", "edge2 registered and Ready")
    got = fleet.cli("get", "clusters", "edge2", "-o", "yaml")
    assert got.returncode == 0 and "syncMode: Pull" in got.stdout
    assert agent.stop() == 0 and "agent for edge2 stopped" in agent.stdout
    assert up.stop() == 0


def _as_agent(fleet: Fleet, name: str, method: str, path: str, body: Any = None) -> httpx.Response:
    kubeconfig = fleet.state / f"agent-{name}.kubeconfig"
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    ca = ssl.create_default_context(cafile=str(fleet.state / "pki" / "ca.crt"))
    return httpx.request(method, f"{fleet.server}{path}", json=body, verify=ca, timeout=10,
                         headers={"Authorization": f"Bearer {token}"})


def test_unjoin_and_token_revoke_end_an_agent_at_once(fleet: Fleet) -> None:
    up = fleet.up("--clusters", "1", *GRACE)
    clusters = "/apis/cluster.karmada.io/v1alpha1/clusters"
    for name in ("edge7", "edge8"):
        minted = fleet.start("token", "token", "create-agent", name, "--state-dir", str(fleet.state))
        assert minted.popen.wait(PROCESS) == 0, minted.stderr
    pull = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "edge7"},
            "spec": {"syncMode": "Pull"}}
    registered = _as_agent(fleet, "edge7", "POST", clusters, pull)
    assert registered.status_code == 201, registered.text
    kubeconfig = fleet.state / "agent-edge7.kubeconfig"

    unjoined = fleet.cli("unjoin", "edge7", "--timeout", "30s")
    assert unjoined.returncode == 0, unjoined.stderr
    for method, body in (("GET", None), ("POST", pull)):
        refused = _as_agent(fleet, "edge7", method, clusters + ("/edge7" if method == "GET" else ""), body)
        assert refused.status_code == 401, refused.text
    assert fleet.kubectl("get", "cluster", "edge7").returncode != 0  # not registered again
    assert kubeconfig.exists()  # unjoin, over the API, leaves the file: its token is dead

    assert _as_agent(fleet, "edge8", "GET", clusters + "/edge8").status_code == 404  # known, not registered
    kubeconfig8 = fleet.state / "agent-edge8.kubeconfig"
    kept = kubeconfig8.read_text()
    revoked = fleet.start("token", "token", "revoke", "edge8", "--state-dir", str(fleet.state))
    assert revoked.popen.wait(PROCESS) == 0, revoked.stderr
    assert "agent token of edge8 revoked" in revoked.stdout
    assert not kubeconfig8.exists()
    kubeconfig8.write_text(kept)  # a copy someone kept
    assert _as_agent(fleet, "edge8", "GET", clusters + "/edge8").status_code == 401
    again = fleet.start("token", "token", "revoke", "edge8", "--state-dir", str(fleet.state))
    assert again.popen.wait(PROCESS) == 1 and "no agent token for cluster 'edge8'" in again.stderr
    assert up.stop() == 0


def test_bad_agent_input_exits_2(fleet: Fleet) -> None:
    fleet.state.mkdir()
    kubeconfig = fleet.state / "agent.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    # three commands refused before they do anything, started at once
    bad_member = fleet.start("agent", "agent", "--kubeconfig", str(kubeconfig), "--cluster-name", "x",
                             "--member", "ftp://x")
    bad_lease = fleet.start("agent", "agent", "--kubeconfig", str(kubeconfig), "--cluster-name", "x",
                            "--member", "simulated://x", "--lease-duration", "soon")
    no_state = fleet.start("token", "token", "create-agent", "x", "--state-dir", str(fleet.root / "empty"))
    assert bad_member.popen.wait(PROCESS) == 2 and "--member ftp://x" in bad_member.stderr
    assert bad_lease.popen.wait(PROCESS) == 2 and "--lease-duration" in bad_lease.stderr
    assert no_state.popen.wait(PROCESS) == 2 and "start `fleetkeeper up` there first" in no_state.stderr
