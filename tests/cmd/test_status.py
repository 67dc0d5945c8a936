"""``fleetkeeper status`` over a real store on virtual time: two replicas campaign, each keeps its
presence record; the leader is killed (its record stays, expiring), the standby takes over, and
status shows who leads since when, which replicas are live or gone, the members' readiness
and the takeover Events — as text and as JSON."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import status
from fleetkeeper.runtime import presence
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector
from fleetkeeper.store import open_store


async def cluster(client: LocalClient, name: str, ready: str) -> None:
    created = await client.create(Cluster.from_dict({"metadata": {"name": name},
                                                     "spec": {"syncMode": "Push"}}))
    reason = "ClusterReady" if ready == "True" else "ClusterNotReachable"
    ready_condition = Condition.model_validate({"type": "Ready", "status": ready, "reason": reason})
    created.status.conditions = [ready_condition]
    await client.update_status(created)


class Severable:
    """A real client whose cable can be cut: then every call fails, as for a killed replica."""

    def __init__(self, client: LocalClient) -> None:
        self.client = client
        self.cut = False

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.client, name)

        async def guarded(*args: Any, **kwargs: Any) -> Any:
            if self.cut:
                raise errors.InternalError("connection refused")
            return await call(*args, **kwargs)

        return guarded


def replica(client: Any, clock: VirtualClock, identity: str) -> list[Any]:
    config = LeaderElectionConfig(status.LEASE, identity)
    elector = LeaderElector(client, config, clock=clock)
    record = presence.Presence(client, identity=identity, of=status.LEASE, namespace=status.NAMESPACE,
                               duration=config.lease_duration, clock=clock,
                               annotations={presence.SERVER_ANNOTATION: f"https://127.0.0.1:{len(identity)}",
                                            presence.STORE_ANNOTATION: "etcd://127.0.0.1:2379"})
    return [elector, record]


def test_status_shows_the_takeover_after_the_leader_is_cut_off() -> None:
    async def main(clock: VirtualClock) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, clock=clock)
        await cluster(client, "member1", "False")
        await cluster(client, "member2", "True")
        cable = Severable(client)
        alpha, beta = replica(cable, clock, "alpha"), replica(client, clock, "beta-replica")
        tasks = [asyncio.create_task(part.run()) for part in alpha]
        await alpha[0].wait_for_leadership()
        tasks += [asyncio.create_task(part.run()) for part in beta]
        await asyncio.sleep(10.0)
        before = status.report(await status.gather(client, clock.now()), clock.now())
        cable.cut = True  # as killed: nothing of alpha reaches the store any more
        await asyncio.sleep(30.0)
        now = clock.now()
        found = await status.gather(client, now)
        data = status.report(found, now)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return before, data, status.render(data, found, now)

    clock = VirtualClock()
    before, data, lines = clock.run(main(clock))
    assert before["leader"]["identity"] == "alpha"
    assert [(r["identity"], r["state"]) for r in before["replicas"]] == [("alpha", "leading"),
                                                                        ("beta-replica", "standby")]
    assert data["leader"]["identity"] == "beta-replica" and data["leader"]["transitions"] == 1
    assert [(r["identity"], r["state"]) for r in data["replicas"]] == [("alpha", "gone"),
                                                                      ("beta-replica", "leading")]
    assert data["store"]["urls"] == ["etcd://127.0.0.1:2379"]
    assert [(m["name"], m["ready"]) for m in data["members"]] == [("member1", "False"), ("member2", "True")]
    assert [t["message"] for t in data["takeovers"]] == ["alpha became leader", "beta-replica became leader"]
    text = "\n".join(lines)
    assert "leader     beta-replica since " in text and "1 transitions" in text
    assert "replicas   2 seen, 1 live" in text and "gone" in text
    assert "members    1 Ready, 1 not Ready" in text and "NotReady (ClusterNotReachable)" in text
    assert text.endswith("beta-replica became leader")


@pytest.mark.parametrize(("url", "shown"), [
    pytest.param("etcd://user:secret@10.0.0.1:2379", "etcd://10.0.0.1:2379", id="credentials are left out"),
    pytest.param("sqlite:///var/lib/state.db", "sqlite:///var/lib/state.db", id="a plain url is kept"),
])
def test_a_replica_announces_its_store_without_credentials(url: str, shown: str) -> None:
    assert presence.public_url(url) == shown
