"""The resource detector in a running plane: claims, releases, preemption, scopes and kinds."""

from __future__ import annotations

from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.builtin import ClusterRole, Deployment
from fleetkeeper.api.core import Event
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.work import ClusterResourceBinding, ResourceBinding, Work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers.detector_rules import policy_id

from .propagation_world import World, deployment, propagation_policy, run, running


async def binding(world: World, name: str = "nginx-deployment") -> ResourceBinding | None:
    return await world.get(ResourceBinding, name, "default")


def claimed_by(world: World, policy_name: str) -> Any:
    async def check() -> ResourceBinding | None:
        rb = await binding(world)
        if rb is None:
            return None
        return rb if rb.annotations().get(constants.PP_NAME_ANNOTATION) == policy_name else None
    return check


def test_policies_get_permanent_ids_and_claims_are_recorded_on_template_and_binding() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            rb = await world.wait_for(claimed_by(world, "nginx-propagation"))
            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")

            async def labelled() -> bool:
                current = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
                return bool(current.labels().get(constants.PP_PERMANENT_ID_LABEL))

            await world.wait_for(labelled)
            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            ident = policy.labels()[constants.PP_PERMANENT_ID_LABEL]
            assert ident == policy_id(policy)
            assert rb.labels()[constants.PP_PERMANENT_ID_LABEL] == ident
            template = await world.client.get(Deployment, "nginx", "default")
            assert template.labels()[constants.PP_PERMANENT_ID_LABEL] == ident
            assert template.annotations()[constants.PP_NAME_ANNOTATION] == "nginx-propagation"

    run(main)


def test_a_higher_priority_policy_takes_over_only_with_preemption() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            await world.wait_for(claimed_by(world, "nginx-propagation"))
            rival = propagation_policy("nginx", "member1", priority=10)
            rival["metadata"]["name"] = "rival"
            await world.apply(rival)
            await world.settle(10)
            assert await claimed_by(world, "nginx-propagation")(), "preemption is off by default"

            current = await world.client.get(PropagationPolicy, "rival", "default")
            current.spec.preemption = "Always"
            await world.client.update(current)
            rb = await world.wait_for(claimed_by(world, "rival"))
            assert rb.spec.placement is not None and rb.spec.placement.cluster_affinity is not None
            assert rb.spec.placement.cluster_affinity.cluster_names == ["member1"]

    run(main)


def test_deleting_the_policy_releases_the_claim_and_keeps_the_workload_running() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            await world.wait_for(claimed_by(world, "nginx-propagation"))
            await world.client.delete(PropagationPolicy, "nginx-propagation", "default")

            async def released() -> bool:
                rb = await binding(world)
                template = await world.client.get(Deployment, "nginx", "default")
                return (rb is not None and constants.PP_PERMANENT_ID_LABEL not in rb.labels()
                        and constants.PP_PERMANENT_ID_LABEL not in template.labels())

            await world.wait_for(released)
            await world.settle(10)
            assert len((await world.client.list(Work)).items) == 2

            await world.apply(propagation_policy("nginx", "member1"))
            await world.wait_for(claimed_by(world, "nginx-propagation"))

    run(main)


def test_a_binding_orphaned_from_its_template_outlives_it_with_its_works() -> None:
    """``kubectl delete --cascade=orphan``: the API server removes the template's ownership
    first, and a binding its template no longer owns is not the detector's to delete."""
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            await world.wait_for(claimed_by(world, "nginx-propagation"))
            await world.wait_for(lambda: _works(world, 2))
            rb = await binding(world)
            assert rb is not None and rb.metadata.owner_references
            meta = rb.metadata.model_copy(update={"owner_references": None})
            await world.client.update(rb.model_copy(update={"metadata": meta}))
            await world.client.delete(Deployment, "nginx", "default")
            await world.settle(30)
            assert await binding(world) is not None
            assert len((await world.client.list(Work)).items) == 2

    run(main)


def test_a_template_deleted_in_the_foreground_goes_after_its_binding() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy())
            await world.apply(deployment())
            await world.wait_for(lambda: _works(world, 2))
            template = await world.client.get(Deployment, "nginx", "default")
            held = [constants.FOREGROUND_DELETION_FINALIZER]
            meta = template.metadata.model_copy(update={"finalizers": held})
            await world.client.update(template.model_copy(update={"metadata": meta}))
            await world.client.delete(Deployment, "nginx", "default")

            async def all_gone() -> bool:
                return (await binding(world) is None and not (await world.client.list(Work)).items
                        and not (await world.client.list(Deployment, "default")).items)

            await world.wait_for(all_gone)

    run(main)


async def _works(world: World, count: int) -> bool:
    return len((await world.client.list(Work)).items) == count


def test_templates_in_reserved_namespaces_are_never_propagated() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply({
                "apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
                "metadata": {"name": "all-deployments"},
                "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
                         "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}},
            })
            await world.apply(deployment("system", namespace="karmada-system"))
            await world.apply(deployment("web"))
            await world.wait_for(lambda: world.get(ResourceBinding, "web-deployment", "default"))
            await world.settle(5)
            assert await world.get(ResourceBinding, "system-deployment", "karmada-system") is None

    run(main)


RBAC = "rbac.authorization.k8s.io/v1"


def test_a_cluster_propagation_policy_propagates_a_cluster_scoped_template() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.client.create(ClusterPropagationPolicy.from_dict({
                "metadata": {"name": "roles"},
                "spec": {"resourceSelectors": [{"apiVersion": "rbac.authorization.k8s.io/v1",
                                                "kind": "ClusterRole", "name": "reader"}],
                         "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}},
            }))
            await world.client.create(ClusterRole.from_dict({
                "metadata": {"name": "reader"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}))

            async def on_members() -> bool:
                found = [await world.member_object(c, RBAC, "ClusterRole", "", "reader")
                         for c in ("member1", "member2")]
                return all(f is not None for f in found)

            await world.wait_for(on_members)
            crb = await world.get(ClusterResourceBinding, "reader-clusterrole")
            assert crb is not None and crb.labels().get(constants.CPP_PERMANENT_ID_LABEL)
            work = await world.get(Work, constants.work_name("ClusterRole", "reader", ""),
                                   "karmada-es-member1")
            assert work is not None
            ident = crb.labels()[constants.CRB_PERMANENT_ID_LABEL]
            assert work.labels().get(constants.CRB_PERMANENT_ID_LABEL) == ident
            assert work.annotations()[constants.CRB_NAME_ANNOTATION] == "reader-clusterrole"

    run(main)


def _events(world: World, reason: str) -> Any:
    async def check() -> list[Event] | None:
        found = [e for e in (await world.client.list(Event)).items if e.reason == reason]
        return found or None
    return check


def test_schedule_priority_comes_from_the_kubernetes_priority_class_the_policy_names() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1") as world:
            await world.apply(propagation_policy(
                "nginx", "member1",
                schedulePriority={"priorityClassSource": "KubePriorityClass",
                                  "priorityClassName": "critical"}))
            await world.apply(deployment())
            failed = await world.wait_for(_events(world, constants.EVENT_APPLY_POLICY_FAILED), within=10)
            assert failed[0].involved_object.kind == "Deployment" and failed[0].type == "Warning"
            assert failed[0].message == ('Apply policy(default/nginx-propagation) failed: '
                                         'priorityclasses.scheduling.k8s.io "critical" not found')
            assert await binding(world) is None, "held back until the PriorityClass exists"
            await world.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                               "metadata": {"name": "critical"}, "value": 100000})
            made = await world.wait_for(lambda: binding(world), within=10)
            assert made.spec.schedule_priority is not None and made.spec.schedule_priority.priority == 100000
            told = await world.wait_for(_events(world, constants.EVENT_APPLY_POLICY_SUCCEED))
            assert [e.message for e in told] == ["Apply policy(default/nginx-propagation) succeed"]
            # the policy drops its schedulePriority: so does the binding
            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            policy.spec.schedule_priority = None
            await world.client.update(policy)

            async def dropped() -> bool:
                current = await binding(world)
                return current is not None and current.spec.schedule_priority is None

            await world.wait_for(dropped, within=10)

    run(main)


def test_a_lazy_policy_change_waits_for_the_templates_own_edit_whatever_wakes_the_template() -> None:
    async def main(clock: VirtualClock) -> None:
        async with running(clock, "member1", "member2") as world:
            await world.apply(propagation_policy("nginx", "member1", activationPreference="Lazy"))
            await world.apply(deployment())
            await world.wait_for(claimed_by(world, "nginx-propagation"))
            policy = await world.client.get(PropagationPolicy, "nginx-propagation", "default")
            assert policy.spec.placement.cluster_affinity is not None
            policy.spec.placement.cluster_affinity.cluster_names = ["member2"]
            await world.client.update(policy)
            await world.settle()

            async def placed_on() -> list[str]:
                rb = await binding(world)
                assert rb is not None and rb.spec.placement is not None
                affinity = rb.spec.placement.cluster_affinity
                return list(affinity.cluster_names or ()) if affinity is not None else []

            assert await placed_on() == ["member1"], "the policy's change waits"
            template = await world.client.get(Deployment, "nginx", "default")  # Karmada's own change
            meta = template.metadata.model_copy(update={"annotations": {
                **template.annotations(), "propagationpolicy.karmada.io/touched": "yes"}})
            await world.client.update(template.model_copy(update={"metadata": meta}))
            rb = await binding(world)
            assert rb is not None
            await world.client.delete(ResourceBinding, rb.name, "default")  # a wake by the binding
            await world.settle()
            assert await binding(world) is None, "not even a binding deleted by hand is made again"
            template = await world.client.get(Deployment, "nginx", "default")  # the user's edit
            meta = template.metadata.model_copy(update={"labels": {**template.labels(), "tier": "web"}})
            await world.client.update(template.model_copy(update={"metadata": meta}))

            async def follows() -> bool:
                return await binding(world) is not None and await placed_on() == ["member2"]

            await world.wait_for(follows, within=10)

    run(main)
