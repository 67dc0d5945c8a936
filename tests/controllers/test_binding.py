"""The binding controller: Works follow the schedule, eviction tasks and their purge modes."""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY

from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.core import Event
from fleetkeeper.api.override import OverridePolicy
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import GracefulEvictionTask, ResourceBinding, TargetCluster, Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated.objects import ObjectKey

from .propagation_world import World, deployment, propagation_policy, run, running

WORK = "nginx-687f7fb96f"
KEY = ObjectKey("apps", "Deployment", "default", "nginx")


async def works(world: World) -> set[str]:
    return {w.namespace.removeprefix("karmada-es-") for w in (await world.client.list(Work)).items}


async def live_works(world: World) -> set[str]:
    return {w.namespace.removeprefix("karmada-es-") for w in (await world.client.list(Work)).items
            if w.metadata.deletion_timestamp is None}


def equals(value: Any) -> Any:
    async def check(actual: Any) -> bool:
        return bool(await actual == value)
    return check


def test_a_cluster_dropped_from_the_schedule_loses_its_work_and_member_copy() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            await world.wait_for(lambda: equals({"member1", "member2"})(works(world)))
            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            assert policy.spec.placement.cluster_affinity is not None
            policy.spec.placement.cluster_affinity.cluster_names = ["member2"]
            await world.client.update(policy)
            await world.wait_for(lambda: equals({"member2"})(works(world)))
            await world.wait_for(lambda: _absent(world, "member1"))
            assert world.member("member2").engine.store.get(KEY) is not None
            entries = (await world.client.list(tl.TimelineEntry)).items
            deleted = [e for e in entries if e.action == tl.WORK_DELETED]
            assert deleted and "karmada-es-member1" in deleted[0].message

    run(main)


async def _absent(world: World, cluster: str) -> bool:
    return world.member(cluster).engine.store.get(KEY) is None


def hand_made_binding(*clusters: str) -> ResourceBinding:
    """A binding no policy claims (the scheduler leaves it alone): its schedule is ours to set."""
    return ResourceBinding.from_dict({
        "metadata": {"name": "nginx-deployment", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                              "name": "nginx"},
                 "replicas": 3, "clusters": [{"name": c, "replicas": 3} for c in clusters]},
    })


async def reschedule(world: World, clusters: list[str], tasks: list[dict[str, Any]]) -> None:
    rb = await world.client.get(ResourceBinding, "nginx-deployment", "default")
    rb.spec.clusters = [TargetCluster(name=c, replicas=3) for c in clusters]
    rb.spec.graceful_eviction_tasks = [GracefulEvictionTask.model_validate(
        {"reason": "TaintUntolerated", "producer": "TaintManager", **t}) for t in tasks] or None
    await world.client.update(rb)


def test_gracefully_evicted_clusters_keep_their_work_and_directly_evicted_ones_go_first() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", "member3") as world:
            await world.apply(deployment())
            await world.client.create(hand_made_binding("member1", "member2"))
            await world.wait_for(lambda: equals({"member1", "member2"})(works(world)))
            rb = await world.client.get(ResourceBinding, "nginx-deployment", "default")
            assert constants.BINDING_CONTROLLER_FINALIZER in (rb.metadata.finalizers or [])
            assert rb.labels().get(constants.RB_PERMANENT_ID_LABEL)

            await reschedule(world, ["member2", "member3"], [{"fromCluster": "member1",
                                                              "purgeMode": "Gracefully"}])
            await world.wait_for(lambda: equals({"member1", "member2", "member3"})(works(world)))
            await world.settle(10)
            assert await works(world) == {"member1", "member2", "member3"}, "the graceful task keeps member1"

            world.member("member1").down()  # the Directly copy cannot be removed while member1 is away
            await world.set_ready("member1", "False")
            await reschedule(world, ["member2"], [{"fromCluster": "member1", "purgeMode": "Directly"}])
            await world.wait_for(lambda: equals({"member2"})(live_works(world)))
            rb = await world.client.get(ResourceBinding, "nginx-deployment", "default")
            await reschedule(world, ["member2", "member3"],
                             [t.to_dict() for t in rb.spec.graceful_eviction_tasks or []])
            await world.settle(30)
            assert await live_works(world) == {"member2"}, "no new Work while the Directly copy exists"
            assert "member1" in await works(world)

            world.member("member1").up()
            await world.set_ready("member1", "True")
            await world.wait_for(lambda: equals({"member2", "member3"})(works(world)), within=60)
            assert await _absent(world, "member1")

    run(main)


def test_a_binding_keeps_its_finalizer_until_its_works_are_gone() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(deployment())
            await world.client.create(hand_made_binding("member1"))
            await world.wait_for(lambda: equals({"member1"})(works(world)))
            world.member("member1").down()
            await world.set_ready("member1", "False")
            await world.client.delete(ResourceBinding, "nginx-deployment", "default")
            await world.settle(30)
            held = await world.get(ResourceBinding, "nginx-deployment", "default")
            assert held is not None and held.metadata.deletion_timestamp is not None
            world.member("member1").up()
            await world.set_ready("member1", "True")

            async def gone() -> bool:
                return await world.get(ResourceBinding, "nginx-deployment", "default") is None

            await world.wait_for(gone, within=60)
            assert await works(world) == set() and await _absent(world, "member1")

    run(main)


def _binding_reconciles() -> float:
    return REGISTRY.get_sample_value("fleetkeeper_reconcile_total",
                                     {"controller": "binding-controller", "result": "success"}) or 0.0


def _manifest_replicas(work: Work) -> Any:
    manifests = work.spec.workload.manifests if work.spec.workload else None
    return manifests[0]["spec"]["replicas"] if manifests else None


def test_a_hand_edited_work_is_put_back_and_the_controllers_own_write_does_not_wake_it_again() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(propagation_policy("nginx", "member1"))
            await world.apply(deployment())
            await world.wait_for(lambda: equals({"member1"})(works(world)))
            await world.settle(30)
            quiet = _binding_reconciles()
            await world.settle(30)
            assert _binding_reconciles() == quiet, "nothing wakes the controller while nothing changes"
            work = await world.client.get(Work, WORK, "karmada-es-member1")
            edited = work.deep_copy()
            assert edited.spec.workload is not None and edited.spec.workload.manifests
            edited.spec.workload.manifests[0]["spec"]["replicas"] = 7
            edited = await world.client.update(edited)
            restored = await world.wait_for(lambda: _restored(world, edited))
            assert _manifest_replicas(restored) == 3
            await world.settle(30)
            assert _binding_reconciles() - quiet == 1, (
                "one reconcile for the hand edit, none for the write that undid it")

    run(main)


async def _restored(world: World, edited: Work) -> Work | None:
    work = await world.client.get(Work, WORK, "karmada-es-member1")
    return work if work.metadata.resource_version != edited.metadata.resource_version else None


def test_an_override_that_cannot_apply_leaves_the_work_as_it_was_and_says_which_policy() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(propagation_policy("nginx", "member1"))
            await world.apply(deployment())
            await world.wait_for(lambda: equals({"member1"})(works(world)))
            broken = OverridePolicy.from_dict({
                "metadata": {"name": "broken", "namespace": "default"},
                "spec": {"overrideRules": [{"overriders": {"plaintext": [
                    {"path": "/spec/nothing/here", "operator": "replace", "value": 1}]}}]}})
            await world.client.create(broken)
            failed = await world.wait_for(lambda: _events(world, constants.EVENT_SYNC_WORK_FAILED))
            assert "override policy broken" in failed[0].message
            # as Karmada reports it, on the template
            policy_failed = await world.wait_for(
                lambda: _events(world, constants.EVENT_APPLY_OVERRIDE_POLICY_FAILED))
            first = policy_failed[0]
            assert (first.type, first.involved_object.kind, first.involved_object.name, first.message) == (
                "Warning", "Deployment", "nginx",
                "Apply override policy(default/broken) for cluster(member1) failed.")
            work = await world.client.get(Work, WORK, "karmada-es-member1")
            assert constants.APPLIED_OVERRIDES_ANNOTATION not in work.annotations()
            fixed = await world.client.get(OverridePolicy, "broken", "default")
            fixed.spec = fixed.spec.model_validate({"overrideRules": [{"overriders": {"plaintext": [
                {"path": "/spec/replicas", "operator": "replace", "value": 1}]}}]})
            await world.client.update(fixed)
            applied = await world.wait_for(lambda: _overridden(world))
            assert _manifest_replicas(applied) == 1
            assert world.member("member1").engine.store.get(KEY) is not None
            succeeded = await world.wait_for(
                lambda: _events(world, constants.EVENT_APPLY_OVERRIDE_POLICY_SUCCEED))
            assert [(e.type, e.involved_object.kind, e.message) for e in succeeded] == [
                ("Normal", "Deployment",
                 "Apply override policy(default/broken) for cluster(member1) succeed.")]
            await world.settle(30)
            assert len(await _events(world, constants.EVENT_APPLY_OVERRIDE_POLICY_SUCCEED) or ()) == 1, (
                "told when a Work changes, not at every look")

    run(main)


async def _events(world: World, reason: str) -> list[Event] | None:
    found = [e for e in (await world.client.list(Event)).items if e.reason == reason]
    return found or None


async def _overridden(world: World) -> Work | None:
    work = await world.client.get(Work, WORK, "karmada-es-member1")
    return work if constants.APPLIED_OVERRIDES_ANNOTATION in work.annotations() else None


def test_an_override_policy_with_a_label_selector_wakes_only_the_bindings_of_templates_it_selects() -> None:
    web_work = constants.work_name("Deployment", "web", "default")

    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(propagation_policy("all", "member1", selector={"apiVersion": "apps/v1",
                                                                             "kind": "Deployment"}))
            await world.apply(deployment("web"))
            await world.apply(deployment("db"))
            await world.wait_for(lambda: _works_counted(world, 2))
            await world.settle(10)
            before = _binding_reconciles()
            await world.client.create(OverridePolicy.from_dict({
                "metadata": {"name": "web-only", "namespace": "default"},
                "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                "labelSelector": {"matchLabels": {"app": "web"}}}],
                         "overrideRules": [{"overriders": {"labelsOverrider": [
                             {"operator": "add", "value": {"tier": "front"}}]}}]}}))
            await world.settle(10)
            work = await world.client.get(Work, web_work, "karmada-es-member1")
            assert constants.APPLIED_OVERRIDES_ANNOTATION in work.annotations()
            assert _binding_reconciles() - before == 1, "db's binding is not looked at: its labels differ"

    run(main)


async def _works_counted(world: World, count: int) -> bool:
    return len((await world.client.list(Work)).items) == count
