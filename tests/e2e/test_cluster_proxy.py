"""Seeing into member clusters through the plane, with the real kubectl against ``fleetkeeper up``.

The seed (nginx, member1:1, member2:2) is applied; then ``kubectl get --raw`` of Karmada's
cluster proxy lists nginx's pod in member1, a kubeconfig from ``fleetkeeper kubeconfig
--cluster member1`` makes plain ``kubectl get pods`` / ``describe`` / ``get events`` read
member1 (the pod's Scheduled and Started events among them), ``fleetkeeper get -C``,
``logs -C`` and ``top clusters`` read the members, ``kubectl logs`` prints the pod's log and
``logs -f`` streams its crash loop after ``fleetkeeper fault crashWorkload``, each restart as
it happens, ``kubectl exec`` reaches the member's exec endpoint through the proxy's WebSocket
relay (its message, that a simulated container runs no processes, carried on the error
channel to kubectl), a Pull agent's token is refused (403), its WebSocket upgrade too, and a
Pull cluster answers 503, to an upgrade as well.
"""

from __future__ import annotations

import json
import queue
import re
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Subprotocol

from .test_up import KUBECTL, SEED, Fleet, fleet, healthy, wait_for

__all__ = ["fleet"]  # the fixture, shared with test_up

PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"


def _member_kubeconfig(fleet: Fleet, cluster: str) -> Path:
    made = fleet.cli("kubeconfig", "--cluster", cluster)
    assert made.returncode == 0, made.stderr
    doc = yaml.safe_load(made.stdout)
    assert doc["clusters"][0]["cluster"]["server"] == fleet.server + PROXY.format(cluster)
    path = fleet.root / f"{cluster}.kubeconfig"
    path.write_text(made.stdout)
    return path


def _upgrade_refusal(fleet: Fleet, cluster: str, kubeconfig: Path) -> tuple[int, str]:
    """How the plane answers a ``kubectl exec``-like WebSocket upgrade with ``kubeconfig``'s token."""
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    ca = ssl.create_default_context(cafile=str(fleet.state / "pki" / "ca.crt"))
    url = (fleet.server.replace("https://", "wss://", 1) + PROXY.format(cluster)
           + "/api/v1/namespaces/default/pods/p/exec?command=env&stdout=true")
    with pytest.raises(InvalidStatus) as refused:
        connect(url, ssl=ca, additional_headers={"Authorization": f"Bearer {token}"}, proxy=None,
                subprotocols=[Subprotocol("v5.channel.k8s.io")], open_timeout=10).close()
    return refused.value.response.status_code, json.loads(refused.value.response.body or b"{}")["message"]


def _table(printed: str) -> list[list[str]]:
    """kubectl's table as rows of cells (columns are two or more spaces apart)."""
    return [re.split(r"\s{2,}", line.strip()) for line in printed.splitlines() if line.strip()]


def _reader(process: subprocess.Popen[str]) -> queue.Queue[str]:
    """The lines ``process`` prints, as they come (read by a thread that ends with the process)."""
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout

    def read() -> None:
        for line in stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    return lines


def _lines_until(lines: queue.Queue[str], wanted: str, timeout: float) -> list[str]:
    """The lines until one containing ``wanted`` (bounded by ``timeout``)."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any(wanted in line for line in seen):
        try:
            seen.append(lines.get(timeout=max(0.01, deadline - time.monotonic())))
        except queue.Empty:
            break
    return seen


def test_kubectl_sees_into_a_member_through_the_cluster_proxy(fleet: Fleet) -> None:
    fleet.up("--clusters", "2", "--pull-agent", "edge1")
    fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
    wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}), "nginx healthy")

    raw = fleet.kubectl_ok("get", "--raw", PROXY.format("member1") + "/api/v1/namespaces/default/pods")
    pods = json.loads(raw)
    assert pods["kind"] == "PodList"
    assert [p["metadata"]["labels"]["app"] for p in pods["items"]] == ["nginx"]
    name = pods["items"][0]["metadata"]["name"]

    member1 = _member_kubeconfig(fleet, "member1")
    listed = fleet.kubectl("get", "pods", "-o", "name", kubeconfig=member1)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == [f"pod/{name}"]
    wide = fleet.kubectl("get", "pods", "-o", "wide", kubeconfig=member1)
    assert wide.returncode == 0 and name in wide.stdout, wide.stderr
    assert _table(wide.stdout)[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                                      "NOMINATED NODE", "READINESS GATES"]
    assert _table(wide.stdout)[1][6].startswith("member1-")  # NODE
    assert _table(wide.stdout)[1][5] == pods["items"][0]["status"]["podIP"]  # IP, from the node's range
    assert pods["items"][0]["status"]["podIP"].startswith("10.244.")
    deploy = fleet.kubectl("get", "deploy", "-o", "wide", kubeconfig=member1)
    assert deploy.returncode == 0, deploy.stderr
    header, row = _table(deploy.stdout)
    assert header[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"] and row[5:] == ["nginx", "nginx", "app=nginx"]
    described = fleet.kubectl("describe", "pod", name, kubeconfig=member1)
    assert described.returncode == 0 and "Name:" in described.stdout, described.stderr
    events = described.stdout.split("Events:")[1]  # found by the member with involvedObject's fields
    assert "Scheduled" in events and "default-scheduler" in events, described.stdout
    events = fleet.kubectl("get", "events", kubeconfig=member1)
    assert events.returncode == 0, events.stderr
    about_pod = [line for line in events.stdout.splitlines() if f"pod/{name}" in line]
    assert any("Scheduled" in line for line in about_pod), events.stdout
    assert any("Started container nginx" in line for line in about_pod), events.stdout
    as_json = fleet.kubectl("get", "events", "-o", "json", kubeconfig=member1)
    assert as_json.returncode == 0, as_json.stderr
    scheduled = next(e for e in json.loads(as_json.stdout)["items"]
                     if (e["involvedObject"]["name"], e["reason"]) == (name, "Scheduled"))
    node = pods["items"][0]["spec"]["nodeName"]
    assert scheduled["message"] == f"Successfully assigned default/{name} to {node}"
    two = fleet.kubectl("get", "deploy", "nginx", "-o", "jsonpath={.spec.replicas}",
                        kubeconfig=_member_kubeconfig(fleet, "member2"))
    assert two.stdout == "2", two.stderr

    across = fleet.cli("get", "pods", "-C", "member1,member2")
    assert across.returncode == 0, across.stderr
    clusters = [line.split()[1] for line in across.stdout.splitlines()[1:]]
    assert clusters == ["member1", "member2", "member2"]
    told = fleet.cli("logs", "-C", "member2", "deploy/nginx")
    assert told.returncode == 0 and "container nginx is ready" in told.stdout, told.stderr
    top = fleet.cli("top", "clusters")
    assert top.returncode == 0 and top.stdout.split()[:2] == ["NAME", "CPU-ALLOCATABLE"], top.stderr

    logs = fleet.kubectl("logs", "deploy/nginx", kubeconfig=member1)
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.splitlines() == ["container nginx started (image nginx)", "container nginx is ready"]
    executed = fleet.kubectl("exec", "deploy/nginx", "--", "env", kubeconfig=member1)
    assert executed.returncode != 0
    assert "error executing command in container: container 'nginx' of simulated pod " \
        f"default/{name} runs no processes, so 'env' cannot be run" in executed.stderr, executed.stderr
    command = [str(KUBECTL), "--kubeconfig", str(member1), "--cache-dir", str(fleet.cache), "logs", "-f",
               f"pod/{name}"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as follow:
        lines = _reader(follow)
        try:
            assert _lines_until(lines, "is ready", 10)[-1] == "container nginx is ready"
            crashed = fleet.cli("fault", "crashWorkload", "member1", "deployment/nginx", "-n", "default")
            assert crashed.returncode == 0, crashed.stderr
            streamed = _lines_until(lines, "crashWorkload", 30)
            assert "(fault crashWorkload); restart 1" in streamed[-1], streamed
            streamed = _lines_until(lines, "restart 2", 30)  # written after a 10 s back-off, streamed then
            assert "(fault crashWorkload); restart 2, back-off 20s" in streamed[-1], streamed
        finally:
            follow.kill()

    agent = fleet.kubectl("get", "--raw", PROXY.format("edge1") + "/api",
                          kubeconfig=fleet.state / "agent-edge1.kubeconfig")
    assert agent.returncode != 0 and "Forbidden" in agent.stderr
    code, said = _upgrade_refusal(fleet, "edge1", fleet.state / "agent-edge1.kubeconfig")
    assert code == 403 and 'cannot proxy resource "clusters/proxy"' in said, said
    code, said = _upgrade_refusal(fleet, "edge1", fleet.kubeconfig)
    assert code == 503 and "Pull mode" in said, said
    pulled = fleet.kubectl("get", "--raw", PROXY.format("edge1") + "/api")
    assert pulled.returncode != 0 and "Pull mode" in pulled.stderr
    refused = fleet.cli("kubeconfig", "--cluster", "edge1")
    assert refused.returncode != 0 and "Pull mode" in refused.stderr
