"""Nothing acknowledged is lost when etcd itself is killed and restarted on the same data.

etcd acknowledges a write only after its write-ahead log is on disk, and the store
acknowledges only after etcd did, so a SIGKILLed etcd restarted on its data directory
must hold every acknowledged write. A store that stays open across the restart carries
on: its requests wait for etcd, and its watches resume where they were, with no gap and
no duplicate. (A killed fleetkeeper process is the conformance suite's durability test.)
"""

from __future__ import annotations

import asyncio

from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store
from fleetkeeper.store._conformance_base import CONFIGMAP, DEPLOY, configmap, deployment, rv, summary, take
from fleetkeeper.store._conformance_durability import _run_and_kill, _verify

from .etcd_server import EtcdServer


async def _state(url: str) -> dict[tuple[str, str], tuple[int, object]]:
    store = open_store(url, clock=SystemClock())
    try:
        items = (await store.list(DEPLOY)).items + (await store.list(CONFIGMAP)).items
        return {(i["kind"], i["metadata"]["name"]): (rv(i), i.get("spec", i.get("data"))) for i in items}
    finally:
        await store.close()


async def test_killing_and_restarting_etcd_loses_nothing_acknowledged(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        watch = store.watch(None)
        revisions = [rv(await store.create(deployment(f"d{i}", spec={"i": i}))) for i in range(20)]
        async with store.batch():
            for i in range(5):
                obj = await store.get(DEPLOY, "default", f"d{i}")
                revisions.append(rv(await store.update({**obj, "spec": {"i": -1 - i}})))
            revisions.append(rv(await store.create(configmap("c", x="1"))))
        gone = await store.delete(DEPLOY, "default", "d19")
        revisions.append(rv(gone))
        before = await _state(etcd.url)
        assert len(before) == 20 and store.revision == rv(gone)

        etcd.kill()
        etcd.start()

        assert await _state(etcd.url) == before
        after = await store.create(deployment("after-restart"))  # the open store carries on
        assert rv(after) > rv(gone)
        revisions.append(rv(after))
        events = await take(watch, 28)
        assert [e.revision for e in events] == revisions == sorted(set(revisions))
        assert summary(events[-2:]) == [("DELETED", "d19", rv(gone)), ("ADDED", "after-restart", rv(after))]
    finally:
        await store.close()


async def test_a_write_waits_for_etcd_to_come_back(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        first = await store.create(deployment("first"))
        etcd.kill()
        pending = asyncio.create_task(store.create(deployment("during-outage")))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not pending.done()
        await asyncio.to_thread(etcd.start)
        assert rv(await pending) > rv(first)
        assert [i["metadata"]["name"] for i in (await store.list(DEPLOY)).items] == ["during-outage", "first"]
    finally:
        await store.close()


def test_a_killed_writer_and_a_killed_etcd_lose_nothing_acknowledged(etcd: EtcdServer) -> None:
    acked = _run_and_kill(etcd.url)  # SIGKILLs a process writing as fast as it can
    etcd.kill()
    etcd.start()
    asyncio.run(_verify(etcd.url, acked))
