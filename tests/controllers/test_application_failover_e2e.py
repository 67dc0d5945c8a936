"""Application failover end to end across a control-plane restart: every controller, the
scheduler and simulated members on one VirtualClock, two ControlPlane objects over one store.

The first control plane sees the workload go Unhealthy in member1 and is stopped inside
the toleration window; a second one, built from scratch over the same store (nothing in
memory survives), must evict at the instant the first one would have — not a toleration
later — and the workload must land in member2.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import (
    application_failover,
    binding,
    binding_status,
    cluster,
    cluster_status,
    detector,
    execution,
    graceful_eviction,
    policy_ids,
    work_status,
)
from fleetkeeper.runtime.spec import ControllerSpec
from fleetkeeper.scheduler import controller as scheduler

from .failover_world import World, cluster_body, make_world

TOLERATION = 120


CONTROL_PLANE: tuple[ControllerSpec, ...] = (
    cluster.SPEC, cluster_status.SPEC, policy_ids.SPEC, detector.SPEC, binding.SPEC, execution.SPEC,
    work_status.SPEC, binding_status.SPEC, graceful_eviction.SPEC, application_failover.SPEC,
    scheduler.SPEC,
)


def deployment() -> Resource:
    return Deployment.from_dict({
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    })


def policy() -> PropagationPolicy:
    return PropagationPolicy.from_dict({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "propagateDeps": True,
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
            "placement": {"clusterAffinities": [{"affinityName": "primary", "clusterNames": ["member1"]},
                                                {"affinityName": "backup", "clusterNames": ["member2"]}],
                          "replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
            "failover": {"application": {"decisionConditions": {"tolerationSeconds": TOLERATION}}},
        },
    })


async def rb(world: World) -> ResourceBinding | None:
    try:
        return await world.client.get(ResourceBinding, "web-deployment", "default")
    except errors.NotFound:
        return None


async def health(world: World, member: str) -> str | None:
    got = await rb(world)
    items = got.status.aggregated_status or [] if got is not None else []
    return next((i.health for i in items if i.cluster_name == member), None)


def ready(world: World, member: str) -> Any:
    from fleetkeeper.members.simulated.objects import ObjectKey

    obj = world.fleet[member].engine.store.get(ObjectKey("apps", "Deployment", "default", "web"))
    return None if obj is None else (obj.get("status") or {}).get("readyReplicas")


def test_a_control_plane_restarted_inside_the_toleration_window_evicts_on_time() -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1", "member2"), pod_startup=1.0)
        for name in ("member1", "member2"):
            await world.client.create(cluster_body(name))
        first = world.start(CONTROL_PLANE)
        try:
            await world.until(5)
            await world.client.create(deployment())
            await world.client.create(policy())
            await world.until(30)
            assert ready(world, "member1") == 2 and await health(world, "member1") == "Healthy"
            world.fleet["member1"].crash_workload("apps/v1", "Deployment", "default", "web")
            await world.until(35)
            assert await health(world, "member1") == "Unhealthy"
            unhealthy_since = 30.0  # the crash was seen within the aggregation delay
            await world.until(90)
            await world.stop(first)
            await world.until(100)
            world.start(CONTROL_PLANE)  # a new process: informers, queues and timers from scratch
            await world.until(unhealthy_since + TOLERATION - 1)
            current = await rb(world)
            assert current is not None and not current.spec.graceful_eviction_tasks
            await world.until(unhealthy_since + TOLERATION + 5)
            current = await rb(world)
            assert current is not None
            assert [t.name for t in current.spec.clusters or ()] == ["member2"]
            history = current.spec.eviction_history or []
            assert [r.cluster_name for r in history] == ["member1"]
            evicted_at = (history[0].evicted_at - clock.epoch).total_seconds()
            assert unhealthy_since + TOLERATION <= evicted_at < unhealthy_since + TOLERATION + 1
            await world.until(unhealthy_since + TOLERATION + 30)
            assert ready(world, "member2") == 2 and ready(world, "member1") is None
        finally:
            await world.close()

    clock.run(main())
