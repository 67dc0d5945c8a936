"""The Pull agent's Lease renewer: what a renewal writes, how often, and that it survives failures."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta

from fleetkeeper.agent import lease
from fleetkeeper.api.admission import admit
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.options import Options
from fleetkeeper.store import open_store

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def cluster(uid: str | None = "uid-3") -> Cluster:
    return Cluster.from_dict({"metadata": {"name": "member3", "uid": uid}, "spec": {"syncMode": "Pull"}})


def test_a_first_renewal_creates_the_lease_with_its_owner() -> None:
    got = lease.renewed(None, cluster(), duration=40, now=NOW)
    assert (got.namespace, got.name) == ("karmada-cluster", "member3")
    assert (got.spec.holder_identity, got.spec.lease_duration_seconds, got.spec.renew_time) == (
        "member3",
        40,
        NOW,
    )
    owner = (got.metadata.owner_references or [])[0]
    assert (owner.api_version, owner.kind, owner.name, owner.uid) == (
        "cluster.karmada.io/v1alpha1",
        "Cluster",
        "member3",
        "uid-3",
    )


def test_a_renewal_moves_renew_time_and_adds_a_missing_owner_once() -> None:
    first = lease.renewed(None, cluster(uid=None), duration=40.5, now=NOW)
    assert first.metadata.owner_references is None and first.spec.lease_duration_seconds == 41
    later = NOW + timedelta(seconds=10)
    second = lease.renewed(first, cluster(), duration=40, now=later)
    third = lease.renewed(second, cluster(), duration=40, now=later + timedelta(seconds=10))
    assert second.spec.renew_time == later and len(third.metadata.owner_references or []) == 1
    assert first.spec.renew_time == NOW, "the input is not modified"


def test_the_renewer_renews_every_quarter_of_the_lease_and_outlives_failures() -> None:
    clock = VirtualClock()

    async def main() -> None:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, admission=admit, clock=clock)
        renewer = lease.LeaseRenewer(client, clock, "member3", Options())
        assert renewer.interval == 10.0
        task = asyncio.get_running_loop().create_task(renewer.run())
        await clock.sleep(15)
        assert renewer.renewals == 0, "no Cluster yet: nothing to renew for"
        made = await client.create(cluster(uid=None))
        await clock.sleep(20)  # renewals at 20 and 30
        got = await client.get(Lease, "member3", "karmada-cluster")
        assert renewer.renewals == 2
        assert got.spec.renew_time == clock.epoch + timedelta(seconds=30)
        assert [r.uid for r in got.metadata.owner_references or ()] == [made.metadata.uid]
        await store.close()  # the control plane goes away: renewals fail, the loop goes on
        await clock.sleep(30)
        assert not task.done()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    clock.run(main())
