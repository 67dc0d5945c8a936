"""The namespace sync against members that, like real clusters, refuse objects of a namespace
they do not have: user namespaces reach every member (a new member too) before the
workloads in them, follow their labels, and go when deleted; the skipped, reserved and
opted-out ones stay home, and a Work in a namespace the member lacks waits for it."""

from __future__ import annotations

import functools
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.work import Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import namespace_sync, namespace_sync_rules, namespaces
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.options import Options

from .propagation_world import PIPELINE, World, add_cluster, deployment, propagation_policy, run, running

SPECS = (*PIPELINE, namespaces.SPEC, namespace_sync.SPEC)


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


async def in_member(world: World, cluster: str, name: str) -> dict[str, Any] | None:
    return await world.member(cluster).get(ObjectRef("v1", "Namespace", "", name))


async def deployed(world: World, cluster: str, namespace_name: str) -> dict[str, Any] | None:
    return await world.member(cluster).get(ObjectRef("apps/v1", "Deployment", namespace_name, "web"))


def strict(world: World) -> None:
    """Every member now refuses objects of a namespace it lacks, as a real cluster does."""
    for name in ("member1", "member2"):
        world.member(name).create_namespaces = False


def test_a_workload_in_a_new_namespace_reaches_members_that_had_no_such_namespace() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", specs=SPECS) as world:
            strict(world)
            await world.apply(namespace("prod", team="shop"))
            await world.apply(deployment("web", namespace="prod"))
            await world.apply(propagation_policy("web", namespace="prod"))
            for cluster in ("member1", "member2"):
                assert await world.wait_for(functools.partial(deployed, world, cluster, "prod"))
                copy = await in_member(world, cluster, "prod")
                assert copy is not None
                labels = copy["metadata"]["labels"]
                assert labels["team"] == "shop" and labels[constants.MANAGED_BY_KARMADA_LABEL] == "true"
                work = await world.get(Work, namespace_sync_rules.work_name("prod"),
                                       constants.execution_namespace(cluster))
                assert work is not None and namespace_sync_rules.owned_by(work) == "prod"

            # a label changed in the plane follows; a new member gets the namespace too
            current = await world.client.get(Namespace, "prod")
            current.metadata.labels = {**(current.metadata.labels or {}), "team": "checkout"}
            await world.client.update(current)
            assert await world.wait_for(lambda: _labelled(world, "member2", "checkout"))
            member3 = world.fleet.add("member3", create_namespaces=False)
            await add_cluster(world.client, member3)
            assert await world.wait_for(lambda: in_member(world, "member3", "prod"))

    run(main)


async def _labelled(world: World, cluster: str, team: str) -> bool:
    copy = await in_member(world, cluster, "prod")
    return copy is not None and copy["metadata"]["labels"].get("team") == team


def test_a_deleted_namespace_is_removed_from_the_members() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", specs=SPECS) as world:
            strict(world)
            await world.apply(namespace("prod"))
            assert await world.wait_for(lambda: in_member(world, "member1", "prod"))
            await world.client.delete(Namespace, "prod")

            async def gone() -> bool:
                copies = [await in_member(world, c, "prod") for c in ("member1", "member2")]
                return copies == [None, None] and not (await world.client.list(Work)).items

            assert await world.wait_for(gone)

    run(main)


def test_skipped_reserved_and_opted_out_namespaces_stay_in_the_plane() -> None:
    options = Options(leader_elect=False, skipped_propagating_namespaces="kube-.*, team-[a-z]+")

    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", specs=SPECS, options=options) as world:
            strict(world)
            names = ["kube-extra", "team-blue", "karmada-system", "karmada-es-other", "private"]
            for name in names:
                opt_out = name == "private"
                labels = {constants.NAMESPACE_SKIP_AUTO_PROPAGATION_LABEL: "True"} if opt_out else {}
                await world.apply(namespace(name, **labels))
            await world.apply(namespace("team-blue2"))  # the patterns match whole names only
            assert await world.wait_for(lambda: in_member(world, "member1", "team-blue2"))
            await world.settle(10)
            for name in names:
                assert await in_member(world, "member1", name) is None, name
            owners = {namespace_sync_rules.owned_by(w) for w in (await world.client.list(Work)).items}
            assert owners == {"team-blue2"}

    run(main)


def test_a_work_in_a_namespace_the_member_lacks_waits_for_it() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", specs=SPECS) as world:
            strict(world)
            opted_out = {constants.NAMESPACE_SKIP_AUTO_PROPAGATION_LABEL: "true"}
            await world.apply(namespace("private", **opted_out))
            await world.apply(deployment("web", namespace="private"))
            await world.apply(propagation_policy("web", "member1", namespace="private"))
            work_name = constants.work_name("Deployment", "web", "private")

            async def waiting() -> Any:
                work = await world.get(Work, work_name, constants.execution_namespace("member1"))
                applied = get_condition(work.status.conditions if work else None, constants.COND_WORK_APPLIED)
                return applied if applied is not None and applied.status == "False" else None

            applied = await world.wait_for(waiting)
            assert 'namespaces "private" not found' in applied.message
            assert await in_member(world, "member1", "private") is None
            # someone creates the namespace in the member: the Work goes on by itself
            await world.member("member1").apply(namespace("private"))
            assert await world.wait_for(lambda: deployed(world, "member1", "private"),
                                        within=Options().cluster_status_update_frequency + 2)

    run(main)
