"""Batches on etcd: one transaction for many changes, and what other stores see of it.

A batch is committed as few etcd transactions as fit (each change with its own slot of
the transaction's revision), so these tests look at what that must not change: another
store (a process of its own, as far as etcd can tell) sees every change, once, in
order, with the object the writer built; a change that loses a race fails alone while
the rest commit; transactions etcd refuses for their size are split; a transaction
whose reply was lost is recognised when it is sent again; and creates know which names
are taken without reading etcd each time, including names other stores took or freed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc  # type: ignore[import-untyped]
import pytest

from fleetkeeper import errors
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store
from fleetkeeper.store import etcd as etcd_backend
from fleetkeeper.store._conformance_base import (
    CONFIGMAP,
    DEPLOY,
    HANG_GUARD,
    configmap,
    deployment,
    rv,
    summary,
    take,
)
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.etcd import EtcdBackend
from fleetkeeper.store.etcd_layout import SLOTS, TXN_CHANGES, etcd_revision

from .etcd_server import EtcdServer


def _backend(store: Store) -> EtcdBackend:
    backend = store.backend
    assert isinstance(backend, EtcdBackend)
    return backend


def _increasing(revisions: list[int]) -> bool:
    return revisions == sorted(set(revisions))


async def _caught_up(store: Store, revision: int) -> None:
    """Wait until ``store``'s feed has delivered ``revision`` (another store wrote it)."""
    async with asyncio.timeout(HANG_GUARD):
        await _backend(store)._delivered(revision)
    assert store.revision >= revision


async def test_a_batch_deleting_several_objects_reaches_another_store_change_by_change(
    pair: tuple[Store, Store],
) -> None:
    one, two = pair
    for i in range(4):
        await one.create(deployment(f"d{i}", finalizers=["x/y"] if i == 3 else None))
    held = await one.delete(DEPLOY, "default", "d3")  # waits for its finalizer
    start = one.revision
    await _caught_up(two, start)
    live = two.watch(DEPLOY)
    async with one.batch():
        gone = [await one.delete(DEPLOY, "default", f"d{i}") for i in range(3)]
        released = await one.update({**held, "metadata": {**held["metadata"], "finalizers": []}})
        made = await one.create(deployment("new"))
    written = [*(("DELETED", f"d{i}", rv(g)) for i, g in enumerate(gone)), ("DELETED", "d3", rv(released)),
               ("ADDED", "new", rv(made))]
    assert _increasing([w[2] for w in written]) and written[0][2] > start
    assert len({etcd_revision(w[2]) for w in written}) == 1  # one transaction
    replayed = two.watch(DEPLOY, since=start)
    for watch in (live, replayed):
        events = await take(watch, 5)
        assert summary(events) == written
        assert [e.object for e in events] == [*gone, released, made]
        assert events[3].object["metadata"]["finalizers"] == []
    assert two.revision == one.revision == rv(made)
    assert [i["metadata"]["name"] for i in (await two.list(DEPLOY)).items] == ["new"]


async def test_a_batch_longer_than_a_transaction_takes_several_in_order(pair: tuple[Store, Store]) -> None:
    one, two = pair
    count = 2 * TXN_CHANGES + 46
    live = two.watch(CONFIGMAP)
    async with one.batch():
        made = [await one.create(configmap(f"c{i:03}", i=str(i))) for i in range(count)]
    revisions = [rv(m) for m in made]
    assert _increasing(revisions)
    assert len({etcd_revision(r) for r in revisions}) == 3
    assert [e.revision for e in await take(live, count)] == revisions
    listed = (await two.list(CONFIGMAP)).items
    assert [rv(i) for i in listed] == revisions  # what the batch handed out is what was stored
    middle = revisions[TXN_CHANGES + 10]
    resumed = await take(two.watch(CONFIGMAP, since=middle), count - TXN_CHANGES - 11)
    assert [e.revision for e in resumed] == revisions[TXN_CHANGES + 11:]


@pytest.mark.parametrize("race", ["update", "create", "delete"])
async def test_a_change_that_lost_a_race_fails_alone_and_the_rest_of_its_batch_commits(
    pair: tuple[Store, Store], race: str
) -> None:
    one, two = pair
    a = await one.create(deployment("a", spec={"replicas": 1}))
    await one.create(deployment("b"))
    await _caught_up(two, one.revision)
    watch = one.watch(None)
    expected: type[errors.ApiError] = {"update": errors.Conflict, "create": errors.AlreadyExists,
                                       "delete": errors.NotFound}[race]
    with pytest.raises(expected):
        async with two.batch():
            first = await two.create(configmap("n1"))
            if race == "create":
                await two.create(deployment("x"))
                won = await one.create(deployment("x", spec={"replicas": 3}))
            else:
                changed = await two.update({**a, "spec": {"replicas": 2}})
                await two.update({**changed, "spec": {"replicas": 5}})  # builds on the change that fails
                if race == "update":
                    won = await one.update({**a, "spec": {"replicas": 3}})
                else:
                    won = await one.delete(DEPLOY, "default", "a")
            gone = await two.delete(DEPLOY, "default", "b")
            last = await two.create(configmap("n2"))
    events = summary(await take(watch, 4))
    names = {(i["kind"], i["metadata"]["name"]): i for kind in (DEPLOY, CONFIGMAP)
             for i in (await one.list(kind)).items}
    assert {"n1", "n2"} <= {name for _, name in names}
    assert ("Deployment", "b") not in names
    if race == "delete":
        assert ("Deployment", "a") not in names
    else:
        winner = names[("Deployment", "x" if race == "create" else "a")]
        assert winner["spec"] == {"replicas": 3} and rv(winner) == rv(won)
    committed = [e for e in events if e[1] != won["metadata"]["name"]]
    assert committed == [("ADDED", "n1", committed[0][2]), ("DELETED", "b", committed[1][2]),
                         ("ADDED", "n2", committed[2][2])]
    assert _increasing([e[2] for e in events])
    assert min(e[2] for e in committed) >= rv(first) and max(e[2] for e in committed) >= rv(last)
    assert rv(gone) <= committed[1][2]
    assert one.revision == events[-1][2]


async def test_a_batch_whose_reply_was_lost_is_recognised_when_sent_again(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    other = open_store(etcd.url, clock=SystemClock())
    try:
        base = await store.create(deployment("a"))
        await store.create(deployment("b"))
        await _caught_up(other, store.revision)
        stub = _backend(store)._stub()
        real, lost = stub.Txn, list[Any]()

        async def reply_lost_once(request: Any, **kwargs: Any) -> Any:
            reply = await real(request, **kwargs)
            if not lost:
                lost.append(request)
                raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(),
                                           grpc.aio.Metadata(), details="connection reset")
            return reply

        stub.Txn = reply_lost_once
        watch = other.watch(DEPLOY)
        async with store.batch():
            made = await store.create(deployment("c"))
            changed = await store.update({**base, "spec": {"replicas": 4}})
            gone = await store.delete(DEPLOY, "default", "b")
        assert lost  # the first send was applied, its reply lost; the second failed its guards
        events = await take(watch, 3)
        assert summary(events) == [("ADDED", "c", rv(made)), ("MODIFIED", "a", rv(changed)),
                                   ("DELETED", "b", rv(gone))]
        assert store.revision == rv(gone) and etcd_revision(rv(made)) == etcd_revision(rv(gone))
        stub.Txn = real
        later = await store.create(deployment("d"))
        assert rv(later) // SLOTS == rv(gone) // SLOTS + 1  # nothing else was written in between
    finally:
        await store.close()
        await other.close()


@pytest.mark.parametrize(("objects", "size"), [(90, 20_000), (100, 40_000)],
                         ids=["over etcd's request limit", "over etcd's gRPC message limit"])
async def test_a_transaction_too_large_for_etcd_is_split(etcd: EtcdServer, objects: int, size: int) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        watch = store.watch(CONFIGMAP)
        async with store.batch():
            for i in range(objects):
                await store.create(configmap(f"big{i:03}", blob=f"{i:03}" + "x" * size))
        listed = (await store.list(CONFIGMAP)).items
        assert len(listed) == objects and all(len(i["data"]["blob"]) == size + 3 for i in listed)
        revisions = [rv(i) for i in listed]
        assert _increasing(revisions) and len({etcd_revision(r) for r in revisions}) > 1
        assert [e.revision for e in await take(watch, objects)] == revisions
        with pytest.raises(errors.RequestEntityTooLarge):
            await store.create(configmap("huge", blob="x" * 3_000_000))
    finally:
        await store.close()


async def test_creates_in_a_listed_space_do_not_read_etcd_one_by_one(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        await store.create(configmap("first"))  # lists the space
        stub = _backend(store)._stub()
        real, ranges = stub.Range, []

        async def counted(request: Any, **kwargs: Any) -> Any:
            ranges.append(request.key)
            return await real(request, **kwargs)

        stub.Range = counted
        async with store.batch():
            for i in range(50):
                await store.create(configmap(f"c{i}"))
        with pytest.raises(errors.AlreadyExists):
            await store.create(configmap("c7"))  # a taken name is confirmed by a read
        stub.Range = real
        assert ranges == [b"/fleetkeeper//ConfigMap/default/c7"]
        assert len((await store.list(CONFIGMAP)).items) == 51
    finally:
        await store.close()


async def test_a_create_knows_the_names_another_store_took_or_freed(pair: tuple[Store, Store]) -> None:
    one, two = pair
    await one.create(configmap("a"))  # one lists the space
    taken = await two.create(configmap("b"))
    gone = await two.delete(CONFIGMAP, "default", "a")
    await _caught_up(one, two.revision)
    async with one.batch():
        with pytest.raises(errors.AlreadyExists):
            await one.create(configmap("b"))  # refused by the create itself
        again = await one.create(configmap("a"))
    assert rv(again) > rv(gone)
    assert (await one.get(CONFIGMAP, "default", "b"))["metadata"]["uid"] == taken["metadata"]["uid"]


async def test_a_name_taken_by_a_create_not_delivered_yet_is_refused_at_commit(
    pair: tuple[Store, Store],
) -> None:
    one, two = pair
    await one.create(configmap("a"))
    taken = await two.create(configmap("b"))
    await _caught_up(one, two.revision)
    # as if one's feed had not delivered two's create yet
    unseen = Change("DELETED", Key("", "ConfigMap", "default", "b"), Record(b"{}", 0), None)
    _backend(one)._presence.seen([unseen])
    with pytest.raises(errors.AlreadyExists):
        await one.create(configmap("b"))
    with pytest.raises(errors.AlreadyExists):
        async with one.batch():
            await one.create(configmap("c"))
            await one.create(configmap("b"))  # the guard refuses it when the batch commits
            await one.create(configmap("d"))
    assert [i["metadata"]["name"] for i in (await one.list(CONFIGMAP)).items] == ["a", "b", "c", "d"]
    assert (await one.get(CONFIGMAP, "default", "b"))["metadata"]["uid"] == taken["metadata"]["uid"]


@pytest.mark.parametrize("grown", [False, True], ids=["listed too large", "grown too large"])
async def test_creates_in_a_space_too_large_to_keep_read_etcd(
    etcd: EtcdServer, monkeypatch: pytest.MonkeyPatch, grown: bool
) -> None:
    monkeypatch.setattr(etcd_backend, "PRESENCE_NAMES", 8)  # a space may keep 2 names
    if not grown:
        seeder = open_store(etcd.url, clock=SystemClock())
        async with seeder.batch():
            for i in range(5):
                await seeder.create(configmap(f"s{i}"))
        await seeder.close()
    store = open_store(etcd.url, clock=SystemClock())
    try:
        async with store.batch():
            made = [await store.create(configmap(f"c{i}")) for i in range(4)]
            with pytest.raises(errors.AlreadyExists):
                await store.create(configmap("c1"))
        if not grown:
            with pytest.raises(errors.AlreadyExists):
                await store.create(configmap("s3"))
        assert len(_backend(store)._presence) == 0
        listed = (await store.list(CONFIGMAP)).items
        assert [rv(i) for i in listed if i["metadata"]["name"].startswith("c")] == [rv(m) for m in made]
    finally:
        await store.close()
