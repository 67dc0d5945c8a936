"""One identity for replicas sharing a store: CA, serving certificate, admin and agent tokens.

Two "replicas" here are two API servers over one memory store, each with its own
:class:`StoreTokens`, exactly as two ``fleetkeeper up`` share one etcd.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from cryptography import x509

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper import errors
from fleetkeeper.apiserver import InProcessTransport, build_app, identity
from fleetkeeper.apiserver.certs import certificate_hosts, ensure_certificates
from fleetkeeper.apiserver.credentials import StoreTokens
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store

CLOCK = SystemClock()
SECRETS = "/api/v1/namespaces/karmada-system/secrets"


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    opened = open_store("memory://", clock=CLOCK)
    try:
        yield opened
    finally:
        await opened.close()


async def replica(store: Store, hosts: list[str] | None = None) -> tuple[identity.Identity, StoreTokens]:
    plane = await identity.load_identity(store, clock=CLOCK, hosts=hosts or ["127.0.0.1"])
    tokens = StoreTokens(store, admin=plane.admin_token, clock=CLOCK)
    await tokens.start()
    return plane, tokens


async def eventually(check: Callable[[], bool], what: str, within: float = 1.0) -> None:
    """``check()`` holds within ``within`` seconds (the watch delivers in milliseconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not check():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.01)


def agent_of(tokens: StoreTokens, token: str) -> str | None:
    try:
        return tokens.authenticate(f"Bearer {token}").cluster
    except errors.Unauthorized:
        return None


async def test_replicas_starting_together_share_one_ca_certificate_and_admin_token(store: Store) -> None:
    planes = await asyncio.gather(*(identity.load_identity(store, clock=CLOCK, hosts=["127.0.0.1"])
                                    for _ in range(3)))
    assert len({p.ca_cert for p in planes}) == 1
    assert len({p.admin_token for p in planes}) == 1
    assert len({p.serving.cert for p in planes}) == 1
    assert len({p.name for p in planes}) == 1 and planes[0].name.startswith("fleetkeeper-")
    listed = await store.list(identity.SECRET, identity.NAMESPACE)
    assert sorted(o["metadata"]["name"] for o in listed.items) == [
        identity.ADMIN_SECRET, identity.SERVING_SECRET, identity.CA_SECRET]


async def test_a_replica_on_a_new_address_widens_the_shared_serving_certificate(store: Store) -> None:
    first = await identity.load_identity(store, clock=CLOCK, hosts=["127.0.0.1"])
    second = await identity.load_identity(store, clock=CLOCK, hosts=["10.1.2.3", "lb.example"])
    assert second.ca_cert == first.ca_cert and second.serving.cert != first.serving.cert
    covered = set(certificate_hosts(second.serving.cert))
    assert {"127.0.0.1", "::1", "localhost", identity.STABLE_NAME, "10.1.2.3", "lb.example"} <= covered
    third = await identity.load_identity(store, clock=CLOCK, hosts=["lb.example"])
    assert third.serving == second.serving  # covered already: reused, not issued again
    issuer = x509.load_pem_x509_certificate(third.serving.cert).issuer
    assert issuer == x509.load_pem_x509_certificate(first.ca_cert).subject


async def test_a_token_issued_on_one_replica_works_on_another_and_a_revoke_reaches_all(store: Store) -> None:
    _, one = await replica(store)
    _, two = await replica(store)
    try:
        token = await one.issue("edge1")
        await eventually(lambda: agent_of(two, token) == "edge1", "replica two accepts edge1's token")
        assert await two.issue("edge1") == token  # issued once: the same token, not a second one
        await two.revoke("edge1")
        assert agent_of(two, token) is None
        await eventually(lambda: agent_of(one, token) is None, "replica one refuses the revoked token")
        rotated = await one.issue("edge2")
        fresh = await two.issue("edge2", rotate=True)
        assert fresh != rotated
        await eventually(lambda: agent_of(one, rotated) is None and agent_of(one, fresh) == "edge2",
                         "replica one follows a rotation")
    finally:
        await one.stop()
        await two.stop()


async def test_the_secrets_are_the_admins_alone(store: Store) -> None:
    plane, tokens = await replica(store)
    agent = await tokens.issue("member1")
    app = build_app(store, clock=CLOCK, tokens=tokens)
    transport = InProcessTransport(app)

    def call(token: str | None) -> Callable[[str], Awaitable[httpx.Response]]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}

        async def get(path: str) -> httpx.Response:
            async with httpx.AsyncClient(transport=transport, base_url="http://apiserver.test",
                                         headers=headers) as http:
                return await http.get(path)
        return get

    try:
        own = f"{SECRETS}/{identity.agent_secret_name('member1')}"
        paths = (SECRETS, f"{SECRETS}/{identity.CA_SECRET}", own, "/api/v1/secrets", f"{SECRETS}?watch=true")
        for path in paths:
            assert (await call(agent)(path)).status_code == 403, path
            assert (await call(None)(path)).status_code == 401, path
        seen = await call(plane.admin_token)(f"{SECRETS}/{identity.CA_SECRET}")
        assert seen.status_code == 200 and "tls.key" in seen.json()["data"]
    finally:
        app.close()
        await tokens.stop()


async def test_deleting_a_cluster_through_any_replica_revokes_its_agent_everywhere(store: Store) -> None:
    plane, one = await replica(store)
    _, two = await replica(store)
    app = build_app(store, clock=CLOCK, tokens=one)
    try:
        token = await one.issue("edge3")
        await eventually(lambda: agent_of(two, token) == "edge3", "replica two knows edge3")
        async with httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://apiserver.test",
                                     headers={"Authorization": f"Bearer {plane.admin_token}"}) as http:
            clusters = "/apis/cluster.karmada.io/v1alpha1/clusters"
            pull = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                    "metadata": {"name": "edge3"}, "spec": {"syncMode": "Pull"}}
            made = await http.post(clusters, json=pull)
            assert made.status_code == 201, made.text
            gone = await http.delete(f"{clusters}/edge3")
            assert gone.status_code == 200, gone.text
        await eventually(lambda: agent_of(two, token) is None, "replica two refuses edge3's token")
    finally:
        app.close()
        await one.stop()
        await two.stop()


async def test_an_earlier_state_directory_is_adopted_once(store: Store, tmp_path: Path) -> None:
    old = ensure_certificates(tmp_path / "pki", clock=CLOCK)
    earlier = {"admin": "old-admin", "agents": {"edge4": "old-edge4"}}
    (tmp_path / "tokens.json").write_text(json.dumps(earlier))
    plane = await identity.load_identity(store, clock=CLOCK, hosts=["127.0.0.1"], state_dir=tmp_path)
    assert plane.ca_cert == old.ca_pem() and plane.admin_token == "old-admin"
    assert not (tmp_path / "tokens.json").exists()  # the store is the truth from now on
    tokens = StoreTokens(store, admin=plane.admin_token, clock=CLOCK)
    await tokens.start()
    try:
        assert agent_of(tokens, "old-edge4") == "edge4"
    finally:
        await tokens.stop()


async def test_tokens_written_at_once_reach_every_replica(store: Store) -> None:
    _, one = await replica(store)
    _, two = await replica(store)
    try:
        issued = {f"edge{i}": f"token-{i}" for i in range(12)}
        async with store.batch():  # one transaction, published at once
            for cluster, token in issued.items():
                await store.create(identity.agent_token_secret(cluster, token))
        await one.revoke("edge0")
        wanted = {token: (None if cluster == "edge0" else cluster) for cluster, token in issued.items()}
        await eventually(lambda: all(agent_of(two, t) == c for t, c in wanted.items()),
                         "replica two knows every token written, and not the revoked one")
    finally:
        await one.stop()
        await two.stop()
