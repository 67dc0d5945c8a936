"""The scheduling controller end to end: a real LocalClient over a memory store, shared
informers and the runtime controller, all on a VirtualClock.

A binding gets scheduled (spec, annotation, condition, events, timeline), is
rescheduled when a taint changes what its clusters can take, and a binding nothing
can hold waits quietly until a cluster changes — it does not spin.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.admission import admit
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.constants import (
    APPLIED_PLACEMENT_ANNOTATION,
    BINDING_MANAGED_BY_LABEL,
    CPP_PERMANENT_ID_LABEL,
    PP_PERMANENT_ID_LABEL,
)
from fleetkeeper.api.core import Event, Taint
from fleetkeeper.api.work import ClusterResourceBinding, GracefulEvictionTask, ResourceBinding
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request
from fleetkeeper.scheduler.controller import SchedulingReconciler, new_controller
from fleetkeeper.store import open_store

from .builders import DUPLICATED, DYNAMIC, cluster, pods, static_weights

NOT_READY = [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]
UNSCHEDULABLE = [{"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"}]
WEIGHTS = {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
           "replicaScheduling": static_weights(("member1", 1), ("member2", 2))}


@dataclass
class World:
    clock: VirtualClock
    client: LocalClient

    async def settle(self) -> None:
        for _ in range(5):  # writes wake watches, which wake the controller, which writes again
            await self.clock.settle()
            await asyncio.sleep(0)

    async def rb(self, name: str = "nginx-deployment") -> ResourceBinding:
        return await self.client.get(ResourceBinding, name, "default")

    async def events(self, reason: str, kind: str = "ResourceBinding") -> list[Event]:
        items = (await self.client.list(Event)).items
        return [e for e in items if e.reason == reason and e.involved_object.kind == kind]

    async def update_cluster(self, name: str, change: Callable[[Cluster], None]) -> None:
        current = await self.client.get(Cluster, name)
        change(current)
        await self.client.update(current)

    async def update_cluster_status(self, name: str, change: Callable[[Cluster], None]) -> None:
        current = await self.client.get(Cluster, name)
        change(current)
        await self.client.update_status(current)


def taints(items: list[dict[str, Any]]) -> list[Taint]:
    return [Taint.from_dict(t) for t in items]


def rb_body(policy: dict[str, Any], *, replicas: int, name: str = "nginx", labels: dict[str,
                                                                                        str] | None = None,
            **spec: Any) -> ResourceBinding:
    return ResourceBinding.from_dict({
        "metadata": {"name": f"{name}-deployment", "namespace": "default",
                     "labels": {PP_PERMANENT_ID_LABEL: "pp-1"} if labels is None else labels},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                              "name": name,
                              "uid": "uid-" + name},
                 "replicas": replicas, "placement": policy, **spec},
    })


@asynccontextmanager
async def running(clock: VirtualClock, *clusters: Cluster,
                  before_start: Callable[[LocalClient], Awaitable[None]] | None = None,
                  ) -> AsyncIterator[World]:
    """The scheduler over ``clusters`` (``before_start`` writes what waits when it starts)."""
    store = open_store("memory://", clock=clock)
    client = LocalClient(store, admission=admit, clock=clock)
    for c in clusters:
        created = await client.create(c.model_copy(update={"status": type(c.status)()}))
        await client.update_status(created.model_copy(update={"status": c.status}))
    if before_start is not None:
        await before_start(client)
    informers = InformerFactory(client, clock=clock)
    controller = new_controller(client, informers, clock=clock)
    tasks = [asyncio.create_task(informers.run())]
    await informers.wait_for_sync()
    tasks.append(asyncio.create_task(controller.run()))
    try:
        world = World(clock, client)
        await world.settle()
        yield world
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await store.close()


def run(main: Callable[[VirtualClock], Awaitable[None]]) -> None:
    clock = VirtualClock()
    clock.run(main(clock))


def placement_of(rb: ResourceBinding | ClusterResourceBinding) -> dict[str, int]:
    return {t.name: t.replicas for t in rb.spec.clusters or ()}


def test_a_binding_is_scheduled_with_condition_events_and_timeline() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1"), cluster("member2")) as world:
            await world.client.create(rb_body(WEIGHTS, replicas=3))
            await world.settle()
            rb = await world.rb()
            assert placement_of(rb) == {"member1": 1, "member2": 2}
            assert APPLIED_PLACEMENT_ANNOTATION in rb.annotations()
            condition = next(c for c in rb.status.conditions or () if c.type == "Scheduled")
            assert (condition.status, condition.reason) == ("True", "Success")
            assert rb.status.scheduler_observed_generation == rb.metadata.generation
            assert rb.status.last_scheduled_time == clock.now()
            message = "Binding has been scheduled successfully. Result: {member1:1, member2:2}"
            assert [e.message for e in await world.events("ScheduleBindingSucceed")] == [message]
            assert [e.message for e in await world.events("ScheduleBindingSucceed",
                                                          "Deployment")] == [message]
            entries = (await world.client.list(tl.TimelineEntry)).items
            assert [(e.action, e.subject.name) for e in entries] == [(tl.SCHEDULED, "nginx-deployment")]

    run(main)


def test_a_result_and_its_condition_are_one_change_with_the_local_client() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1"), cluster("member2")) as world:
            made = await world.client.create(rb_body(WEIGHTS, replicas=3))
            watch = world.client.watch(ResourceBinding, "default",
                                       resource_version=made.metadata.resource_version)
            await world.settle()
            first = await asyncio.wait_for(anext(aiter(watch)), 1)
            rb = first.object
            assert placement_of(rb) == {"member1": 1, "member2": 2}, "the first change carries the result"
            condition = next(c for c in rb.status.conditions or () if c.type == "Scheduled")
            assert condition.status == "True"
            assert rb.status.scheduler_observed_generation == rb.metadata.generation == 2
            assert rb == await world.rb(), "and nothing came after it"

    run(main)


def test_the_same_result_in_another_order_is_not_a_move() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1"), cluster("member2")) as world:
            given = [{"name": "member2", "replicas": 2}, {"name": "member1", "replicas": 1}]
            made = await world.client.create(rb_body(WEIGHTS, replicas=3, clusters=given))
            await world.settle()
            after = await world.rb()
            assert after.status.scheduler_observed_generation == made.metadata.generation, "it scheduled"
            assert APPLIED_PLACEMENT_ANNOTATION in after.annotations()
            assert [t.name for t in after.spec.clusters or ()] == ["member2", "member1"], "order kept"
            assert after.metadata.generation == made.metadata.generation, "no spec write"
            assert not (await world.client.list(tl.TimelineEntry)).items, "nothing moved"

    run(main)


def test_scaling_a_divided_binding_reschedules_it() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1"), cluster("member2")) as world:
            await world.client.create(rb_body(WEIGHTS, replicas=3))
            await world.settle()
            rb = await world.rb()
            rb.spec.replicas = 9
            await world.client.update(rb)
            await world.settle()
            assert placement_of(await world.rb()) == {"member1": 3, "member2": 6}

    run(main)


def test_removing_a_taint_brings_a_duplicated_binding_to_the_cluster() -> None:
    async def main(clock: VirtualClock) -> None:
        clusters = (cluster("member1"), cluster("member2"), cluster("member3", taints=UNSCHEDULABLE))
        async with running(clock, *clusters) as world:
            await world.client.create(rb_body({"replicaScheduling": DUPLICATED}, replicas=2))
            await world.settle()
            assert placement_of(await world.rb()) == {"member1": 2, "member2": 2}

            await world.update_cluster("member3", lambda c: setattr(c.spec, "taints", None))
            await world.settle()
            assert placement_of(await world.rb()) == {"member1": 2, "member2": 2, "member3": 2}

    run(main)


def test_an_evicted_cluster_loses_its_replicas_to_the_rest() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1"), cluster("member2")) as world:
            await world.client.create(rb_body(WEIGHTS, replicas=3))
            await world.settle()

            await world.update_cluster("member1", lambda c: setattr(c.spec, "taints", taints(NOT_READY)))
            rb = await world.rb()  # what the taint manager does for an untolerated NoExecute taint
            rb.spec.clusters = [t for t in rb.spec.clusters or () if t.name != "member1"]
            rb.spec.graceful_eviction_tasks = [GracefulEvictionTask(
                from_cluster="member1", reason="TaintUntolerated", producer="TaintManager", replicas=1)]
            await world.client.update(rb)
            await world.settle()
            assert placement_of(await world.rb()) == {"member2": 3}

    run(main)


def test_a_binding_no_cluster_fits_waits_for_a_cluster_change_without_spinning() -> None:
    async def main(clock: VirtualClock) -> None:
        clusters = (cluster("member1"), cluster("member3", taints=UNSCHEDULABLE))
        async with running(clock, *clusters) as world:
            policy = {"clusterAffinity": {"clusterNames": ["member3"]}, "replicaScheduling": DUPLICATED}
            await world.client.create(rb_body(policy, replicas=1))
            await world.settle()
            rb = await world.rb()
            condition = next(c for c in rb.status.conditions or () if c.type == "Scheduled")
            assert (condition.status, condition.reason) == ("False", "NoClusterFit")
            assert "1 cluster(s) had untolerated taint {cluster.karmada.io/unschedulable:NoSchedule}" in \
                condition.message
            failures = len(await world.events("ScheduleBindingFailed"))

            await clock.sleep(3600)  # an hour of virtual time: a retry loop would show up here
            await world.settle()
            assert len(await world.events("ScheduleBindingFailed")) == failures

            await world.update_cluster("member3", lambda c: setattr(c.spec, "taints", None))
            await world.settle()
            rb = await world.rb()
            assert placement_of(rb) == {"member3": 1}
            assert next(c for c in rb.status.conditions or () if c.type == "Scheduled").status == "True"

    run(main)


def test_an_unschedulable_binding_is_retried_when_a_cluster_gains_capacity() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1", summary=pods(2))) as world:
            await world.client.create(rb_body({"replicaScheduling": DYNAMIC}, replicas=5))
            await world.settle()
            rb = await world.rb()
            condition = next(c for c in rb.status.conditions or () if c.type == "Scheduled")
            assert (condition.status, condition.reason) == ("False", "Unschedulable")
            assert placement_of(rb) == {}

            def grow(c: Cluster) -> None:
                c.status.resource_summary = Cluster.from_dict(
                    {"spec": {"syncMode": "Push"},
                     "status": {"resourceSummary": pods(10)}}).status.resource_summary

            await world.update_cluster_status("member1", grow)
            await world.settle()
            assert placement_of(await world.rb()) == {"member1": 5}

    run(main)


def test_bindings_that_are_not_ours_are_left_alone() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1")) as world:
            await world.client.create(rb_body(WEIGHTS, replicas=1, name="unclaimed", labels={}))
            await world.client.create(rb_body(WEIGHTS, replicas=1, name="suspended",
                                              suspension={"scheduling": True}))
            await world.client.create(rb_body(WEIGHTS, replicas=1, name="other",
                                              schedulerName="other-scheduler"))
            await world.settle()
            for name in ("unclaimed", "suspended", "other"):
                assert (await world.rb(f"{name}-deployment")).spec.clusters is None

    run(main)


RBAC = [{"groupVersion": "rbac.authorization.k8s.io/v1", "resources": [{"name": "clusterroles",
                                                                        "kind": "ClusterRole"}]}]


def test_a_cluster_resource_binding_is_scheduled_by_the_same_reconciler() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1", apis=RBAC)) as world:
            crb = ClusterResourceBinding.from_dict({
                "metadata": {"name": "admin-clusterrole", "labels": {CPP_PERMANENT_ID_LABEL: "cpp-1"}},
                "spec": {"resource": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                      "name": "admin"}, "placement": {"replicaScheduling": DUPLICATED}},
            })
            await world.client.create(crb)
            await world.settle()
            got = await world.client.get(ClusterResourceBinding, "admin-clusterrole")
            assert placement_of(got) == {"member1": 0}
            messages = [e.message for e in await world.events("ScheduleBindingSucceed",
                                                              "ClusterResourceBinding")]
            assert messages == ["Binding has been scheduled successfully. Result {member1:0}"]

    run(main)


# --------------------------------------------------------------------------- what wakes a binding


def reconciler() -> SchedulingReconciler:
    clock = VirtualClock()
    client = LocalClient(open_store("memory://", clock=clock), clock=clock)
    return SchedulingReconciler(client, Informer(client, Cluster, clock=clock), clock=clock)


def with_status(rb: ResourceBinding, **status: Any) -> ResourceBinding:
    rb.metadata.generation = 2
    return rb.model_copy(update={"status": rb.status.model_copy(update=status)})


TERMS = {"clusterAffinities": [{"affinityName": "a", "clusterNames": ["member9"]},
                               {"affinityName": "b", "clusterNames": ["member1"]}]}


@pytest.mark.parametrize(("binding", "woken"), [
    pytest.param(rb_body({"clusterAffinity": {"clusterNames": ["member1"]}}, replicas=1), True,
                 id="an affinity naming the cluster wakes the binding"),
    pytest.param(rb_body({"clusterAffinity": {"clusterNames": ["member2"]}}, replicas=1), False,
                 id="an affinity naming another cluster does not"),
    pytest.param(rb_body({}, replicas=1), True, id="no affinity wakes the binding for every cluster"),
    pytest.param(with_status(rb_body(TERMS, replicas=1), scheduler_observed_generation=1), True,
                 id="affinity terms with an unobserved generation always wake the binding"),
    pytest.param(with_status(rb_body(TERMS, replicas=1), scheduler_observed_generation=2,
                             scheduler_observed_affinity_name="b"), True,
                 id="the observed term naming the cluster wakes the binding"),
    pytest.param(with_status(rb_body(TERMS, replicas=1), scheduler_observed_generation=2,
                             scheduler_observed_affinity_name="a"), False,
                 id="the observed term naming another cluster does not"),
    pytest.param(rb_body({}, replicas=1, labels={}), False, id="a binding no policy claims is never woken"),
    pytest.param(rb_body({}, replicas=1, suspension={"scheduling": True}), False,
                 id="a binding with scheduling suspended is never woken"),
])
def test_a_cluster_change_wakes_the_bindings_it_concerns(binding: ResourceBinding, woken: bool) -> None:
    requests = reconciler().bindings_for(cluster("member1"), [binding])
    assert (requests == [Request("default", binding.name)]) is woken


@pytest.mark.parametrize(("old_generation", "new_generation", "labels", "woken"), [
    pytest.param(None, 1, None, True, id="an added binding is scheduled"),
    pytest.param(1, 2, None, True, id="a spec change is scheduled"),
    pytest.param(2, 2, None, False, id="a status-only change is ignored"),
    pytest.param(None, 1, {BINDING_MANAGED_BY_LABEL: "someone"}, True,
                 id="a managed-by label claims a binding"),
    pytest.param(None, 1, {}, False, id="an unclaimed binding is ignored"),
])
def test_binding_events(old_generation: int | None, new_generation: int, labels: dict[str, str] | None,
                        woken: bool) -> None:
    new = rb_body({}, replicas=1, labels=labels)
    new.metadata.generation = new_generation
    old = None
    if old_generation is not None:
        old = new.deep_copy()
        old.metadata.generation = old_generation
    assert reconciler().binding_changed(old, new) is woken


@pytest.mark.parametrize(("observed", "parked", "deleting", "woken"), [
    pytest.param(2, False, False, False, id="its own result (an observed generation) does not wake it"),
    pytest.param(1, False, False, True, id="a generation not observed yet does"),
    pytest.param(2, True, False, True, id="a parked binding is woken all the same"),
    pytest.param(2, False, True, True, id="so is a deleting one"),
])
def test_a_new_generation_the_scheduler_already_observed_is_not_scheduled_again(
        observed: int, parked: bool, deleting: bool, woken: bool) -> None:
    rec = reconciler()
    old = rb_body({}, replicas=1)
    old.metadata.generation = 1
    new = with_status(rb_body({}, replicas=1), scheduler_observed_generation=observed)  # generation 2
    if deleting:
        new.metadata.deletion_timestamp = datetime(2026, 1, 1, tzinfo=UTC)
    if parked:
        rec.parked.add(Request("default", new.name))
    assert rec.binding_changed(old, new) is woken
    assert rec.binding_changed(None, new) is True, "an added binding is always looked at (a restart)"


def test_a_blocked_predecessor_becomes_a_candidate_exactly_when_its_block_ends() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1")) as world:
            policy = {"clusterAffinity": {"clusterNames": ["member1"]}, "replicaScheduling": DUPLICATED}
            evicted_at = clock.now()
            await world.client.create(rb_body(
                policy, replicas=1,
                failover={"application": {"decisionConditions": {"tolerationSeconds": 300},
                                           "blockPredecessorSeconds": 900}},
                evictionHistory=[{"clusterName": "member1", "evictedAt": evicted_at.isoformat(),
                                  "reason": "ApplicationFailure", "producer": "test"}],
            ))
            await world.settle()
            assert placement_of(await world.rb()) == {}
            await clock.sleep(899)
            await world.settle()
            assert placement_of(await world.rb()) == {}, "still blocked"
            await clock.sleep(1)
            await world.settle()
            assert placement_of(await world.rb()) == {"member1": 1}, "the block ended: a candidate again"

    run(main)


def test_a_stale_cached_binding_is_never_written_over_a_newer_one() -> None:
    """The reconciler decides on the shared cache's version (as Karmada's reads its lister);
    when the store already holds a newer one, the write is refused and nothing is lost."""
    async def main(clock: VirtualClock) -> None:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, admission=admit, clock=clock)
        for c in (cluster("member1"), cluster("member2")):
            created = await client.create(c.model_copy(update={"status": type(c.status)()}))
            await client.update_status(created.model_copy(update={"status": c.status}))
        informers = InformerFactory(client, clock=clock)
        bindings = BindingInformers(informers)
        clusters = informers.informer_for(Cluster)
        reconciler = SchedulingReconciler(client, clusters, clock=clock, bindings=bindings)
        task = asyncio.create_task(informers.run())
        try:
            await informers.wait_for_sync()
            await client.create(rb_body(WEIGHTS, replicas=3))
            await clock.settle()
            request = Request("default", "nginx-deployment")
            newer = await client.get(ResourceBinding, "nginx-deployment", "default")
            newer.spec.replicas = 6
            await client.update(newer)  # the cache has not seen it: nothing yielded to the informer
            with pytest.raises(errors.Conflict):
                await reconciler.reconcile(request)
            stored = await client.get(ResourceBinding, "nginx-deployment", "default")
            assert stored.spec.replicas == 6 and not stored.spec.clusters
            await clock.settle()  # the cache catches up; the retry schedules the newer version
            await reconciler.reconcile(request)
            stored = await client.get(ResourceBinding, "nginx-deployment", "default")
            assert placement_of(stored) == {"member1": 2, "member2": 4}
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await store.close()

    run(main)


def test_bindings_waiting_together_are_scheduled_highest_schedule_priority_first() -> None:
    priorities = {"a": 3, "b": -1, "c": 10, "d": 0, "e": 10, "f": 7, "g": 0, "h": 5, "i": None}

    async def waiting(client: LocalClient) -> None:  # all there before the scheduler starts
        for name, priority in priorities.items():
            extra = {} if priority is None else {"schedulePriority": {"priority": priority}}
            await client.create(rb_body({"replicaScheduling": DUPLICATED}, replicas=1, name=name, **extra))

    async def main(clock: VirtualClock) -> None:
        async with running(clock, cluster("member1"), before_start=waiting) as world:
            listed = (await world.client.list(ResourceBinding, "default")).items
        scheduled = [rb for rb in listed if rb.spec.clusters]
        assert len(scheduled) == len(priorities)
        scheduled.sort(key=lambda rb: int(rb.metadata.resource_version or 0))
        assert [rb.spec.resource.name for rb in scheduled] == ["c", "e", "f", "h", "a", "d", "g", "i", "b"], (
            "higher first, then in the order they came")

    run(main)
