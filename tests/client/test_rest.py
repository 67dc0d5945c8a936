"""The REST client passes the client conformance suite against a real API server in-process,
plus what only it promises (auth, kubeconfigs, the patch types of the API server)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from fleetkeeper import errors
from fleetkeeper.api.cluster import Cluster, ClusterSpec
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.apiserver import InProcessTransport, Tokens, build_app, write_kubeconfig
from fleetkeeper.client.interface import Client
from fleetkeeper.client.rest import RestClient, read_kubeconfig
from fleetkeeper.client.testing import ClientConformance, Deployment, deploy
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

SERVER = "http://apiserver.test"


class TestRestClient(ClientConformance):
    @asynccontextmanager
    async def open_client(self, *, history: int) -> AsyncIterator[Client]:
        clock = SystemClock()
        store = open_store("memory://", clock=clock, history=history)
        app = build_app(store, clock=clock, tokens=Tokens(admin="admin-token"))
        client = RestClient(SERVER, token="admin-token", transport=InProcessTransport(app))
        try:
            yield client
        finally:
            await client.aclose()
            app.close()
            await store.close()


@pytest.fixture
async def served() -> AsyncIterator[tuple[Tokens, InProcessTransport]]:
    clock = SystemClock()
    store = open_store("memory://", clock=clock)
    tokens = Tokens(admin="admin-token")
    app = build_app(store, clock=clock, tokens=tokens)
    yield tokens, InProcessTransport(app)
    app.close()
    await store.close()


async def test_a_wrong_token_is_unauthorized(served: tuple[Tokens, InProcessTransport]) -> None:
    _, transport = served
    async with RestClient(SERVER, token="wrong", transport=transport) as client:
        with pytest.raises(errors.Unauthorized):
            await client.list(Deployment)


async def test_without_a_token_nothing_is_written(served: tuple[Tokens, InProcessTransport]) -> None:
    _, transport = served
    async with RestClient(SERVER, transport=transport) as client:
        with pytest.raises(errors.Unauthorized):
            await client.create(deploy("web"))


async def test_strategic_merge_patch_merges_containers_by_name(
    served: tuple[Tokens, InProcessTransport],
) -> None:
    _, transport = served
    async with RestClient(SERVER, token="admin-token", transport=transport) as client:
        made = deploy("web")
        pods = made.field("spec")["template"]
        made.set_field("spec", {**made.field("spec"), "template": {**pods, "spec": {"containers": [
            {"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80}]},
            {"name": "sidecar", "image": "envoy:1"},
        ]}}})
        await client.create(made)
        patched = await client.patch(Deployment, "web", "default", patch_type="strategic", patch={
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}})
        containers = patched.field("spec")["template"]["spec"]["containers"]
        assert containers == [{"name": "app", "image": "nginx:1.26", "ports": [{"containerPort": 80}]},
                              {"name": "sidecar", "image": "envoy:1"}]


async def test_server_side_apply_creates_then_owns_fields(served: tuple[Tokens, InProcessTransport]) -> None:
    _, transport = served
    async with RestClient(SERVER, token="admin-token", transport=transport, field_manager="ctl") as client:
        intent = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
        made = await client.patch(Deployment, "web", "default", patch=intent, patch_type="apply")
        assert made.field("spec")["replicas"] == 2
        managers = [(m["manager"], m["operation"]) for m in made.metadata.managed_fields or []]
        assert managers == [("ctl", "Apply")]


async def test_unknown_fields_fail_a_typed_write_and_are_dropped_from_a_kept_kind(
    served: tuple[Tokens, InProcessTransport],
) -> None:
    _, transport = served
    async with RestClient(SERVER, token="admin-token", transport=transport) as client:
        await client.create(Cluster(metadata=ObjectMeta(name="m1"), spec=ClusterSpec(sync_mode="Push")))
        with pytest.raises(errors.BadRequest, match=r'unknown field "spec\.regoin"'):
            await client.patch(Cluster, "m1", patch={"spec": {"regoin": "eu"}})
        made = await client.create(deploy("web"))
        made.set_field("status", {"replicas": 1, "fromANewerMember": True})  # reflected as it was read
        written = await client.update_status(made)
        assert written.field("status") == {"replicas": 1}


def test_a_written_kubeconfig_reads_back(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "admin.kubeconfig", "https://127.0.0.1:6443", b"PEM", "tok",
                            namespace="team-a")
    assert path.stat().st_mode & 0o777 == 0o600
    creds = read_kubeconfig(path)
    assert (creds.server, creds.ca_pem, creds.token, creds.namespace) == (
        "https://127.0.0.1:6443", b"PEM", "tok", "team-a")
