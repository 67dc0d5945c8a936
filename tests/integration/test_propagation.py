"""The propagation pipeline end to end: template + policy → binding → schedule → Works →
member objects → statuses back to the binding and the template.

Real controllers (assembled by ``ControlPlane``), the real scheduler, a real store and
simulated member clusters, all on a VirtualClock: each story waits in virtual time
until the expected state holds.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controllers.propagation_world import PIPELINE, World, run, running
from fleetkeeper.api import constants
from fleetkeeper.api.builtin import ConfigMap, Deployment
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.timeline import WORK_CREATED, TimelineEntry
from fleetkeeper.api.work import ResourceBinding, Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.bench_propagation import bench_propagation
from fleetkeeper.controllers import cluster, namespaces
from fleetkeeper.members.simulated.objects import ObjectKey

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
             "template": {"metadata": {"labels": {"app": "nginx"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}},
}


def policy(kind: str = "Deployment", name: str = "nginx", api_version: str = "apps/v1", *,
           propagate_deps: bool = False) -> dict[str, Any]:
    """The seed policy: member1 and member2 with static weights 1 and 2."""
    return {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": f"{name}-propagation", "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": api_version, "kind": kind, "name": name}],
            "propagateDeps": propagate_deps,
            "placement": {
                "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                    "weightPreference": {"staticWeightList": [
                        {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                        {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2},
                    ]},
                },
            },
        },
    }


async def ready_replicas(world: World, cluster: str, name: str = "nginx") -> int | None:
    obj = await world.member_object(cluster, "apps/v1", "Deployment", "default", name)
    if obj is None:
        return None
    return int((obj.get("status") or {}).get("readyReplicas") or 0)


async def member_replicas(world: World) -> tuple[int | None, int | None]:
    return await ready_replicas(world, "member1"), await ready_replicas(world, "member2")


async def binding(world: World, name: str = "nginx-deployment") -> ResourceBinding | None:
    return await world.get(ResourceBinding, name, "default")


async def all_healthy(world: World, name: str = "nginx-deployment") -> ResourceBinding | None:
    rb = await binding(world, name)
    items = rb.status.aggregated_status or [] if rb is not None else []
    if rb is None or len(items) != 2 or any(i.health != "Healthy" for i in items):
        return None
    return rb


def test_the_seed_example_runs_one_and_two_replicas_and_reports_them_healthy() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(policy())
            await world.apply(DEPLOYMENT)
            await world.wait_for(lambda: _equals(member_replicas(world), (1, 2)))
            work = await world.get(Work, "nginx-687f7fb96f", "karmada-es-member1")
            assert work is not None
            rb = await world.wait_for(lambda: all_healthy(world))
            assert [i.cluster_name for i in rb.status.aggregated_status or []] == ["member1", "member2"]
            assert all(i.applied for i in rb.status.aggregated_status or [])
            assert {t.name: t.replicas for t in rb.spec.clusters or []} == {"member1": 1, "member2": 2}
            fully = [c for c in rb.status.conditions or [] if c.type == constants.COND_FULLY_APPLIED]
            assert fully and fully[0].status == "True"
            template = await world.wait_for(lambda: _template_ready(world, 3))
            assert template.field("status")["readyReplicas"] == 3
            entries = (await world.client.list(TimelineEntry)).items
            assert any(e.action == WORK_CREATED and e.subject.name == "nginx-deployment" for e in entries)

    run(main)


def test_scaling_the_template_to_nine_runs_three_and_six() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(policy())
            await world.apply(DEPLOYMENT)
            await world.wait_for(lambda: _template_ready(world, 3))
            template = await world.client.get(Deployment, "nginx", "default")
            scaled = template.model_copy(deep=True)
            scaled.set_field("spec", {**template.field("spec"), "replicas": 9})
            await world.client.update(scaled)
            await world.wait_for(lambda: _equals(member_replicas(world), (3, 6)))
            await world.wait_for(lambda: _template_ready(world, 9))

    run(main)


def test_a_deployment_without_replicas_runs_one_replica_in_all_not_one_per_cluster() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(policy())
            unsized = copy.deepcopy(DEPLOYMENT)
            del unsized["spec"]["replicas"]
            await world.apply(unsized)
            template = await world.wait_for(lambda: _template_ready(world, 1))
            assert template.field("spec")["replicas"] == 1  # defaulted when stored, as kube-apiserver does
            rb = await world.wait_for(lambda: binding(world))
            assert rb.spec.replicas == 1
            assert sum(t.replicas for t in rb.spec.clusters or []) == 1
            held = [await ready_replicas(world, name) for name in ("member1", "member2")]
            assert sum(h or 0 for h in held) == 1, held

    run(main)


def test_deleting_the_template_removes_member_objects_works_and_binding() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(policy())
            await world.apply(DEPLOYMENT)
            await world.wait_for(lambda: all_healthy(world))
            await world.client.delete(Deployment, "nginx", "default")

            async def all_gone() -> bool:
                works = (await world.client.list(Work)).items
                return (await member_replicas(world) == (None, None) and not works
                        and await binding(world) is None)

            await world.wait_for(all_gone)

    run(main)


def test_a_deleted_execution_namespace_is_emptied_made_again_and_dispatched_anew() -> None:
    specs = (*PIPELINE, cluster.SPEC, namespaces.SPEC)

    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2", specs=specs) as world:
            await world.apply(policy())
            await world.apply(DEPLOYMENT)
            await world.wait_for(lambda: all_healthy(world))
            first = await world.client.get(Namespace, "karmada-es-member1")
            copy = await world.member_object("member1", "apps/v1", "Deployment", "default", "nginx")
            assert copy is not None
            await world.client.delete(Namespace, "karmada-es-member1")

            async def back_everywhere() -> Namespace | None:
                space = await world.get(Namespace, "karmada-es-member1")
                if space is None or space.metadata.uid == first.metadata.uid:
                    return None
                return space if await member_replicas(world) == (1, 2) else None

            space = await world.wait_for(back_everywhere, within=60)
            assert space.metadata.deletion_timestamp is None
            again = await world.member_object("member1", "apps/v1", "Deployment", "default", "nginx")
            assert again is not None and again["metadata"]["uid"] != copy["metadata"]["uid"], (
                "the copy in member1 went with its Work and was made again")
            assert await world.get(Work, "nginx-687f7fb96f", "karmada-es-member1") is not None
            await world.wait_for(lambda: all_healthy(world))

    run(main)


CONFIG_MAP: dict[str, Any] = {
    "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nginx-config", "namespace": "default"},
    "data": {"index.html": "hello"},
}


def test_a_config_map_referenced_by_the_deployment_follows_it_with_propagate_deps() -> None:
    deployment = copy.deepcopy(DEPLOYMENT)
    deployment["spec"]["template"]["spec"]["volumes"] = [{"name": "html",
                                                          "configMap": {"name": "nginx-config"}}]

    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(CONFIG_MAP)
            await world.apply(policy(propagate_deps=True))
            await world.apply(deployment)

            async def config_maps() -> bool:
                found = [await world.member_object(c, "v1", "ConfigMap", "default", "nginx-config")
                         for c in ("member1", "member2")]
                return all(f is not None and f["data"] == {"index.html": "hello"} for f in found)

            await world.wait_for(config_maps)
            attached = await binding(world, "nginx-config-configmap")
            assert attached is not None
            assert [s.name for s in attached.spec.required_by or []] == ["nginx-deployment"]
            assert attached.spec.clusters is None
            independent = await binding(world)
            assert independent is not None
            assert "nginx-config" in independent.annotations()[constants.DEPENDENCIES_ANNOTATION]

            await world.client.delete(Deployment, "nginx", "default")

            async def config_maps_gone() -> bool:
                found = [await world.member_object(c, "v1", "ConfigMap", "default", "nginx-config")
                         for c in ("member1", "member2")]
                return all(f is None for f in found) and await binding(world,
                                                                       "nginx-config-configmap") is None

            await world.wait_for(config_maps_gone)
            assert await world.get(ConfigMap, "nginx-config", "default") is not None

    run(main)


WORKLOAD_RIC: dict[str, Any] = {
    "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
    "metadata": {"name": "declarative-configuration-workload"},
    "spec": {
        "target": {"apiVersion": "apps.example.io/v1", "kind": "Workload"},
        "customizations": {
            "replicaResource": {"luaScript": """
function GetReplicas(obj)
  replica = obj.spec.replicas
  requirement = {}
  return replica, requirement
end"""},
            "replicaRevision": {"luaScript": """
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end"""},
            "statusReflection": {"luaScript": """
function ReflectStatus(observedObj)
  status = {}
  if observedObj.status == nil then
    return status
  end
  status.readyReplicas = observedObj.status.readyReplicas
  return status
end"""},
            "healthInterpretation": {"luaScript": """
function InterpretHealth(observedObj)
  if observedObj.status == nil or observedObj.status.readyReplicas == nil then
    return false
  end
  return observedObj.status.readyReplicas == observedObj.spec.replicas
end"""},
            "statusAggregation": {"luaScript": """
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  if desiredObj.status == nil then
    desiredObj.status = {}
  end
  readyReplicas = 0
  for i = 1, #statusItems do
    if statusItems[i].status ~= nil and statusItems[i].status.readyReplicas ~= nil then
      readyReplicas = readyReplicas + statusItems[i].status.readyReplicas
    end
  end
  desiredObj.status.readyReplicas = readyReplicas
  return desiredObj
end"""},
        },
    },
}

WORKLOAD: dict[str, Any] = {
    "apiVersion": "apps.example.io/v1", "kind": "Workload",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 3, "image": "nginx:1.25"},
}


def test_a_lua_customization_drives_replicas_health_and_status_of_a_custom_kind() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(WORKLOAD_RIC)
            await world.settle(1)
            await world.apply(policy("Workload", "web", "apps.example.io/v1"))
            await world.apply(WORKLOAD)

            async def member_specs() -> tuple[int, int] | None:
                found = [await world.member_object(c, "apps.example.io/v1", "Workload", "default", "web")
                         for c in ("member1", "member2")]
                if any(f is None for f in found):
                    return None
                return found[0]["spec"]["replicas"], found[1]["spec"]["replicas"]  # type: ignore[index]

            assert await world.wait_for(member_specs) == (1, 2)
            rb = await binding(world, "web-workload")
            assert rb is not None and rb.spec.replicas == 3
            await world.settle(2)
            rb = await binding(world, "web-workload")
            assert rb is not None and {i.health for i in rb.status.aggregated_status or []} == {"Unhealthy"}

            for cluster, ready in (("member1", 1), ("member2", 2)):  # the members' operator reports
                key = ObjectKey("apps.example.io", "Workload", "default", "web")
                world.member(cluster).engine.store.replace(key, status={"readyReplicas": ready})
            await world.wait_for(lambda: all_healthy(world, "web-workload"))
            model = Unstructured.for_kind("apps.example.io/v1", "Workload")

            async def aggregated() -> bool:
                template = await world.get(model, "web", "default")
                return template is not None and (template.field("status") or {}).get("readyReplicas") == 3

            await world.wait_for(aggregated)

    run(main)


# --- helpers --------------------------------------------------------------------------------------


async def _equals(value: Any, expected: Any) -> bool:
    return bool(await value == expected)


async def _template_ready(world: World, replicas: int) -> Any:
    template = await world.get(Deployment, "nginx", "default")
    status = (template.field("status") or {}) if template is not None else {}
    return template if status.get("readyReplicas") == replicas else None


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_propagation_benchmark_reports_every_work_healthy() -> None:
    clock = VirtualClock()
    result = clock.run(bench_propagation(templates=4, clusters=3, store_url="memory://", clock=clock))
    assert (result["templates"], result["clusters"], result["works"]) == (4, 3, 12)
    assert result["completed_templates"] == 4
    assert {"seconds", "works_per_second", "cpu_seconds"} <= set(result)
