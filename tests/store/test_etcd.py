"""The etcd backend against a real etcd: the store conformance suite, and what etcd holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]
import orjson
import pytest
from aetcd import rpc

from fleetkeeper import errors
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import etcd as etcd_backend
from fleetkeeper.store import open_store
from fleetkeeper.store._conformance_base import DEPLOY, cluster, configmap, deployment, rv, summary, take
from fleetkeeper.store.etcd_layout import SLOTS
from fleetkeeper.store.testing import StoreConformance

from .etcd_server import EtcdServer, etcd_server


class TestEtcdStore(StoreConformance):
    durable = True
    etcd: EtcdServer

    @pytest.fixture(autouse=True)
    def _etcd(self, tmp_path: Path) -> Iterator[None]:
        self.etcd = etcd_server(tmp_path / "etcd")
        yield
        self.etcd.stop()

    def url(self, tmp_path: Path) -> str:
        return self.etcd.url


# ------------------------------------------------------------------ what is stored in etcd, and how


async def _raw_range(server: EtcdServer, key: bytes, end: bytes | None = None, revision: int = 0) -> Any:
    channel = rpc.insecure_channel(f"127.0.0.1:{server.client_port}")
    try:
        request = rpc.RangeRequest(key=key, range_end=end or b"", revision=revision)
        return await rpc.KVStub(channel).Range(request, timeout=10)
    finally:
        await channel.close()


async def test_objects_live_under_readable_keys_with_mod_revision_and_slot_as_resource_version(
    etcd: EtcdServer,
) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        made = [await store.create(deployment("web")), await store.create(configmap("cfg"))]
        async with store.batch():  # one transaction: one etcd revision, three slots
            made += [await store.create(cluster(f"member{i}")) for i in (1, 2, 3)]
        reply = await _raw_range(etcd, b"/fleetkeeper/", b"/fleetkeeper0")
        stored = {kv.key: kv for kv in reply.kvs}
        members = [b"/fleetkeeper/cluster.karmada.io/Cluster//member%d" % i for i in (1, 2, 3)]
        assert sorted(stored) == [b"/fleetkeeper/.revision", b"/fleetkeeper//ConfigMap/default/cfg",
                                  b"/fleetkeeper/apps/Deployment/default/web", *members]
        # etcd revisions 2, 3 and 4 (a fresh etcd is at 1): (mod_revision - 1) * 1024 + slot
        assert [rv(m) for m in made] == [1024, 2048, 3072, 3073, 3074]
        web = stored[b"/fleetkeeper/apps/Deployment/default/web"]
        assert web.mod_revision == 2
        stamp, _, body = web.value.partition(b"\n")
        assert stamp == made[0]["metadata"]["resourceVersion"].encode()
        assert orjson.loads(body) == made[0]
        assert {stored[m].mod_revision for m in members} == {4}
        assert [stored[m].value.partition(b"\n")[0] for m in members] == [b"3072", b"3073", b"3074"]
        mark = stored[b"/fleetkeeper/.revision"]
        assert mark.mod_revision == 4 and mark.value == b"2\n"  # the transaction's highest slot
        assert store.revision == rv(made[-1]) == 3074
    finally:
        await store.close()


async def test_a_prefix_keeps_stores_apart_in_one_etcd(etcd: EtcdServer) -> None:
    one = open_store(etcd.url + "?prefix=/one", clock=SystemClock())
    two = open_store(etcd.url + "?prefix=/two", clock=SystemClock())
    try:
        await one.create(deployment("a"))
        await two.create(deployment("b"))
        assert [i["metadata"]["name"] for i in (await one.list(DEPLOY)).items] == ["a"]
        assert [i["metadata"]["name"] for i in (await two.list(DEPLOY)).items] == ["b"]
        reply = await _raw_range(etcd, b"/one/", b"/one0")
        assert [kv.key for kv in reply.kvs] == [b"/one/.revision", b"/one/apps/Deployment/default/a"]
    finally:
        await one.close()
        await two.close()


@pytest.mark.parametrize(("namespace", "limit"), [(None, None), (None, 5), ("ns1", None), ("ns1", 3)],
                         ids=["a whole list", "pages of five", "one namespace", "one namespace in pages"])
async def test_lists_longer_than_a_chunk_take_several_requests(
    etcd: EtcdServer, monkeypatch: pytest.MonkeyPatch, namespace: str | None, limit: int | None
) -> None:
    monkeypatch.setattr(etcd_backend, "CHUNK", 4)
    store = open_store(etcd.url, clock=SystemClock())
    try:
        async with store.batch():
            for i in range(23):
                await store.create(deployment(f"d{i:02}", namespace=f"ns{i % 3}"))
        expected = sorted((f"ns{i % 3}", f"d{i:02}") for i in range(23) if namespace in (None, f"ns{i % 3}"))
        seen: list[tuple[str, str]] = []
        token: str | None = None
        for _ in range(50):
            page = await store.list(DEPLOY, namespace, limit=limit, continue_token=token)
            assert limit is None or len(page.items) <= limit
            seen.extend((i["metadata"]["namespace"], i["metadata"]["name"]) for i in page.items)
            token = page.continue_token
            if token is None:
                break
        assert seen == expected
    finally:
        await store.close()


@pytest.mark.parametrize("resume", [False, True], ids=["live", "replayed from history"])
async def test_releasing_the_last_finalizer_shows_the_final_state_as_deleted(
    etcd: EtcdServer, resume: bool
) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        live = store.watch(DEPLOY)
        made = await store.create(deployment("a", finalizers=["x/y"]))
        held = await store.delete(DEPLOY, "default", "a")
        held["metadata"]["finalizers"] = []
        gone = await store.update(held)
        watch = store.watch(DEPLOY, since=0) if resume else live
        events = await take(watch, 3)
        assert summary(events) == [("ADDED", "a", rv(made)), ("MODIFIED", "a", rv(held)),
                                   ("DELETED", "a", rv(gone))]
        assert events[2].object == gone and not gone["metadata"]["finalizers"]
    finally:
        await store.close()


async def test_retention_compacts_etcd_itself(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock(), history=5)
    try:
        revisions = [rv(await store.create(deployment(f"d{i}"))) for i in range(30)]
        assert store.backend.compacted == revisions[24]  # the 5 later changes are kept
        with pytest.raises(grpc.aio.AioRpcError, match="compacted"):
            await _raw_range(etcd, b"/fleetkeeper/", b"/fleetkeeper0", revision=20)
        other = open_store(etcd.url, clock=SystemClock())  # knows nothing of the compaction
        try:
            with pytest.raises(errors.Gone):
                await take(other.watch(DEPLOY, since=revisions[2]), 1)
            events = await take(other.watch(DEPLOY, since=revisions[26]), 3)
            assert [e.revision for e in events] == revisions[27:]
        finally:
            await other.close()
    finally:
        await store.close()


async def test_retention_counts_changes_not_transactions(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock(), history=5)
    try:
        revisions: list[int] = []
        for round_ in range(10):
            async with store.batch():  # three changes per etcd revision
                made = [await store.create(deployment(f"d{round_}-{i}")) for i in range(3)]
            revisions += [rv(m) for m in made]
        assert len({r // SLOTS for r in revisions}) == 10
        assert store.backend.compacted > 0
        with pytest.raises(errors.Gone):
            await take(store.watch(DEPLOY, since=revisions[0]), 1)
        events = await take(store.watch(DEPLOY, since=revisions[-6]), 5)  # the last five, across batches
        assert [e.revision for e in events] == revisions[-5:]
    finally:
        await store.close()
