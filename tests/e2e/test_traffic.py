"""The traffic loop end to end, in real time, in separate processes on loopback.

``fleetkeeper up`` runs the control plane with two simulated members, each with its
cluster DNS on a UDP port, its detector DaemonSet (one detector per node, resolving
through that DNS with dnspython) and its cloud load balancer (each LoadBalancer Service
answering HTTP with the cluster's name). An app — a Deployment and a LoadBalancer
Service in both members — sits behind a MultiClusterIngress, and a Remedy asks for
TrafficControl when ``ServiceDomainNameResolutionReady`` turns False. ``fleetkeeper
traffic`` (the built-in load balancer, then HAProxy) routes a client's steady requests.

``fleetkeeper fault dnsDown member1`` breaks member1's DNS. Within the failure threshold
plus two detect periods no request may reach member1 any more, and no request may fail
because of the switch; ``dnsUp`` brings member1 back after the success threshold. Short
thresholds (3 s, detect period 1 s) keep it quick. Both load balancers run through one drill,
each with a client of its own, and each test checks and prints what its client saw. Every
wait is bounded, every process is stopped.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from fleetkeeper.api.networking import MultiClusterIngress
from fleetkeeper.client.rest import RestClient

DETECT_PERIOD = 1.0
FAILURE_THRESHOLD = 3.0
SUCCESS_THRESHOLD = 3.0
#: the bound of the acceptance criterion: no request reaches member1 after this long
SWITCH_BOUND = FAILURE_THRESHOLD + 2 * DETECT_PERIOD
#: one request every INTERVAL seconds
INTERVAL = 0.05
HOST = "web.example.com"

pytestmark = pytest.mark.slow

APP = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: web, image: nginx:1.27}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: default}}
spec:
  type: LoadBalancer
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: 80}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: default}}
spec:
  resourceSelectors:
    - {{apiVersion: apps/v1, kind: Deployment, name: web}}
    - {{apiVersion: v1, kind: Service, name: web}}
  placement:
    clusterAffinity: {{clusterNames: [member1, member2]}}
    replicaScheduling: {{replicaSchedulingType: Duplicated}}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {{name: web, namespace: default}}
spec:
  rules:
    - host: {HOST}
      http:
        paths:
          - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
---
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {{name: dns-broken}}
spec:
  decisionMatches:
    - clusterConditionMatch:
        conditionType: ServiceDomainNameResolutionReady
        operator: Equal
        conditionStatus: "False"
  actions: [TrafficControl]
"""


def fleetkeeper(*args: str) -> list[str]:
    return [sys.executable, "-m", "fleetkeeper.cmd.main", *args]


def wait_for_line(log: Path, text: str, process: subprocess.Popen[bytes], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if text in line:
                return line
        if process.poll() is not None:
            raise AssertionError(f"{process.args!r} exited with {process.returncode}:\n{log.read_text()}")
        time.sleep(0.1)
    raise AssertionError(f"no {text!r} from {process.args!r} within {seconds:g}s:\n{log.read_text()}")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass
class Plane:
    kubeconfig: Path
    env: dict[str, str]
    workdir: Path


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    workdir = tmp_path_factory.mktemp("traffic-e2e")
    env = {**os.environ, "KUBECONFIG": str(workdir / "state" / "kubeconfig")}
    log = workdir / "up.log"
    with log.open("wb") as out:
        up = subprocess.Popen(fleetkeeper(
            "up", "--state-dir", str(workdir / "state"), "--port", "0", "--clusters", "2",
            "--detect-period", f"{DETECT_PERIOD:g}s", "--detect-failure-threshold", f"{FAILURE_THRESHOLD:g}s",
            "--detect-success-threshold", f"{SUCCESS_THRESHOLD:g}s"),
            stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_for_line(log, "Ready in", up, 90)
        (workdir / "app.yaml").write_text(APP)
        subprocess.run(fleetkeeper("apply", "-f", str(workdir / "app.yaml")), env=env, check=True, timeout=60)
        yield Plane(workdir / "state" / "kubeconfig", env, workdir)
    finally:
        stop(up)


@dataclass
class Client:
    """A client sending one request every INTERVAL seconds through the load balancer."""

    url: str
    #: (send time, serving cluster or None for a failure, failure text)
    log: list[tuple[float, str | None, str]] = field(default_factory=list)
    #: when the dnsDown and dnsUp commands returned
    down_at: float = 0.0
    up_at: float = 0.0
    #: set to stop sending; ``run`` then returns once the requests in flight are answered
    stopped: bool = False

    async def run(self, seconds: float) -> None:
        async with httpx.AsyncClient(timeout=5.0, trust_env=False) as client:
            tasks = []
            for _ in range(int(seconds / INTERVAL)):
                if self.stopped:
                    break
                tasks.append(asyncio.get_running_loop().create_task(self._one(client)))
                await asyncio.sleep(INTERVAL)
            await asyncio.gather(*tasks)  # before the client closes: a closed client fails them

    async def _one(self, client: httpx.AsyncClient) -> None:
        sent = time.monotonic()
        try:
            response = await client.get(f"{self.url}/", headers={"Host": HOST})
        except httpx.HTTPError as exc:
            self.log.append((sent, None, repr(exc)))
            return
        if response.status_code != 200:
            self.log.append((sent, None, f"{response.status_code} {response.text.strip()}"))
        else:
            self.log.append((sent, response.text.strip(), ""))

    def served(self, since: float = 0.0, until: float = float("inf")) -> Counter[str]:
        return Counter(c for at, c, _ in self.log if c is not None and since <= at < until)

    def failures(self) -> list[str]:
        return [text for _, c, text in self.log if c is None]


async def ready_backends(plane: Plane) -> None:
    """Wait until the MCI knows both clusters (bounded)."""
    client = RestClient.from_kubeconfig(plane.kubeconfig)
    try:
        for _ in range(600):
            mci = await client.get(MultiClusterIngress, "web", "default")
            if [loc.clusters for loc in mci.status.service_locations or ()] == [["member1", "member2"]]:
                return
            await asyncio.sleep(0.1)
        raise AssertionError("the MCI never located the Service in both members")
    finally:
        await client.aclose()


async def until_both_serve(url: str) -> None:
    probe = Client(url)
    for _ in range(300):
        await probe.run(INTERVAL * 4)
        if set(probe.served()) == {"member1", "member2"}:
            return
    raise AssertionError(f"the load balancer never served from both members: {probe.served()}")


async def fault(plane: Plane, action: str) -> float:
    process = await asyncio.create_subprocess_exec(*fleetkeeper("fault", action, "member1"), env=plane.env,
                                                   stdout=asyncio.subprocess.DEVNULL)
    assert await asyncio.wait_for(process.wait(), 60) == 0
    return time.monotonic()


async def drill(plane: Plane, urls: dict[str, str]) -> dict[str, Client]:
    """dnsDown member1 under steady load through every load balancer at once, then dnsUp; each
    client's record."""
    await ready_backends(plane)
    await asyncio.gather(*(until_both_serve(url) for url in urls.values()))
    clients = {provider: Client(url) for provider, url in urls.items()}
    total = 2 + SWITCH_BOUND + 3 + SUCCESS_THRESHOLD + 2 * DETECT_PERIOD + 6
    loads = [asyncio.get_running_loop().create_task(client.run(total + 10)) for client in clients.values()]
    try:
        await asyncio.sleep(2)
        down_at = await fault(plane, "dnsDown")
        await asyncio.sleep(SWITCH_BOUND + 3)
        up_at = await fault(plane, "dnsUp")
        for client in clients.values():
            client.down_at, client.up_at = down_at, up_at
        await asyncio.sleep(SUCCESS_THRESHOLD + 2 * DETECT_PERIOD + 6)
    finally:
        for client in clients.values():
            client.stopped = True
        await asyncio.gather(*loads, return_exceptions=True)
    return clients


def check(client: Client, provider: str) -> None:
    down, up = client.down_at, client.up_at
    sent, failed = len(client.log), len(client.failures())
    last = max((at - down for at, c, _ in client.log if c == "member1" and down <= at < up), default=0.0)
    back = sorted(at - up for at, c, _ in client.log if c == "member1" and at >= up)
    print(f"\n[{provider}] requests sent {sent}, failed {failed}, "
          f"served per cluster {dict(client.served())}; "
          f"after dnsDown+{SWITCH_BOUND:g}s until dnsUp: {dict(client.served(down + SWITCH_BOUND, up))}; "
          f"last request to member1 sent {last:.2f}s after dnsDown, "
          f"first again {back[0] if back else -1:.2f}s after dnsUp")
    assert failed == 0, client.failures()[:5]
    assert client.served(0, down)["member1"] > 0, "member1 served nothing before the fault"
    late = [at - down for at, c, _ in client.log if c == "member1" and down + SWITCH_BOUND <= at < up]
    assert not late, f"member1 still served requests sent {late[:3]} s after dnsDown"
    assert client.served(down + SWITCH_BOUND, up)["member2"] > 0
    assert back, "member1 never got traffic back after dnsUp"
    assert back[0] <= SUCCESS_THRESHOLD + 2 * DETECT_PERIOD + 2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_traffic(plane: Plane, provider: str, listen: str) -> tuple[subprocess.Popen[bytes], str]:
    log = plane.workdir / f"traffic-{provider}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(fleetkeeper(
            "traffic", "--provider", provider, "--listen", listen,
            "--work-dir", str(plane.workdir / provider)),
            stdout=out, stderr=subprocess.STDOUT, env=plane.env)
    line = wait_for_line(log, "routing on", process, 60)
    return process, line.split("routing on ", 1)[1].split()[0]


@pytest.fixture(scope="module")
def drilled(plane: Plane) -> dict[str, Client]:
    """The built-in load balancer and HAProxy (when installed) through one drill, a client each."""
    listen = {"builtin": "127.0.0.1:0"}
    if shutil.which("haproxy") is not None:
        listen["haproxy"] = f"127.0.0.1:{free_port()}"
    processes: list[subprocess.Popen[bytes]] = []
    urls = {}
    try:
        for provider, address in listen.items():
            process, urls[provider] = run_traffic(plane, provider, address)
            processes.append(process)
        return asyncio.run(drill(plane, urls))
    finally:
        for process in processes:
            stop(process)


def test_builtin_load_balancer_switches_away_from_broken_dns(drilled: dict[str, Client]) -> None:
    check(drilled["builtin"], "builtin")


@pytest.mark.skipif(shutil.which("haproxy") is None,
                    reason="haproxy is not installed (apt-get install haproxy; ./run test installs it)")
def test_haproxy_switches_away_from_broken_dns(drilled: dict[str, Client]) -> None:
    check(drilled["haproxy"], "haproxy")
