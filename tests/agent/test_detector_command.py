"""``fleetkeeper detector`` as separate processes, one per node, like the DaemonSet it is.

Two API servers (``fleetkeeper apiserver``) stand in for a member cluster's API (its
Nodes, the Lease) and for the control plane (the Cluster); the member's cluster DNS is
a simulated member's DNS server on a UDP loopback port. Two detector processes elect a
leader through the member's Lease, keep Node conditions, and the leader writes the
Cluster condition; when the leader stops, the other takes over and reports the DNS
outage. Real time, short thresholds, every wait bounded, every process stopped.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleetkeeper.agent import detector_rules as rules
from fleetkeeper.api import conditions
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import SystemClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.dns import ClusterDNS, DNSServer

LEASE = "cluster-problem-detector-coredns-detector"
pytestmark = pytest.mark.slow


def fleetkeeper(*args: str) -> list[str]:
    return [sys.executable, "-m", "fleetkeeper.cmd.main", *args]


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass
class Dns:
    member: SimulatedCluster
    port: int


@pytest.fixture
def dns() -> Iterator[Dns]:
    """A member's DNS server, served from its own thread and event loop."""
    member = SimulatedCluster("member1", clock=SystemClock(), nodes=1)
    loop = asyncio.new_event_loop()
    server = DNSServer(ClusterDNS(member))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    _, port = asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield Dns(member, port)
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def apiserver(directory: Path, processes: list[subprocess.Popen[bytes]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    log = directory.parent / f"{directory.name}-apiserver.log"
    with log.open("wb") as out:
        command = fleetkeeper("apiserver", "--state-dir", str(directory), "--port", "0")
        processes.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT))
    for _ in range(300):
        if "admin kubeconfig" in log.read_text():
            return directory / "kubeconfig"
        time.sleep(0.1)
    raise AssertionError(f"the API server in {directory} did not start:\n{log.read_text()}")


def detector(node: str, member: Path, karmada: Path, dns_port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(fleetkeeper(
            "detector", "--cluster-name", "member1", "--host-name", node, "--kubeconfig", str(member),
            "--karmada-kubeconfig", str(karmada), "--nameserver", f"127.0.0.1:{dns_port}",
            "--detect-period", "500ms", "--detect-failure-threshold", "2s",
            "--detect-success-threshold", "2s",
            "--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s",
            "--leader-elect-retry-period", "500ms"), stdout=out, stderr=subprocess.STDOUT)


async def poll(what: str, check: Callable[[], Awaitable[bool]], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"{what} did not happen within {seconds:g}s")


def test_two_detector_processes_elect_report_and_fail_over(tmp_path: Path, dns: Dns) -> None:
    processes: list[subprocess.Popen[bytes]] = []
    try:
        member_kubeconfig = apiserver(tmp_path / "member", processes)
        karmada_kubeconfig = apiserver(tmp_path / "karmada", processes)
        asyncio.run(scenario(tmp_path, dns, member_kubeconfig, karmada_kubeconfig, processes))
    finally:
        for process in reversed(processes):
            stop(process)


async def scenario(tmp_path: Path, dns: Dns, member_kubeconfig: Path, karmada_kubeconfig: Path,
                   processes: list[subprocess.Popen[bytes]]) -> None:
    member = RestClient.from_kubeconfig(member_kubeconfig)
    karmada = RestClient.from_kubeconfig(karmada_kubeconfig)
    node = BUILTIN["Node"]
    ready_node = {"conditions": [{"type": "Ready", "status": "True"}]}
    try:
        for name in ("n1", "n2"):
            await member.create(node.from_dict({"metadata": {"name": name}, "status": ready_node}))
        await karmada.create(Cluster.from_dict({"metadata": {"name": "member1"},
                                                "spec": {"syncMode": "Push"}}))

        def start(name: str, log: str) -> subprocess.Popen[bytes]:
            process = detector(name, member_kubeconfig, karmada_kubeconfig, dns.port, tmp_path / log)
            processes.append(process)
            return process

        detectors = {name: start(name, f"{name}.log") for name in ("n1", "n2")}

        async def status() -> str | None:
            found = conditions.get_condition((await karmada.get(Cluster, "member1")).status.conditions,
                                             rules.CONDITION)
            return found.status if found else None

        async def holder() -> str | None:
            return (await member.get(Lease, LEASE, "kube-system")).spec.holder_identity

        async def ready() -> bool:
            return await status() == "True"

        await poll("the Cluster condition True", ready, 30)
        for name in ("n1", "n2"):
            stored = rules.verdict_in((await member.get(node, name)).to_dict()["status"]["conditions"])
            assert stored is not None and stored.status == "True"
        leader = await holder()
        assert leader in detectors
        survivor = next(name for name in detectors if name != leader)
        stop(detectors[leader])

        async def handed_over() -> bool:
            return await holder() == survivor

        await poll("the lease handed to the other detector", handed_over, 15)
        # the DaemonSet restarts the stopped Pod: it rejoins as a follower (its node must report,
        # a node without a fresh verdict would keep the leader from writing anything)
        restarted = start(leader, "restarted.log")
        dns.member.dns_down()

        async def failed() -> bool:
            return await status() == "False"

        await poll("the Cluster condition False", failed, 20)
        assert await holder() == survivor
        assert restarted.poll() is None and detectors[survivor].poll() is None
    finally:
        await member.aclose()
        await karmada.aclose()
