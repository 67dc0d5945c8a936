"""The execution controller against simulated members: cleanup that waits for a cluster,
dispatch suspension, black holes, preservation and conflicts."""

from __future__ import annotations

from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated.objects import ObjectKey
from fleetkeeper.options import Options

from .propagation_world import World, deployment, propagation_policy, run, running

WORK = "nginx-687f7fb96f"
KEY = ObjectKey("apps", "Deployment", "default", "nginx")


async def member_has(world: World, cluster: str) -> bool:
    """Whether the member holds the object (read from its model: works while it is down)."""
    return world.member(cluster).engine.store.get(KEY) is not None


async def work_of(world: World, cluster: str) -> Work | None:
    return await world.get(Work, WORK, constants.execution_namespace(cluster))


def condition(work: Work | None, type_: str) -> Any:
    return get_condition(work.status.conditions if work else None, type_)


def test_a_work_of_an_unreachable_cluster_waits_for_it_before_letting_go() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            await world.wait_for(lambda: _both(member_has(world, "member1"), member_has(world, "member2")))
            world.member("member1").down()
            await world.set_ready("member1", "False")
            await world.client.delete(Deployment, "nginx", "default")

            async def member2_clean() -> bool:
                return not await member_has(world, "member2") and await work_of(world, "member2") is None

            await world.wait_for(member2_clean)
            await world.settle(120)
            held = await work_of(world, "member1")
            assert held is not None and held.metadata.deletion_timestamp is not None
            assert constants.EXECUTION_CONTROLLER_FINALIZER in (held.metadata.finalizers or [])
            assert await member_has(world, "member1"), "the copy in member1 is not forgotten"

            world.member("member1").up()
            await world.set_ready("member1", "True")

            async def member1_clean() -> bool:
                return not await member_has(world, "member1") and await work_of(world, "member1") is None

            await world.wait_for(member1_clean, within=30)

            async def cleanups() -> list[tl.TimelineEntry] | None:
                entries = [e for e in (await world.client.list(tl.TimelineEntry)).items
                           if e.action == tl.WORK_CLEANED_UP]
                return entries if len(entries) == 2 else None

            entries = sorted(await world.wait_for(cleanups), key=lambda e: e.message)
            assert [e.message for e in entries] == [
                f"Deployment default/nginx removed from {name} (Work karmada-es-{name}/{WORK} deleted)"
                for name in ("member1", "member2")]
            assert {(e.subject.kind, e.subject.namespace, e.subject.name) for e in entries} == {
                ("ResourceBinding", "default", "nginx-deployment")}
            member1, member2 = (e.time for e in entries)
            assert member1 > member2, "member1's copy goes only once member1 is back"

    run(main)


def test_dispatch_suspension_holds_the_apply_but_never_the_deletion() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy(suspension={"dispatching": True}))
            await world.apply(deployment())

            async def suspended() -> Work | None:
                work = await work_of(world, "member1")
                cond = condition(work, constants.COND_WORK_DISPATCHING)
                return work if cond is not None and cond.status == "False" else None

            work = await world.wait_for(suspended)
            assert work.spec.suspend_dispatching is True
            cond = condition(work, constants.COND_WORK_DISPATCHING)
            assert (cond.reason, cond.message) == ("SuspendDispatching",
                                                   "Work dispatching is in a suspended state.")
            await world.settle(10)
            assert not await member_has(world, "member1") and not await member_has(world, "member2")

            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            policy.spec.suspension = None
            await world.client.update(policy)
            await world.wait_for(lambda: _both(member_has(world, "member1"), member_has(world, "member2")))
            resumed = await work_of(world, "member1")
            assert condition(resumed, constants.COND_WORK_DISPATCHING).status == "True"
            assert resumed is not None and resumed.spec.suspend_dispatching is False

            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            policy.spec.suspension = PropagationPolicy.model_validate(
                propagation_policy(suspension={"dispatching": True})).spec.suspension
            await world.client.update(policy)
            await world.wait_for(suspended)
            await world.client.delete(Deployment, "nginx", "default")

            async def gone() -> bool:
                return not await member_has(world, "member1") and not await member_has(world, "member2")

            await world.wait_for(gone)

    run(main)


def test_a_black_holed_member_does_not_stall_the_other_clusters() -> None:
    async def main(clock: VirtualClock) -> None:
        options = Options(leader_elect=False, concurrent_syncs=1, cluster_probe_timeout=2.0)
        async with running(clock, "member1", "member2", options=options) as world:
            world.member("member1").blackhole()  # still Ready: the cluster-status controller has not noticed
            await world.apply(propagation_policy())
            started = clock.monotonic()
            await world.apply(deployment())
            await world.wait_for(lambda: member_has(world, "member2"), within=15, step=0.1)
            assert clock.monotonic() - started < 15, "member2 was not held up by member1's black hole"
            assert not await member_has(world, "member1")
            world.member("member1").up()
            await world.wait_for(lambda: member_has(world, "member1"), within=120)

    run(main)


def test_status_of_the_other_clusters_is_reported_while_a_black_holed_member_keeps_an_apply_waiting() -> None:
    async def main(clock: VirtualClock) -> None:
        options = Options(leader_elect=False, cluster_probe_timeout=30.0)
        async with running(clock, "member1", "member2", options=options) as world:
            world.member("member1").blackhole()  # still Ready: the cluster-status controller has not noticed
            await world.apply(propagation_policy())
            started = clock.monotonic()
            await world.apply(deployment())

            async def member2_reported() -> bool:
                work = await work_of(world, "member2")
                return bool(work is not None and work.status.manifest_statuses)

            await world.wait_for(member2_reported, within=60, step=0.1)
            waited = clock.monotonic() - started
            assert waited < 10, (
                f"member2's status waited {waited:g}s: a reconcile waiting on a member holds nobody's turn")

    run(main)


def test_preserved_resources_outlive_their_work_without_karmadas_labels() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy(preserveResourcesOnDeletion=True))
            await world.apply(deployment())
            await world.wait_for(lambda: _both(member_has(world, "member1"), member_has(world, "member2")))
            work = await work_of(world, "member1")
            assert work is not None and work.spec.preserve_resources_on_deletion is True
            await world.client.delete(Deployment, "nginx", "default")
            await world.wait_for(lambda: _none(work_of(world, "member1"), work_of(world, "member2")))
            for cluster in ("member1", "member2"):
                kept = world.member(cluster).engine.store.get(KEY)
                assert kept is not None
                labels = kept["metadata"].get("labels") or {}
                assert constants.MANAGED_BY_KARMADA_LABEL not in labels and labels.get("app") == "nginx"
                assert constants.WORK_NAME_ANNOTATION not in (kept["metadata"].get("annotations") or {})

    run(main)


def test_an_object_karmada_does_not_manage_is_only_taken_over_with_overwrite() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.member("member1").apply(deployment(replicas=1))  # someone else's Deployment
            await world.apply(propagation_policy("nginx", "member1"))
            await world.apply(deployment())

            async def refused() -> Any:
                cond = condition(await work_of(world, "member1"), constants.COND_WORK_APPLIED)
                return cond if cond is not None and cond.status == "False" else None

            cond = await world.wait_for(refused)
            assert "Karmada will not manage this resource" in cond.message
            theirs = world.member("member1").engine.store.get(KEY)
            assert theirs is not None and theirs["spec"]["replicas"] == 1

            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            policy.spec.conflict_resolution = "Overwrite"
            await world.client.update(policy)

            async def taken_over() -> bool:
                live = world.member("member1").engine.store.get(KEY)
                return live is not None and live["spec"]["replicas"] == 3

            await world.wait_for(taken_over, within=300)

    run(main)


async def _both(a: Any, b: Any) -> bool:
    first, second = await a, await b
    return bool(first) and bool(second)


async def _none(a: Any, b: Any) -> bool:
    first, second = await a, await b
    return first is None and second is None


def test_a_member_object_deleted_behind_karmadas_back_is_put_back() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(propagation_policy("nginx", "member1"))
            await world.apply(deployment())
            await world.wait_for(lambda: member_has(world, "member1"))
            await world.settle(5)
            await world.member("member1").delete(ObjectRef("apps/v1", "Deployment", "default", "nginx"))
            assert not await member_has(world, "member1")
            await world.wait_for(lambda: member_has(world, "member1"), within=10)

    run(main)
