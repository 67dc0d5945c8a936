"""The CLI with a non-admin token shows what the token may read, and says what it may not.

A ServiceAccount bound to ``view`` in ``team-a`` (and, cluster-wide, to a role that reads
Clusters only) runs ``status``, ``get``, ``describe`` and ``whatif`` against a real API server
(HTTPS on a loopback port, as in tests/cli/test_commands.py): the parts RBAC refuses are named
with the server's reason instead of ending the command.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from fleetkeeper.apiserver import (
    ApiServerApp,
    ServerThread,
    Tokens,
    build_app,
    ensure_certificates,
    write_kubeconfig,
)
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.main import app
from fleetkeeper.store import open_store

ADMIN = "restricted-admin-token"
SA = "system:serviceaccount:team-a:viewer"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
PERMANENT = "resourcebinding.karmada.io/permanent-id"
WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "team-a", "name": "web"}
SEED: list[tuple[str, dict[str, Any]]] = [
    ("/api/v1/namespaces", {"metadata": {"name": "team-a"}}),
    ("/api/v1/namespaces", {"metadata": {"name": "karmada-es-member1"}}),
    ("/apis/cluster.karmada.io/v1alpha1/clusters", {
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
        "spec": {"syncMode": "Pull"}}),
    ("/apis/work.karmada.io/v1alpha2/namespaces/team-a/resourcebindings", {
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "web-deployment", "labels": {PERMANENT: "p-1"}},
        "spec": {"resource": WEB, "replicas": 2, "clusters": [{"name": "member1", "replicas": 2}]}}),
    ("/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", {
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "web-deployment-1", "labels": {PERMANENT: "p-1"}}, "spec": {}}),
    ("/apis/fleetkeeper.io/v1alpha1/timelineentries", {
        "apiVersion": "fleetkeeper.io/v1alpha1", "kind": "TimelineEntry", "metadata": {"name": "tl-1"},
        "time": "2026-01-01T10:00:00Z", "action": "Scheduled", "message": "scheduled to {member1:2}",
        "component": "test", "subject": {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                                         "namespace": "team-a", "name": "web-deployment"}}),
    ("/api/v1/namespaces/team-a/serviceaccounts", {"metadata": {"name": "viewer"}}),
    (f"{RBAC}/namespaces/team-a/rolebindings", {
        "metadata": {"name": "viewer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": "team-a"}]}),
    (f"{RBAC}/clusterroles", {
        "metadata": {"name": "cluster-reader"},
        "rules": [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"],
                   "verbs": ["get", "list", "watch"]}]}),
    (f"{RBAC}/clusterrolebindings", {
        "metadata": {"name": "viewer-reads-clusters"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": "team-a"}]}),
]


class Cli:
    def __init__(self, admin: Path, viewer: Path) -> None:
        self.admin, self.viewer = admin, viewer
        self.runner = CliRunner()

    def run(self, *args: str, admin: bool = False) -> Any:
        kubeconfig = self.admin if admin else self.viewer
        return self.runner.invoke(app, [*args, "--kubeconfig", str(kubeconfig)], env={"COLUMNS": "400"})


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    root = tmp_path_factory.mktemp("restricted")
    clock = SystemClock()
    tls = ensure_certificates(root / "pki", clock=clock)

    @asynccontextmanager
    async def factory() -> AsyncIterator[ApiServerApp]:
        store = open_store(f"sqlite:///{root / 'state.db'}", clock=clock)
        try:
            yield build_app(store, clock=clock, tokens=Tokens(admin=ADMIN))
        finally:
            await store.close()

    server = ServerThread(factory, tls=tls).start()
    try:
        ca = root / "ca.crt"
        ca.write_bytes(tls.ca_pem())
        verify = ssl.create_default_context(cafile=str(ca))
        headers = {"Authorization": f"Bearer {ADMIN}"}
        with httpx.Client(base_url=server.url, verify=verify, headers=headers) as http:
            for path, body in SEED:
                made = http.post(path, json=body)
                assert made.status_code == 201, made.text
            answer = http.post("/api/v1/namespaces/team-a/serviceaccounts/viewer/token", json={
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
            assert answer.status_code == 201, answer.text
        token = answer.json()["status"]["token"]
        yield Cli(write_kubeconfig(root / "admin", server.url, tls.ca_pem(), ADMIN),
                  write_kubeconfig(root / "viewer", server.url, tls.ca_pem(), token, namespace="team-a",
                                   user="viewer"))
    finally:
        server.stop()


def test_status_shows_the_sections_the_token_may_read_and_names_the_others(cli: Cli) -> None:
    done = cli.run("status")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert "members    0 Ready, 1 not Ready" in lines and any(line.startswith("  member1") for line in lines)
    refused = {line.split()[0]: line for line in lines if " not shown: " in line}
    assert set(refused) == {"leader", "replicas", "takeovers"}
    assert f'User "{SA}" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace ' \
           '"karmada-system"' in refused["leader"]
    assert 'cannot list resource "events"' in refused["takeovers"]
    data = json.loads(cli.run("status", "-o", "json").stdout)
    assert set(data["forbidden"]) == {"leader", "replicas", "takeovers"}
    assert data["members"][0]["name"] == "member1"
    assert "not shown" not in cli.run("status", admin=True).stdout


def test_get_lists_each_kind_the_token_may_read_and_refuses_the_others_in_kubernetes_words(cli: Cli) -> None:
    assert "web-deployment" in cli.run("get", "rb").stdout
    assert "member1" in cli.run("get", "clusters").stdout
    refusals = (
        (("get", "works", "-A"), 'cannot list resource "works" in API group "work.karmada.io" at the cluster '
                                 'scope'),
        (("get", "timeline"), 'cannot list resource "timelineentries"'),
        (("get", "rb", "-n", "karmada-es-member1"), 'in the namespace "karmada-es-member1"'),
        (("get", "secrets"), 'cannot list resource "secrets"'),
    )
    for args, what in refusals:
        done = cli.run(*args)
        assert done.exit_code == 1, (args, done.output)
        assert "Error from server (Forbidden)" in done.stderr and what in done.stderr, (args, done.output)


def test_describe_binding_marks_the_parts_the_token_may_not_read(cli: Cli) -> None:
    done = cli.run("describe", "binding", "team-a/web-deployment")
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "apps/v1 Deployment team-a/web" in out and "member1:2" in out
    assert f'Works: not shown: works.work.karmada.io is forbidden: User "{SA}" cannot list resource "works"' \
        in " ".join(out.split())
    assert "Failover timeline: not shown: " in out and "timelineentries" in out.split("Failover timeline")[1]
    admin = cli.run("describe", "binding", "team-a/web-deployment", admin=True).stdout
    assert "not shown" not in admin and "web-deployment-1" in admin and "scheduled to {member1:2}" in admin


def test_describe_cluster_marks_the_parts_the_token_may_not_read(cli: Cli) -> None:
    done = cli.run("describe", "cluster", "member1")
    assert done.exit_code == 0, done.output
    out = " ".join(done.stdout.split())
    assert "Mode: Pull" in out and "If it fails: unknown (" in out
    assert 'Heartbeat: not shown: leases.coordination.k8s.io "member1" is forbidden' in out
    assert "Workloads scheduled here: not shown: " in out and "Failover timeline: not shown: " in out


def test_whatif_says_which_reads_the_token_lacks(cli: Cli) -> None:
    done = cli.run("whatif", "--down", "member1")
    assert done.exit_code == 1, done.output
    said = " ".join(done.stderr.split())
    assert "whatif reads the whole fleet" in said and 'cannot list resource "resourcebindings"' in said
    assert "or answer offline with -f FILE" in said
    assert cli.run("whatif", "--down", "member1", admin=True).exit_code in (0, 3)
