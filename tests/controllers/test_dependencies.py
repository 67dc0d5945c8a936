"""The dependencies distributor: dependencies arriving late, following moves, and letting go."""

from __future__ import annotations

import copy
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import VirtualClock

from .propagation_world import World, deployment, propagation_policy, run, running

FINALIZER = constants.BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"},
          "data": {"mode": "fast"}}


def with_config_env() -> dict[str, Any]:
    manifest = deployment()
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    container["envFrom"] = [{"configMapRef": {"name": "settings"}}]
    return manifest


async def config_in(world: World) -> set[str]:
    """The clusters holding the ConfigMap."""
    found = set()
    for cluster in world.fleet.names():
        if await world.member_object(cluster, "v1", "ConfigMap", "default", "settings") is not None:
            found.add(cluster)
    return found


def placed(*clusters: str) -> Any:
    async def check(world: World) -> bool:
        return await config_in(world) == set(clusters)
    return check


def test_a_dependency_created_later_follows_the_workload_and_its_moves() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", "member3") as world:
            await world.apply(propagation_policy("nginx", "member1", "member2", propagateDeps=True))
            await world.apply(with_config_env())
            await world.wait_for(lambda: world.get(ResourceBinding, "nginx-deployment", "default"))
            await world.settle(5)
            assert await world.get(ResourceBinding, "settings-configmap", "default") is None

            await world.apply(copy.deepcopy(CONFIG))
            await world.wait_for(lambda: placed("member1", "member2")(world))

            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            assert policy.spec.placement.cluster_affinity is not None
            policy.spec.placement.cluster_affinity.cluster_names = ["member2", "member3"]
            await world.client.update(policy)
            await world.wait_for(lambda: placed("member2", "member3")(world))

    run(main)


def test_turning_propagate_deps_off_takes_the_dependency_back() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(copy.deepcopy(CONFIG))
            await world.apply(propagation_policy(propagateDeps=True))
            await world.apply(with_config_env())
            await world.wait_for(lambda: placed("member1", "member2")(world))
            independent = await world.get(ResourceBinding, "nginx-deployment", "default")
            assert independent is not None
            assert FINALIZER in (independent.metadata.finalizers or [])

            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            policy.spec.propagate_deps = False
            await world.client.update(policy)

            async def taken_back() -> bool:
                attached = await world.get(ResourceBinding, "settings-configmap", "default")
                return attached is None and await config_in(world) == set()

            await world.wait_for(taken_back)
            independent = await world.get(ResourceBinding, "nginx-deployment", "default")
            assert independent is not None
            assert FINALIZER not in (independent.metadata.finalizers or [])
            workload = await world.member_object("member1", "apps/v1", "Deployment", "default", "nginx")
            assert workload is not None, "the workload itself stays"

    run(main)
