"""The application-failover controller on virtual time, over a real store.

Health is reported the way the binding-status controller reports it (``/status`` writes
of ``aggregatedStatus``), at exact virtual seconds, so each test can say to the second
when an eviction must happen — and that nothing happens a moment before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.work import AggregatedStatusItem, ClusterResourceBinding, ResourceBinding
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import application_failover
from fleetkeeper.controllers import application_failover_rules as rules

from .failover_world import World, make_world

JOB = "failover.example.io/job-id"
Binding = ResourceBinding | ClusterResourceBinding


#: a cluster-scoped custom kind taught a health rule (cluster bindings need a cluster-scoped template)
TENANT_HEALTH = {
    "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
    "metadata": {"name": "tenant"},
    "spec": {"target": {"apiVersion": "example.io/v1", "kind": "Tenant"}, "customizations": {
        "healthInterpretation": {"luaScript": "function InterpretHealth(obj) return obj.status.ready end"}}},
}


def run(body: Callable[[World], Awaitable[None]]) -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1", "member2", "member3"))
        plane = world.start([application_failover.SPEC])
        assert plane.interpreter is not None
        plane.interpreter.add_customization(TENANT_HEALTH)
        try:
            await body(world)
        finally:
            await world.close()

    clock.run(main())


def binding_doc(*, kind: str = "Deployment", api_version: str = "apps/v1", cluster_scoped: bool = False,
                **application: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web-" + kind.lower(),
                            "annotations": {constants.PP_NAME_ANNOTATION: "web-propagation",
                                            constants.PP_NAMESPACE_ANNOTATION: "default"}}
    resource: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": "web"}
    if not cluster_scoped:
        meta["namespace"] = resource["namespace"] = "default"
    return {"metadata": meta, "spec": {
        "resource": resource, "replicas": 4, "propagateDeps": True,
        "clusters": [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 2}],
        "failover": {"application": {"decisionConditions": {}, **application}},
    }}


async def create(world: World, **kwargs: Any) -> Binding:
    doc = binding_doc(**kwargs)
    model: type[Binding] = ClusterResourceBinding if kwargs.get("cluster_scoped") else ResourceBinding
    return await world.client.create(model.from_dict(doc))


async def get(world: World, created: Binding) -> Binding:
    return await world.client.get(type(created), created.name, created.metadata.namespace or "")


async def report(world: World, created: Binding, health: dict[str, str],
                 status: dict[str, dict[str, Any]] | None = None) -> None:
    """What the binding-status controller writes: one item per cluster, sorted by name."""
    current = await get(world, created)
    current.status.aggregated_status = [
        AggregatedStatusItem.from_dict({"clusterName": n, "applied": True, "health": h,
                                        "status": (status or {}).get(n)})
        for n, h in sorted(health.items())]
    await world.client.update_status(current)
    await world.settle()


def evicted(binding: Binding) -> list[str]:
    return [t.from_cluster for t in binding.spec.graceful_eviction_tasks or ()]


def seconds(world: World, binding: Binding) -> float:
    """The virtual second the first task was created at."""
    task = (binding.spec.graceful_eviction_tasks or [])[0]
    assert task.creation_timestamp is not None
    return (task.creation_timestamp - world.clock.epoch).total_seconds()


# --- the clock -----------------------------------------------------------------------------------


def test_unhealthy_time_accumulates_across_an_unknown_gap_and_evicts_at_350s() -> None:
    async def body(world: World) -> None:
        rb = await create(world)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(200)
        await report(world, rb, {"member1": "Unknown", "member2": "Healthy"})
        await world.until(250)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(349.9)
        assert evicted(await get(world, rb)) == []
        await world.until(350)
        current = await get(world, rb)
        assert evicted(current) == ["member1"]
        assert seconds(world, current) == 350.0
        messages = [e.message for e in await world.timeline(rb.name)]
        assert "health Unknown in member1: unhealthy clock paused at 200s of 300s" in messages
        assert "Unhealthy in member1 for 10s: failover in 290s unless it recovers (tolerationSeconds 300s)" \
               in messages
        assert "Unhealthy again in member1: failover in 100s unless it recovers (tolerationSeconds 300s, " \
               "200s already counted)" in messages
        assert "evicted from member1 (ApplicationFailure, Gracefully) after 300s unhealthy" in messages

    run(body)


def test_healthy_resets_the_clock() -> None:
    async def body(world: World) -> None:
        rb = await create(world, decisionConditions={"tolerationSeconds": 100})
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(90)
        await report(world, rb, {"member1": "Healthy", "member2": "Healthy"})
        await world.until(95)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(194)
        assert evicted(await get(world, rb)) == []
        await world.until(195)
        assert seconds(world, await get(world, rb)) == 195.0

    run(body)


def test_the_eviction_comes_at_the_deadline_without_any_other_event() -> None:
    async def body(world: World) -> None:
        rb = await create(world, decisionConditions={"tolerationSeconds": 120})
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(11)  # past the timeline announcement, the controller's own write
        revision = (await get(world, rb)).metadata.resource_version
        await world.until(119)
        assert (await get(world, rb)).metadata.resource_version == revision  # nothing touched it meanwhile
        await world.until(120)
        assert seconds(world, await get(world, rb)) == 120.0

    run(body)


def test_toleration_zero_evicts_at_once() -> None:
    async def body(world: World) -> None:
        rb = await create(world, decisionConditions={"tolerationSeconds": 0})
        await world.until(7)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        current = await get(world, rb)
        assert evicted(current) == ["member1"] and seconds(world, current) == 7.0

    run(body)


# --- what an eviction writes ---------------------------------------------------------------------


def test_a_gracefully_eviction_writes_task_history_and_drops_the_clock() -> None:
    async def body(world: World) -> None:
        rb = await create(world, decisionConditions={"tolerationSeconds": 10}, blockPredecessorSeconds=900)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        assert rules.OBSERVATIONS_ANNOTATION in (await get(world, rb)).annotations()
        await world.until(10)
        current = await get(world, rb)
        (task,) = current.spec.graceful_eviction_tasks or []
        assert task.model_dump(by_alias=True, exclude_none=True, exclude={"creation_timestamp"}) == {
            "fromCluster": "member1", "purgeMode": "Gracefully", "replicas": 2,
            "reason": "ApplicationFailure", "producer": "resource-binding-application-failover-controller",
            "gracePeriodSeconds": 600}
        assert [t.name for t in current.spec.clusters or ()] == ["member2"]
        (record,) = current.spec.eviction_history or []
        assert record.cluster_name == "member1"
        assert record.evicted_at == world.clock.epoch + timedelta(seconds=10)
        assert set(rules.decode(current.annotations())) == {"member2"}
        entries = {e.reason: e.message for e in await world.timeline(rb.name, tl.EVICTION_STARTED)}
        assert set(entries) == {"ApplicationFailure", "BlockPredecessor"}
        assert entries["BlockPredecessor"].endswith("(blockPredecessorSeconds 900)")

    run(body)


def test_never_suppresses_deletion_and_a_cluster_binding_names_its_producer() -> None:
    async def body(world: World) -> None:
        crb = await create(world, kind="Tenant", api_version="example.io/v1", cluster_scoped=True,
                           purgeMode="Never", decisionConditions={"tolerationSeconds": 0})
        await report(world, crb, {"member1": "Unhealthy", "member2": "Healthy"})
        (task,) = (await get(world, crb)).spec.graceful_eviction_tasks or []
        assert (task.suppress_deletion, task.grace_period_seconds, task.producer) == (
            True, None, "cluster-resource-binding-application-failover-controller")

    run(body)


def test_a_kind_without_a_health_rule_is_warned_about_once() -> None:
    async def body(world: World) -> None:
        rb = await create(world, kind="Job", api_version="batch/v1")
        await report(world, rb, {"member1": "Healthy", "member2": "Healthy"})
        await report(world, rb, {"member1": "Healthy", "member2": "Unknown"})
        warnings = await world.events(application_failover.EVENT_INEFFECTIVE)
        assert sorted((e.involved_object.kind, e.type) for e in warnings) == [
            ("Job", "Warning"), ("PropagationPolicy", "Warning"), ("ResourceBinding", "Warning")]
        assert "can never fire for batch/v1 Job" in (warnings[0].message or "")
        entries = await world.timeline(rb.name, tl.EVICTION_BLOCKED)
        assert [e.reason for e in entries] == [application_failover.EVENT_INEFFECTIVE]
        assert rules.OBSERVATIONS_ANNOTATION not in (await get(world, rb)).annotations()

    run(body)


def test_a_binding_made_again_under_its_name_is_warned_about_again() -> None:
    async def body(world: World) -> None:
        rb = await create(world, kind="Job", api_version="batch/v1")
        await report(world, rb, {"member1": "Healthy", "member2": "Healthy"})
        await world.client.delete(ResourceBinding, rb.name, "default")
        await world.settle()
        again = await create(world, kind="Job", api_version="batch/v1")
        await report(world, again, {"member1": "Healthy", "member2": "Healthy"})
        entries = await world.timeline(rb.name, tl.EVICTION_BLOCKED)
        assert [e.reason for e in entries] == [application_failover.EVENT_INEFFECTIVE] * 2

    run(body)


# --- preconditions -------------------------------------------------------------------------------


def test_delay_seconds_holds_failover_until_the_delay_since_the_first_collection() -> None:
    async def body(world: World) -> None:
        rb = await create(world, decisionConditions={"tolerationSeconds": 60},
                          preConditions={"delaySeconds": 600})
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(659)
        assert evicted(await get(world, rb)) == []
        await world.until(660)
        assert seconds(world, await get(world, rb)) == 660.0

    run(body)


def test_healthy_state_leaves_a_workload_that_never_ran_where_it_is() -> None:
    async def body(world: World) -> None:
        rb = await create(world, decisionConditions={"tolerationSeconds": 60},
                          preConditions={"healthyState": "Healthy"})
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
        await world.until(100)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Unhealthy"})
        await world.until(1000)
        current = await get(world, rb)
        assert evicted(current) == ["member2"]
        assert seconds(world, current) == 160.0
        held = [e.message for e in await world.timeline(rb.name, tl.WORKLOAD_HEALTH) if e.reason == "Held"]
        assert held == ["Unhealthy in member1 for 10s; no failover from it: the workload has never been "
                        "Healthy there (preConditions.healthyState Healthy)"]

    run(body)


# --- state preservation --------------------------------------------------------------------------

PRESERVE: dict[str, Any] = {
    "purgeMode": "Directly", "decisionConditions": {"tolerationSeconds": 30},
    "statePreservation": {"rules": [{"aliasLabelName": JOB, "jsonPath": "{ .jobId }"}]},
}
BOTH = {"member1": "Unhealthy", "member2": "Healthy"}


def test_state_is_preserved_from_the_failed_clusters_status() -> None:
    async def body(world: World) -> None:
        rb = await create(world, **PRESERVE)
        await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"},
                     {"member1": {"jobId": "job-member1"}, "member2": {"jobId": "job-member2"}})
        await world.until(30)
        (task,) = (await get(world, rb)).spec.graceful_eviction_tasks or []
        assert task.preserved_label_state == {JOB: "job-member1"}
        assert task.clusters_before_failover == ["member1", "member2"]

    run(body)


def test_state_that_cannot_be_extracted_holds_the_eviction_and_says_why() -> None:
    async def body(world: World) -> None:
        rb = await create(world, **PRESERVE)
        await report(world, rb, BOTH, {"member1": {"phase": "Failed"}})
        await world.until(40)
        assert evicted(await get(world, rb)) == []
        failed = await world.events(constants.EVENT_EVICT_WORKLOAD_FAILED, rb.name)
        assert failed and "jobId is not found" in (failed[0].message or "")
        await world.until(120)  # retried several times: said once on the timeline
        retried = await world.events(constants.EVENT_EVICT_WORKLOAD_FAILED, rb.name)
        assert sum(e.count or 0 for e in retried) > 1
        waits = [e for e in await world.timeline(rb.name, tl.EVICTION_BLOCKED)
                 if e.reason == "StatePreservationFailed"]
        why = (failed[0].message or "").split(": ", 1)[1]
        assert [e.message for e in waits] == [
            f"eviction from member1 waits: state preservation failed: {why}"]
        await report(world, rb, BOTH, {"member1": {"jobId": "late"}})
        await world.until(200)  # the retry backoff brings it back
        (task,) = (await get(world, rb)).spec.graceful_eviction_tasks or []
        assert task.preserved_label_state == {JOB: "late"}

    run(body)


# --- restarts ------------------------------------------------------------------------------------


def test_a_restarted_control_plane_evicts_at_the_original_deadline() -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1", "member2"))
        first = world.start([application_failover.SPEC])
        try:
            rb = await create(world)
            await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
            await world.until(100)
            await world.stop(first)  # the controller's in-memory state is gone with it
            await world.until(150)
            world.start([application_failover.SPEC])
            await world.until(299.9)
            assert evicted(await get(world, rb)) == []
            await world.until(300)
            assert seconds(world, await get(world, rb)) == 300.0
        finally:
            await world.close()

    clock.run(main())


def test_a_deadline_missed_while_the_control_plane_was_down_is_acted_on_at_start() -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1", "member2"))
        first = world.start([application_failover.SPEC])
        try:
            rb = await create(world)
            await report(world, rb, {"member1": "Unhealthy", "member2": "Healthy"})
            await world.until(250)
            await world.stop(first)
            await world.until(400)
            assert evicted(await get(world, rb)) == []
            world.start([application_failover.SPEC])
            await world.settle()
            current = await get(world, rb)
            assert seconds(world, current) == 400.0
            assert "after 400s unhealthy" in " ".join(e.message for e in await world.timeline(rb.name))
        finally:
            await world.close()

    clock.run(main())
