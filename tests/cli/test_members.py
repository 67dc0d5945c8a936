"""karmadactl-style reads of member clusters (``get -C``, ``--operation-scope``, ``logs``, ``top
clusters``) against a real API server whose cluster proxy reaches two small member APIs in-process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from typer.testing import CliRunner

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.apiserver import (
    ApiServerApp,
    InProcessTransport,
    ServerThread,
    Tokens,
    build_app,
    ensure_certificates,
    write_kubeconfig,
)
from fleetkeeper.apiserver.proxy import Connection
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.main import app
from fleetkeeper.store import open_store

ADMIN = "members-admin"
WIDE = {"COLUMNS": "250"}
CLUSTERS = """\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
spec: {syncMode: Push, apiEndpoint: "https://fake.member1"}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member2}
spec: {syncMode: Push, apiEndpoint: "https://fake.member2"}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: edge1}
spec: {syncMode: Pull}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: default}
spec:
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: nginx}]}
"""


def _pod(name: str, node: str, **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "nginx"},
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": node, "containers": [{"name": "nginx", "image": "nginx"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.7",
                       "containerStatuses": [{"name": "nginx", "ready": True, "restartCount": 2}], **status}}


def _member(cluster: str) -> Starlette:
    # a pod reporting only podIPs (as a dual-stack kubelet may) prints its first address, as kubectl does
    pods = [_pod(f"nginx-{cluster}-b", f"{cluster}-node1", podIP=None, podIPs=[{"ip": "10.0.0.8"}]),
            _pod(f"nginx-{cluster}-a", f"{cluster}-node2")]

    async def listing(request: Request) -> Response:
        return JSONResponse({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "5"},
                             "items": pods})

    nginx = {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "nginx", "namespace": "default",
                          "creationTimestamp": "2026-01-01T00:00:00Z"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "nginx"}}}}

    async def deployment(request: Request) -> Response:
        return JSONResponse(nginx)

    async def deployments(request: Request) -> Response:
        return JSONResponse({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {},
                             "items": [nginx]})

    async def log(request: Request) -> Response:
        pod, query = request.path_params["pod"], request.url.query
        return PlainTextResponse(f"{cluster} {pod} started\n{cluster} {pod} ready ({query})\n")

    return Starlette(routes=[
        Route("/api/v1/namespaces/default/pods", listing),
        Route("/api/v1/namespaces/default/pods/{pod}/log", log),
        Route("/apis/apps/v1/namespaces/default/deployments", deployments),
        Route("/apis/apps/v1/namespaces/default/deployments/nginx", deployment)])


class _Fakes:
    """Reaches ``https://fake.NAME`` in-process."""

    def __init__(self) -> None:
        self._members = {name: InProcessTransport(_member(name)) for name in ("member1", "member2")}

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        endpoint = str(cluster["spec"].get("apiEndpoint") or "")
        if not endpoint.startswith("https://fake."):
            return None
        return Connection("http://member.test", transport=self._members[endpoint.removeprefix("https://fake.")])


class Cli:
    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.runner = CliRunner()

    def run(self, *args: str, stdin: str | None = None) -> Any:
        return self.runner.invoke(app, [*args, "--kubeconfig", str(self.kubeconfig)], input=stdin, env=WIDE)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.exit_code == 0, f"fleetkeeper {' '.join(args)} failed ({done.exit_code}):\n{done.output}"
        return str(done.stdout)


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    root = tmp_path_factory.mktemp("members")
    clock = SystemClock()
    tls = ensure_certificates(root / "pki", clock=clock)

    @asynccontextmanager
    async def factory() -> AsyncIterator[ApiServerApp]:
        store = open_store("memory://", clock=clock)
        try:
            served = build_app(store, clock=clock, tokens=Tokens(admin=ADMIN))
            served.proxy.transports.insert(0, _Fakes())
            yield served
        finally:
            await store.close()

    server = ServerThread(factory, tls=tls).start()
    try:
        kubeconfig = write_kubeconfig(root / "kubeconfig", server.url, tls.ca_pem(), ADMIN)
        made = Cli(kubeconfig)
        made.ok("apply", "-f", "-", stdin=CLUSTERS)
        asyncio.run(_summaries(kubeconfig))
        yield made
    finally:
        server.stop()


async def _summaries(kubeconfig: Path) -> None:
    async with RestClient.from_kubeconfig(kubeconfig) as client:
        for name, cpu in (("member1", "8"), ("member2", "4")):
            cluster = await client.get(Cluster, name)
            doc = cluster.to_dict()
            doc["status"] = {"resourceSummary": {
                "allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                "allocated": {"cpu": "2", "memory": "4Gi", "pods": "11"}}}
            await client.update_status(Cluster.from_dict(doc))


def _rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


def test_get_with_clusters_reads_each_member_with_a_cluster_column(cli: Cli) -> None:
    """kubectl's columns for the kind (:mod:`fleetkeeper.api.printing`), with CLUSTER after NAME."""
    rows = _rows(cli.ok("get", "pods", "-C", "member1,member2", "-o", "wide"))
    assert rows[0] == ["NAME", "CLUSTER", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED",
                       "NODE", "READINESS", "GATES"]
    assert [r[:5] + r[6:] for r in rows[1:]] == [  # all but AGE
        [f"nginx-{cluster}-{pod}", cluster, "1/1", "Running", "2", ip, f"{cluster}-{node}", *["<none>"] * 2]
        for cluster in ("member1", "member2") for pod, ip, node in (("a", "10.0.0.7", "node2"),
                                                                    ("b", "10.0.0.8", "node1"))]
    deployments = _rows(cli.ok("get", "deploy", "-C", "member1", "-o", "wide"))
    assert deployments[0] == ["NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS",
                              "IMAGES", "SELECTOR"]
    assert deployments[1][:5] == ["nginx", "member1", "0/2", "0", "0"]


def test_operation_scope_members_reads_every_push_member_and_all_adds_the_planes(cli: Cli) -> None:
    members = _rows(cli.ok("get", "pods", "--operation-scope", "members"))
    assert {r[1] for r in members[1:]} == {"member1", "member2"}
    everything = cli.ok("get", "deploy", "nginx", "--operation-scope", "all", "-o", "yaml")
    assert [i["metadata"]["name"] for i in yaml.safe_load(everything)["items"]] == ["nginx", "nginx", "nginx"]
    table = _rows(cli.ok("get", "deploy", "--operation-scope", "all"))
    assert [r[:2] for r in table[1:]] == [["nginx", "Karmada"], ["nginx", "member1"], ["nginx", "member2"]]


def test_a_pull_cluster_named_with_c_is_reported_after_the_others(cli: Cli) -> None:
    done = cli.run("get", "pods", "-C", "member1,edge1")
    assert done.exit_code == 1
    assert "nginx-member1-a" in done.stdout
    assert "cluster edge1: Error from server (ServiceUnavailable)" in done.output
    assert "Pull mode" in done.output


def test_bad_cluster_flags_exit_2_naming_them(cli: Cli) -> None:
    assert cli.run("get", "pods", "-C", "Not_A_Name").exit_code == 2
    assert cli.run("get", "pods", "--operation-scope", "everything").exit_code == 2
    assert cli.run("get", "pods", "-C", "member1", "-w").exit_code == 2


def test_logs_of_a_deployment_reads_one_of_its_pods_through_the_proxy(cli: Cli) -> None:
    done = cli.run("logs", "-C", "member1", "deploy/nginx", "--tail", "5")
    assert done.exit_code == 0, done.output
    assert done.stdout == "member1 nginx-member1-a started\nmember1 nginx-member1-a ready (tailLines=5)\n"
    assert "Found 2 pods, using pod/nginx-member1-a" in done.stderr
    followed = cli.ok("logs", "-C", "member2", "pod/nginx-member2-b", "-f")
    assert followed.splitlines()[-1] == "member2 nginx-member2-b ready (follow=true)"


def test_top_clusters_shows_allocatable_and_allocated(cli: Cli) -> None:
    rows = _rows(cli.ok("top", "clusters"))
    assert rows[0] == ["NAME", "CPU-ALLOCATABLE", "CPU-ALLOCATED", "CPU%", "MEMORY-ALLOCATABLE",
                       "MEMORY-ALLOCATED", "MEMORY%", "PODS-ALLOCATABLE", "PODS-ALLOCATED", "PODS%"]
    assert rows[1:] == [
        ["edge1", "<none>", "<none>", "<none>", "<none>", "<none>", "<none>", "<none>", "<none>", "<none>"],
        ["member1", "8000m", "2000m", "25%", "16384Mi", "4096Mi", "25%", "110", "11", "10%"],
        ["member2", "4000m", "2000m", "50%", "16384Mi", "4096Mi", "25%", "110", "11", "10%"]]


def test_a_member_kubeconfig_is_refused_for_an_unknown_a_pull_or_a_malformed_cluster(cli: Cli) -> None:
    unknown = cli.run("kubeconfig", "--cluster", "nowhere")
    assert unknown.exit_code == 1 and 'cluster "nowhere" not found' in unknown.output
    pulled = cli.run("kubeconfig", "--cluster", "edge1")
    assert pulled.exit_code == 1 and "Pull mode" in pulled.output
    malformed = cli.run("kubeconfig", "--cluster", "Edge_1")
    assert malformed.exit_code == 2 and "not a cluster name" in malformed.output
