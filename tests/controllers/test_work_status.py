"""The work-status controller: member status read back as it changes, and through outages."""

from __future__ import annotations

from fleetkeeper.api import constants
from fleetkeeper.api.work import ManifestStatus, Work
from fleetkeeper.clock import VirtualClock

from .propagation_world import World, deployment, propagation_policy, run, running

WORK = "nginx-687f7fb96f"


async def manifest_status(world: World, cluster: str) -> ManifestStatus | None:
    work = await world.get(Work, WORK, constants.execution_namespace(cluster))
    statuses = work.status.manifest_statuses if work is not None else None
    return statuses[0] if statuses else None


def test_ready_replicas_going_from_zero_to_three_is_seen() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", pod_startup=30.0) as world:
            await world.apply(propagation_policy("nginx", "member1"))
            await world.apply(deployment())
            first = await world.wait_for(lambda: manifest_status(world, "member1"))
            assert first.health == "Unhealthy" and not (first.status or {}).get("readyReplicas")
            assert first.identifier.kind == "Deployment" and first.identifier.resource == "deployments"

            async def ready() -> ManifestStatus | None:
                entry = await manifest_status(world, "member1")
                return entry if entry is not None and (entry.status or {}).get("readyReplicas") == 3 else None

            entry = await world.wait_for(ready, within=60)
            assert entry.health == "Healthy"
            assert clock.monotonic() >= 30.0, "ready only once the pods started"

    run(main)


def test_an_unreachable_member_reads_unknown_until_it_answers_again() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())

            async def health(cluster: str, wanted: str) -> bool:
                entry = await manifest_status(world, cluster)
                return entry is not None and entry.health == wanted

            await world.wait_for(lambda: health("member1", "Healthy"))
            world.member("member1").down()
            await world.wait_for(lambda: health("member1", "Unknown"), within=30)
            unknown = await manifest_status(world, "member1")
            assert unknown is not None and (unknown.status or {}).get("readyReplicas") == 3, \
                "the last reflected status is kept"
            assert await health("member2", "Healthy")
            world.member("member1").up()
            await world.wait_for(lambda: health("member1", "Healthy"), within=60)

    run(main)


def test_a_cluster_that_is_not_ready_reads_unknown() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(propagation_policy("nginx", "member1"))
            await world.apply(deployment())

            async def health(wanted: str) -> bool:
                entry = await manifest_status(world, "member1")
                return entry is not None and entry.health == wanted

            await world.wait_for(lambda: health("Healthy"))
            await world.set_ready("member1", "False")
            await world.wait_for(lambda: health("Unknown"), within=10)
            await world.set_ready("member1", "True")
            await world.wait_for(lambda: health("Healthy"), within=10)

    run(main)
