"""Several stores — other processes, or several backends in this one — sharing one etcd.

Each store has its own connection and its own feed, exactly as a separate process would,
so these tests show what two control-plane processes see of each other: writes reach
the other's watchers in one revision order, compare-and-swap stops the loser of a race,
revisions are etcd's, and a feed that fell behind a compaction ends its watches with
Gone and carries on.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store
from fleetkeeper.store._conformance_base import DEPLOY, deployment, rv, summary, take

from .etcd_server import EtcdServer

#: creates three objects, updates one, deletes one; prints each acknowledged revision
_OTHER_PROCESS = """
import asyncio, sys
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

async def main(url: str) -> None:
    store = open_store(url, clock=SystemClock())
    made = [await store.create({"apiVersion": "apps/v1", "kind": "Deployment",
                                "metadata": {"name": f"p{i}", "namespace": "default"}, "spec": {"n": i}})
            for i in range(3)]
    for obj in made:
        print("ADDED", obj["metadata"]["name"], obj["metadata"]["resourceVersion"], flush=True)
    obj = await store.update({**made[0], "spec": {"n": 10}})
    print("MODIFIED p0", obj["metadata"]["resourceVersion"], flush=True)
    obj = await store.delete(GroupKind("apps", "Deployment"), "default", "p1")
    print("DELETED p1", obj["metadata"]["resourceVersion"], flush=True)
    await store.close()

asyncio.run(main(sys.argv[1]))
"""


async def test_another_process_s_writes_reach_this_process_s_watchers(etcd: EtcdServer) -> None:
    store = open_store(etcd.url, clock=SystemClock())
    try:
        mine = await store.create(deployment("mine"))
        watch = store.watch(DEPLOY)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        child = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", _OTHER_PROCESS, etcd.url],
                                        capture_output=True, text=True, env=env, timeout=120, check=False)
        assert child.returncode == 0, child.stderr
        acknowledged = [(kind, name, int(revision)) for kind, name, revision in map(str.split,
                                                                                  child.stdout.splitlines())]
        assert summary(await take(watch, 5)) == acknowledged
        revisions = [rv(mine)] + [r for _, _, r in acknowledged]
        assert revisions == sorted(set(revisions))
        assert store.revision == revisions[-1]
        listed = await store.list(DEPLOY)
        assert [(i["metadata"]["name"], rv(i)) for i in listed.items] == [
            ("mine", rv(mine)), ("p0", acknowledged[3][2]), ("p2", acknowledged[2][2])]
    finally:
        await store.close()


async def test_two_writers_interleave_without_gaps_or_duplicates(pair: tuple[Store, Store]) -> None:
    one, two = pair
    watches = [one.watch(None), two.watch(None)]

    async def writer(store: Store, tag: str) -> list[int]:
        revisions = []
        for i in range(15):
            obj = await store.create(deployment(f"{tag}{i}"))
            revisions.append(rv(obj))
            obj = await store.update({**obj, "spec": {"replicas": i + 10}})
            revisions.append(rv(obj))
            await asyncio.sleep(0)
        return revisions

    acknowledged = await asyncio.gather(writer(one, "a"), writer(two, "b"))
    seen = [summary(await take(w, 60)) for w in watches]
    assert seen[0] == seen[1]
    revisions = [r for _, _, r in seen[0]]
    assert revisions == sorted(set(revisions))  # one order, no duplicates
    assert sorted(acknowledged[0] + acknowledged[1]) == revisions  # and every acknowledged write in it
    for store in pair:
        assert store.revision == revisions[-1]
        assert rv(await store.get(DEPLOY, "default", "a3")) == rv(await pair[0].get(DEPLOY, "default", "a3"))


async def test_a_batch_overtaken_by_another_process_commits_at_etcd_s_revisions(
    pair: tuple[Store, Store],
) -> None:
    one, two = pair
    watch = one.watch(DEPLOY)
    async with two.batch():
        staged = await two.create(deployment("late"))
        await two.update({**staged, "spec": {"replicas": 4}})
        early = await one.create(deployment("early"))  # another process takes the revision two planned
        assert rv(early) == rv(staged)
    stored = await two.get(DEPLOY, "default", "late")
    assert rv(stored) > rv(staged) and stored["spec"] == {"replicas": 4}
    events = summary(await take(watch, 3))
    assert events == [("ADDED", "early", rv(early)), ("ADDED", "late", events[1][2]),
                      ("MODIFIED", "late", rv(stored))]
    assert rv(early) < events[1][2] < rv(stored) == two.revision
    with pytest.raises(errors.Conflict):  # the version handed out inside the batch went stale
        await two.update({**staged, "spec": {"replicas": 5}})


@pytest.mark.parametrize(("race", "error"), [
    ("update", errors.Conflict), ("delete", errors.Conflict), ("update after delete", errors.NotFound),
], ids=["an update that lost the race conflicts", "a delete that lost the race conflicts",
        "an update of an object deleted meanwhile is not found"])
async def test_compare_and_swap_stops_the_process_that_lost_a_race(
    pair: tuple[Store, Store], race: str, error: type[errors.ApiError]
) -> None:
    one, two = pair
    base = await one.create(deployment("a", spec={"replicas": 1}))
    with pytest.raises(error):
        async with two.batch():  # two reads the object now and writes it when the block ends
            if race == "delete":
                await two.delete(DEPLOY, "default", "a")
            else:
                await two.update({**base, "spec": {"replicas": 2}})
            if race == "update after delete":
                won = await one.delete(DEPLOY, "default", "a")
            else:
                won = await one.update({**base, "spec": {"replicas": 3}})
    if race != "update after delete":
        assert (await two.get(DEPLOY, "default", "a"))["spec"] == {"replicas": 3}
    assert one.revision == rv(won) > rv(base)


async def test_a_feed_left_behind_by_compaction_ends_its_watches_with_gone_and_recovers(
    etcd: EtcdServer,
) -> None:
    late = await asyncio.to_thread(open_store, etcd.url, clock=SystemClock())  # no event loop: no feed yet
    busy = open_store(etcd.url, clock=SystemClock(), history=5)
    try:
        revisions = [rv(await busy.create(deployment(f"d{i}"))) for i in range(30)]
        assert late.revision == 0
        with pytest.raises(errors.Gone):
            await take(late.watch(DEPLOY), 1)
        assert late.revision == revisions[-1]
        watch = late.watch(DEPLOY)
        after = await busy.create(deployment("after"))
        assert summary(await take(watch, 1)) == [("ADDED", "after", rv(after))]
    finally:
        await late.close()
        await busy.close()
