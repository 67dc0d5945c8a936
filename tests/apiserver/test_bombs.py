"""A patch bomb and oversized objects against a served API server: refused with a 4xx Status,
nothing stored changes, the server stays small and ``/readyz`` keeps answering.

The server is ``fleetkeeper apiserver`` as a user runs it — a separate process on a free
loopback port, over HTTPS with its own tokens — so its memory is its own: the bound is on
that process's peak resident set (``VmHWM`` in ``/proc/PID/status``), not on this test
process. It runs under an address-space limit, so that a server which did not bound its
writes fails this test with an error instead of taking the machine's memory. Every wait
and every load loop is bounded in count and time.
"""

from __future__ import annotations

import base64
import resource
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from fleetkeeper.api.limits import MAX_OBJECT_BYTES, MAX_PATCH_BYTES
from fleetkeeper.store.etcd_testing import free_port

FLEETKEEPER = [sys.executable, "-m", "fleetkeeper.cmd.main"]
#: the server's address space: far above what it needs, far below what an unbounded patch takes
ADDRESS_SPACE = 3 * 1024**3
#: the acceptance bounds
MAX_RSS = 200 * 1024 * 1024
MAX_READYZ = 0.100
WORKS = "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
JSON_PATCH = "application/json-patch+json"


@dataclass
class Served:
    url: str
    process: subprocess.Popen[bytes]
    tls: ssl.SSLContext
    admin: str
    agent: str

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.tls, timeout=60,
                            headers={"Authorization": f"Bearer {token}"})

    def peak_rss(self) -> int:
        """The server process's peak resident set, in bytes."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM in /proc/PID/status")


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _user_token(kubeconfig: Path) -> str:
    return str(yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"])


def _wait_ready(url: str, tls: ssl.SSLContext, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "the API server exited while starting"
        try:
            if httpx.get(f"{url}/readyz", verify=tls, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail("the API server did not become ready within 30 s")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    with (tmp_path / "server.err").open("wb") as err:
        process = subprocess.Popen(
            [*FLEETKEEPER, "apiserver", "--store", "memory://", "--state-dir", str(tmp_path),
             "--port", str(port)],
            stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_limit_address_space)
    try:
        url = f"https://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while not (tmp_path / "kubeconfig").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        ca = yaml.safe_load((tmp_path / "kubeconfig").read_text())["clusters"][0]["cluster"]
        tls = ssl.create_default_context(cadata=base64.b64decode(ca["certificate-authority-data"]).decode())
        _wait_ready(url, tls, process)
        subprocess.run([*FLEETKEEPER, "token", "create-agent", "member1", "--state-dir", str(tmp_path)],
                       check=True, capture_output=True, timeout=60)
        yield Served(url, process, tls, _user_token(tmp_path / "kubeconfig"),
                     _user_token(tmp_path / "agent-member1.kubeconfig"))
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def bomb(path: str, copies: int = 40) -> list[dict[str, Any]]:
    """A JSON patch that doubles a 256-byte value ``copies`` times (about 4 KB of request)."""
    ops: list[dict[str, Any]] = [{"op": "add", "path": path, "value": {"v": "x" * 256}}]
    ops += [{"op": "copy", "from": path, "path": f"{path}/k{i}"} for i in range(copies)]
    return ops


def assert_refused(response: httpx.Response, code: int, *words: str) -> dict[str, Any]:
    assert response.status_code == code, response.text[:500]
    status: dict[str, Any] = response.json()
    assert (status["kind"], status["code"]) == ("Status", code)
    for word in words:
        assert word in status["message"], status["message"]
    return status


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def work(name: str) -> dict[str, Any]:
    return {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": {"name": name},
            "spec": {"workload": {"manifests": [configmap("payload", a="b") | {"metadata": {
                "name": "payload", "namespace": "default"}}]}}}


@dataclass(frozen=True)
class Attack:
    path: str
    method: str
    content_type: str
    #: encoded once, so that the attacking thread spends its time sending, not encoding
    body: bytes
    agent: bool = False


HALF = "y" * (MAX_OBJECT_BYTES // 2 + 1)
ATTACKS = (
    Attack(f"{CONFIGMAPS}/target", "PATCH", JSON_PATCH, orjson.dumps(bomb("/data2"))),
    Attack(f"{WORKS}/own", "PATCH", JSON_PATCH, orjson.dumps(bomb("/spec/extra")), agent=True),
    Attack(CONFIGMAPS, "POST", "application/json",
           orjson.dumps(configmap("huge", pad="x" * (MAX_OBJECT_BYTES + 1)))),
    Attack(f"{CONFIGMAPS}/target", "PATCH", "application/merge-patch+json",
           orjson.dumps({"data": {"p1": HALF, "p2": HALF}})),
)


def attacks(served: Served) -> list[httpx.Response]:
    """One round of every attack: patch bombs (the admin on a ConfigMap, the agent on its own
    Work), an oversized object, and a patch growing an object past the limit."""
    with served.client(served.admin) as admin, served.client(served.agent) as agent:
        return [(agent if a.agent else admin).request(a.method, a.path, content=a.body,
                                                      headers={"Content-Type": a.content_type})
                for a in ATTACKS]


def test_patch_bombs_and_oversized_objects_are_refused_while_the_server_stays_small_and_ready(
    served: Served,
) -> None:
    with served.client(served.admin) as admin:
        assert admin.post(CONFIGMAPS, json=configmap("target", a="b")).status_code == 201
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karmada-es-member1"}}
        assert admin.post("/api/v1/namespaces", json=namespace).status_code in (201, 409)
        assert admin.post(WORKS, json=work("own")).status_code == 201, "seed Work"
        before = {path: admin.get(path).json() for path in (f"{CONFIGMAPS}/target", f"{WORKS}/own")}

    first = attacks(served)
    assert_refused(first[0], 413, "json patch operation", str(MAX_PATCH_BYTES))
    assert_refused(first[1], 413, "json patch operation", str(MAX_PATCH_BYTES))
    assert_refused(first[2], 413, '"huge"', str(MAX_OBJECT_BYTES))
    assert_refused(first[3], 413, '"target"', str(MAX_OBJECT_BYTES))

    latencies: list[float] = []
    done = threading.Event()

    def attack_rounds() -> None:
        try:
            for _ in range(5):
                assert all(400 <= r.status_code < 500 for r in attacks(served))
        finally:
            done.set()

    attacker = threading.Thread(target=attack_rounds)
    attacker.start()
    with httpx.Client(base_url=served.url, verify=served.tls, timeout=10) as probe:
        probe.get("/readyz")  # the connection is open before timing starts
        for _ in range(300):  # bounded: the rounds end well before
            start = time.perf_counter()
            assert probe.get("/readyz").status_code == 200
            latencies.append(time.perf_counter() - start)
            if done.is_set():
                break
            time.sleep(0.02)
    attacker.join(timeout=120)
    assert done.is_set()

    assert max(latencies) < MAX_READYZ, f"readyz took {[round(s * 1000) for s in latencies]} ms"
    assert served.peak_rss() < MAX_RSS, f"the server peaked at {served.peak_rss() / 2**20:.0f} MiB"
    with served.client(served.admin) as admin:
        assert {path: admin.get(path).json() for path in before} == before  # nothing stored changed
