"""The CRD controller teaches controllers running without an API server (a controller-manager apart)
the kinds CustomResourceDefinitions define: a cluster-scoped custom kind is stored without a
namespace, bound by a ClusterResourceBinding and reaches the member; deleting the CRD forgets it."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.builtin import CustomResourceDefinition
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.scheme import SCHEME, GroupKind
from fleetkeeper.api.work import ClusterResourceBinding
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import crds

from .propagation_world import PIPELINE, World, run, running

RACK = GroupKind("infra.ctl.test.io", "Rack")
RACK_API = {"groupVersion": "infra.ctl.test.io/v1", "resources": [{"name": "racks", "kind": "Rack"}]}


pytestmark = pytest.mark.usefixtures("forget_crds")


def rack_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "racks.infra.ctl.test.io"},
        "spec": {"group": "infra.ctl.test.io", "scope": "Cluster",
                 "names": {"kind": "Rack", "plural": "racks"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
    }


async def serve_racks(client: Any) -> None:
    """Before the controllers start: the CRD is stored, and member1 reports serving racks (as the
    cluster-status controller would once the CRD was propagated there)."""
    await client.create(CustomResourceDefinition.from_dict(rack_crd()))
    cluster = await client.get(Cluster, "member1")
    cluster.status.api_enablements = [*(cluster.status.api_enablements or []),
                                      type(cluster.status.api_enablements[0]).model_validate(RACK_API)]
    await client.update_status(cluster)


def test_a_cluster_scoped_custom_kind_propagates_without_an_api_server() -> None:
    async def main(clock: VirtualClock) -> None:
        # a kind guessed before the CRD was known: namespaced, as every unknown kind is
        guessed = Unstructured.for_kind("infra.ctl.test.io/v1", "Rack")
        assert guessed.NAMESPACED
        specs = (crds.SPEC, *PIPELINE)
        async with running(clock, "member1", specs=specs, before_start=serve_racks) as world:
            info = SCHEME.by_group_kind(RACK)
            assert info is not None and not info.namespaced and info.plural == "racks"
            assert info.model is guessed and not guessed.NAMESPACED, "the guessed class took the CRD's scope"
            await propagate_a_rack(world)
            await world.client.delete(CustomResourceDefinition, "racks.infra.ctl.test.io")

            async def forgotten() -> bool:
                return SCHEME.by_group_kind(RACK) is None

            await world.wait_for(forgotten)

    run(main)


async def propagate_a_rack(world: World) -> None:
    created = await world.apply({"apiVersion": "infra.ctl.test.io/v1", "kind": "Rack",
                                 "metadata": {"name": "r1"}, "spec": {"units": 4}})
    assert created.metadata.namespace is None
    await world.apply({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
        "metadata": {"name": "racks"},
        "spec": {"resourceSelectors": [{"apiVersion": "infra.ctl.test.io/v1", "kind": "Rack"}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}},
    })

    async def on_member() -> dict[str, Any] | None:
        return await world.member_object("member1", "infra.ctl.test.io/v1", "Rack", "", "r1")

    copy = await world.wait_for(on_member)
    assert copy["spec"] == {"units": 4} and not copy["metadata"].get("namespace")
    binding = await world.get(ClusterResourceBinding, "r1-rack")
    assert binding is not None and binding.spec.resource.kind == "Rack"


def test_a_crd_created_while_running_is_learned_and_one_deleted_forgotten() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", specs=(crds.SPEC,)) as world:
            assert SCHEME.by_group_kind(RACK) is None
            await world.apply(rack_crd())

            async def learned() -> bool:
                info = SCHEME.by_group_kind(RACK)
                return info is not None and not info.namespaced

            await world.wait_for(learned)
            await world.client.delete(CustomResourceDefinition, "racks.infra.ctl.test.io")

            async def forgotten() -> bool:
                return SCHEME.by_group_kind(RACK) is None

            await world.wait_for(forgotten)

    run(main)
