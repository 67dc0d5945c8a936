"""Deleting a Namespace deletes what was in it, down to the copies in the member clusters,
then the Namespace (a whole plane on simulated members, virtual time): it is Terminating
until nothing in it is still being deleted, a deletion made while no plane ran is finished
by the next, and a namespace created again after it went keeps its new objects."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from fleetkeeper import errors
from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import ConfigMap
from fleetkeeper.api.core import Namespace
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.controllers import namespaces
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import run_scenario
from fleetkeeper.store import open_store
from fleetkeeper.store.interface import StoreProtocol

from .failover_world import World, make_world

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "prod", "name": "web"}
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "prod", "name": "settings"}
POLICY = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy", "namespace": "prod",
          "name": "web"}
BINDING = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "prod",
           "name": "web-deployment"}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "name": "prod"}


TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
RESOURCES: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "prod"},
     "data": {"a": "b"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod"},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}},
    {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
     "metadata": {"name": "web", "namespace": "prod"},
     "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
              "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}},
]


HELD = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "prod", "name": "held"}


def story(timeline: list[dict[str, Any]], *, resources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "fleetkeeper.io/v1alpha1", "kind": "Scenario",
            "metadata": {"name": "namespace-gone"},
            "spec": {"seed": 1, "clusters": [{"name": "member1"}, {"name": "member2"}],
                     "resources": RESOURCES if resources is None else resources, "timeline": timeline}}


PLACED = {"at": "20s", "expect": [{"object": BINDING, "path": "spec.clusters", "count": 2},
                                  {"member": "member1", "object": DEPLOY, "exists": True}]}


def run(spec: dict[str, Any], factory: PlaneFactory | None = None) -> list[str]:
    outcome = run_scenario(scenario.parse(spec), factory or PlaneFactory("memory://"), clock=VirtualClock())
    assert outcome.expectations > 0
    return [failure.message() for failure in outcome.failures]


def test_a_deleted_namespace_takes_its_objects_and_their_copies_in_the_members_with_it() -> None:
    assert run(story([PLACED, {"at": "30s", "do": [{"delete": NAMESPACE}]}, {"at": "60s", "expect": [
        {"object": DEPLOY, "absent": True}, {"object": CONFIG, "absent": True},
        {"object": POLICY, "absent": True}, {"object": BINDING, "absent": True},
        {"object": NAMESPACE, "absent": True},
        {"member": "member1", "object": DEPLOY, "absent": True},
        {"member": "member2", "object": DEPLOY, "absent": True}]}])) == []


def test_a_namespace_terminates_until_nothing_in_it_is_being_deleted() -> None:
    held = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "held", "namespace": "prod", "finalizers": ["example.com/hold"]}}
    assert run(story([
        PLACED,
        {"at": "30s", "do": [{"delete": NAMESPACE}], "expect": [
            {"object": NAMESPACE, "path": "status.phase", "equals": "Terminating"},
            {"object": NAMESPACE, "path": "spec.finalizers", "equals": ["kubernetes"]},
            {"object": HELD, "path": "metadata.deletionTimestamp", "exists": True},
            {"object": DEPLOY, "absent": True}, {"object": CONFIG, "absent": True}]},
        {"at": "50s", "expect": [{"object": NAMESPACE, "path": "status.phase", "equals": "Terminating"}]},
        {"at": "51s", "do": [{"patch": {**HELD, "patch": {"metadata": {"finalizers": None}}}}]},
        {"at": "60s", "expect": [{"object": HELD, "absent": True}, {"object": NAMESPACE, "absent": True}]},
    ], resources=[*RESOURCES, held])) == []


def test_a_namespace_created_again_after_it_went_keeps_its_new_objects() -> None:
    fresh = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fresh", "namespace": "prod"}}
    again = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}
    assert run(story([
        PLACED,
        {"at": "30s", "do": [{"delete": NAMESPACE}]},
        {"at": "40s", "do": [{"apply": again}, {"apply": fresh}]},
        {"at": "60s", "expect": [
            {"object": NAMESPACE, "path": "status.phase", "equals": "Active"},
            {"object": {**CONFIG, "name": "fresh"}, "exists": True},
            {"object": CONFIG, "absent": True}, {"object": DEPLOY, "absent": True}]},
    ])) == []


def test_a_deletion_made_while_no_control_plane_ran_is_finished_by_the_next() -> None:
    async def delete_while_down() -> StoreProtocol:
        store = open_store("memory://", clock=VirtualClock())
        client = LocalClient(store, admission=admit, clock=VirtualClock())
        await client.create(Namespace.from_dict({"metadata": {"name": "old"}}))
        await client.create(ConfigMap.from_dict({"metadata": {"name": "left", "namespace": "old"}}))
        await client.delete(Namespace, "old")
        assert (await client.get(Namespace, "old")).status.phase == "Terminating"
        return store

    factory = PlaneFactory("memory://")
    factory.store = asyncio.run(delete_while_down())
    old = {"apiVersion": "v1", "kind": "Namespace", "name": "old"}
    assert run(story([{"at": "10s", "expect": [
        {"object": {**CONFIG, "namespace": "old", "name": "left"}, "absent": True},
        {"object": old, "absent": True}]}], resources=[]), factory) == []


def test_a_namespace_stored_without_the_finalizer_goes_at_once_and_is_emptied_after() -> None:
    async def stored_by_an_earlier_version() -> StoreProtocol:
        store = open_store("memory://", clock=VirtualClock())
        await store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "legacy"},
                            "status": {"phase": "Active"}})
        await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "left", "namespace": "legacy"}})
        return store

    factory = PlaneFactory("memory://")
    factory.store = asyncio.run(stored_by_an_earlier_version())
    legacy = {"apiVersion": "v1", "kind": "Namespace", "name": "legacy"}
    left = {**CONFIG, "namespace": "legacy", "name": "left"}
    assert run(story([{"at": "10s", "do": [{"delete": legacy}], "expect": [
        {"object": legacy, "absent": True}]},
        {"at": "20s", "expect": [{"object": left, "absent": True}]}], resources=[]), factory) == []


def in_world(body: Callable[[World], Awaitable[None]]) -> None:
    """Run ``body`` in a world of no member clusters, on virtual time."""
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ())
        try:
            await body(world)
        finally:
            await world.close()

    clock.run(main())


async def held_namespace(world: World, name: str) -> None:
    """Start the namespace cleanup; make namespace ``name`` with a ConfigMap its finalizer holds."""
    world.start([namespaces.SPEC])
    await world.client.create(Namespace.from_dict({"metadata": {"name": name}}))
    await world.client.create(ConfigMap.from_dict(
        {"metadata": {"name": "held", "namespace": name, "finalizers": ["example.com/hold"]}}))


def test_a_terminating_namespace_says_what_is_left_and_what_holds_it() -> None:
    async def body(world: World) -> None:
        client = world.client
        await held_namespace(world, "stuck")
        await client.create(ConfigMap.from_dict({"metadata": {"name": "free", "namespace": "stuck"}}))
        await client.delete(Namespace, "stuck")
        await world.until(world.now + 5)
        stuck = await client.get(Namespace, "stuck")
        by_type = {c["type"]: c for c in stuck.status.conditions or ()}
        assert [c["type"] for c in stuck.status.conditions or ()] == [
            "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
            "NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining"]
        assert by_type["NamespaceContentRemaining"]["message"] == (
            "Some resources are remaining: configmaps. has 1 resource instances")
        assert by_type["NamespaceFinalizersRemaining"]["message"] == (
            "Some content in the namespace has finalizers remaining: "
            "example.com/hold in 1 resource instances")
        assert by_type["NamespaceFinalizersRemaining"]["status"] == "True"
        assert stuck.status.phase == "Terminating"
        held = await client.get(ConfigMap, "held", "stuck")
        held.metadata.finalizers = None
        await client.update(held)
        await world.until(world.now + 5)
        with pytest.raises(errors.NotFound):
            await client.get(Namespace, "stuck")

    in_world(body)


def _cleanups() -> float:
    return sum(REGISTRY.get_sample_value("fleetkeeper_reconcile_total",
                                         {"controller": "namespace-cleanup", "result": result}) or 0.0
               for result in ("success", "requeue_after", "error", "terminal"))


def test_the_cleanup_s_own_condition_writes_do_not_wake_it() -> None:
    async def body(world: World) -> None:
        client = world.client
        await held_namespace(world, "slow")
        await world.until(world.now + 1)
        before = _cleanups()
        await client.delete(Namespace, "slow")
        await world.until(world.now + 1)
        reported = await client.get(Namespace, "slow")
        assert reported.status.conditions, "the first look wrote the conditions"
        assert _cleanups() - before == 1, "and that write did not make it look again at once"
        await world.until(world.now + 2)
        assert _cleanups() - before == 2, "it looks again after RETRY_SECONDS"

    in_world(body)
