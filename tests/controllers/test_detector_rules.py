"""The detector's pure decisions: which policy claims a template, and the binding it implies."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper.api import constants
from fleetkeeper.api.builtin import ClusterRole, Deployment
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy, Suspension
from fleetkeeper.api.work import BindingSuspension, ResourceBinding, TargetCluster
from fleetkeeper.controllers import detector_rules as rules

DEPLOY = Deployment.from_dict({
    "metadata": {"name": "nginx", "namespace": "default", "uid": "uid-nginx", "resourceVersion": "7",
                 "labels": {"app": "nginx"}},
    "spec": {"replicas": 3},
})


def pp(name: str, *, selector: dict[str, Any] | None = None, priority: int = 0, preemption: str = "Never",
       namespace: str = "default", uid: str | None = None, **spec: Any) -> PropagationPolicy:
    sel = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": namespace, **(selector or {})}
    return PropagationPolicy.from_dict({
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"},
        "spec": {"resourceSelectors": [sel], "priority": priority, "preemption": preemption, **spec},
    })


def cpp(name: str, *, selector: dict[str, Any] | None = None, priority: int = 0,
        preemption: str = "Never") -> ClusterPropagationPolicy:
    sel = {"apiVersion": "apps/v1", "kind": "Deployment", **(selector or {})}
    return ClusterPropagationPolicy.from_dict({
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"resourceSelectors": [sel], "priority": priority, "preemption": preemption},
    })


@pytest.mark.parametrize(("namespace", "skipped"), [
    pytest.param("default", False, id="an ordinary namespace is propagated"),
    pytest.param("karmada-system", True, id="karmada-system is reserved"),
    pytest.param("karmada-cluster", True, id="karmada-cluster is reserved"),
    pytest.param("karmada-es-member1", True, id="execution namespaces are reserved"),
    pytest.param("kube-system", True, id="kube- namespaces are skipped by default"),
])
def test_skipped_namespaces(namespace: str, skipped: bool) -> None:
    assert rules.skipped_namespace(namespace) is skipped


@pytest.mark.parametrize(("policies", "winner"), [
    pytest.param([pp("b"), pp("a")], "a", id="equal priorities: the first name wins"),
    pytest.param([pp("a"), pp("b", priority=5)], "b", id="a higher explicit priority wins"),
    pytest.param([pp("a"), pp("b", selector={"name": "nginx"})], "b", id="a name match beats a kind match"),
    pytest.param([pp("a", selector={"labelSelector": {"matchLabels": {"app": "nginx"}}}), pp("b")], "a",
                 id="a label match beats a kind match"),
    pytest.param([pp("a", selector={"name": "nginx"}), pp("b", priority=1)], "b",
                 id="explicit priority beats implicit priority"),
    pytest.param([pp("a", selector={"name": "other"})], None, id="another name does not match"),
    pytest.param([pp("a", namespace="other")], None, id="a policy of another namespace does not match"),
])
def test_best_policy(policies: list[PropagationPolicy], winner: str | None) -> None:
    best = rules.best_policy(policies, DEPLOY)
    assert (best.name if best else None) == winner


def claim(policy: rules.Policy) -> rules.Claim:
    kind = "PropagationPolicy" if isinstance(policy, PropagationPolicy) else "ClusterPropagationPolicy"
    return rules.Claim(kind, rules.policy_id(policy))  # type: ignore[arg-type]


HOLDER = pp("holder")
CLUSTER_HOLDER = cpp("cluster-holder")


@pytest.mark.parametrize(("held_by", "pps", "cpps", "winner"), [
    pytest.param(None, [pp("a")], [cpp("z", priority=9)], "a",
                 id="an unclaimed template goes to a PropagationPolicy before any ClusterPropagationPolicy"),
    pytest.param(None, [], [cpp("z")], "z",
                 id="a ClusterPropagationPolicy claims when no PropagationPolicy matches"),
    pytest.param(HOLDER, [HOLDER, pp("a", priority=5)], [], "holder",
                 id="a claim is sticky: a higher priority does not preempt by default"),
    pytest.param(HOLDER, [HOLDER, pp("a", priority=5, preemption="Always")], [], "a",
                 id="preemption Always with a higher priority takes the template"),
    pytest.param(HOLDER, [HOLDER, pp("a", priority=0, preemption="Always")], [], "holder",
                 id="preemption needs a strictly higher priority"),
    pytest.param(CLUSTER_HOLDER, [pp("a", preemption="Always")], [CLUSTER_HOLDER], "a",
                 id="a PropagationPolicy with preemption Always preempts a ClusterPropagationPolicy"),
    pytest.param(CLUSTER_HOLDER, [pp("a")], [CLUSTER_HOLDER], "cluster-holder",
                 id="without preemption a PropagationPolicy leaves a cluster claim alone"),
    pytest.param(HOLDER, [pp("a")], [], "a", id="a claim whose policy is gone is matched afresh"),
    pytest.param(HOLDER, [pp("holder", selector={"name": "other"})], [], None,
                 id="a claim whose policy stopped matching is released"),
])
def test_choose_policy(held_by: rules.Policy | None, pps: list[PropagationPolicy],
                       cpps: list[ClusterPropagationPolicy], winner: str | None) -> None:
    chosen = rules.choose_policy(DEPLOY, claim(held_by) if held_by else None, pps, cpps)
    assert (chosen.name if chosen else None) == winner


def test_a_deleting_policy_claims_nothing() -> None:
    policy = pp("a")
    policy.metadata.deletion_timestamp = datetime(2026, 1, 1, tzinfo=UTC)
    assert rules.choose_policy(DEPLOY, None, [policy], []) is None


def test_policy_ids_are_the_label_or_derived_from_the_uid() -> None:
    assert rules.policy_id(pp("a")) == rules.policy_id(pp("a"))
    assert rules.policy_id(pp("a")) != rules.policy_id(pp("a", uid="another"))
    labelled = pp("a")
    labelled.metadata.labels = {constants.PP_PERMANENT_ID_LABEL: "given"}
    assert rules.policy_id(labelled) == "given"


def test_a_claim_replaces_the_other_kinds_claim() -> None:
    labels = {"app": "x", constants.CPP_PERMANENT_ID_LABEL: "old"}
    annotations = {constants.CPP_NAME_ANNOTATION: "old", "keep": "me"}
    new_labels, new_annotations = rules.with_claim(labels, annotations, pp("a"))
    assert new_labels == {"app": "x", constants.PP_PERMANENT_ID_LABEL: rules.policy_id(pp("a"))}
    assert new_annotations == {"keep": "me", constants.PP_NAMESPACE_ANNOTATION: "default",
                               constants.PP_NAME_ANNOTATION: "a"}
    assert rules.with_claim(new_labels, new_annotations, None) == ({"app": "x"}, {"keep": "me"})


@pytest.mark.parametrize(("policy", "current", "expected"), [
    pytest.param(None, None, None, id="nothing to merge gives no suspension"),
    pytest.param(None, BindingSuspension(dispatching=True), None,
                 id="a policy without suspension clears dispatching"),
    pytest.param(None, BindingSuspension(dispatching=True, scheduling=True),
                 BindingSuspension(scheduling=True), id="clearing keeps the binding's scheduling flag"),
    pytest.param(Suspension(dispatching=True), None, BindingSuspension(dispatching=True),
                 id="the policy's dispatching is copied"),
    pytest.param(Suspension(dispatching=True), BindingSuspension(scheduling=True),
                 BindingSuspension(dispatching=True, scheduling=True), id="copying keeps scheduling"),
    pytest.param(Suspension.from_dict({"dispatchingOnClusters": {"clusterNames": ["m1"]}}),
                 BindingSuspension(dispatching=True),
                 BindingSuspension.from_dict({"dispatchingOnClusters": {"clusterNames": ["m1"]}}),
                 id="per-cluster dispatching replaces the old setting"),
])
def test_merge_suspension(policy: Suspension | None, current: BindingSuspension | None,
                          expected: BindingSuspension | None) -> None:
    assert rules.merge_suspension(policy, current) == expected


def test_a_new_binding_copies_the_policy_and_points_at_its_template() -> None:
    policy = pp("a", propagateDeps=True, conflictResolution="Overwrite", preserveResourcesOnDeletion=True,
                failover={"cluster": {"purgeMode": "Directly"}}, suspension={"dispatching": True})
    workload = rules.Workload(3, {"resourceRequest": {"cpu": "100m"}})
    binding = rules.desired_binding(DEPLOY, policy, workload, None)
    assert isinstance(binding, ResourceBinding)
    assert (binding.namespace, binding.name) == ("default", "nginx-deployment")
    assert binding.labels()[constants.PP_PERMANENT_ID_LABEL] == rules.policy_id(policy)
    assert binding.labels()[constants.RB_PERMANENT_ID_LABEL] == rules.binding_permanent_id(DEPLOY,
                                                                                           namespaced=True)
    assert binding.annotations()[constants.PP_NAME_ANNOTATION] == "a"
    assert binding.metadata.finalizers == [constants.BINDING_CONTROLLER_FINALIZER]
    owner = (binding.metadata.owner_references or [])[0]
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Deployment", "nginx", "uid-nginx", True)
    spec = binding.spec
    assert (spec.resource.uid, spec.resource.resource_version) == ("uid-nginx", "7")
    assert spec.replicas == 3 and spec.replica_requirements is not None
    assert spec.propagate_deps and spec.conflict_resolution == "Overwrite"
    assert spec.preserve_resources_on_deletion
    assert spec.failover is not None and spec.failover.cluster is not None
    assert spec.suspension == BindingSuspension(dispatching=True)


def test_a_refresh_keeps_what_others_own_and_ignores_the_template_version() -> None:
    policy = pp("a")
    current = rules.desired_binding(DEPLOY, policy, rules.Workload(3), None)
    current.spec.clusters = [TargetCluster(name="member1", replicas=3)]
    current.metadata.labels = {**current.labels(), "other": "kept"}
    current.metadata.finalizers = ["someone/else", constants.BINDING_CONTROLLER_FINALIZER]
    newer = DEPLOY.model_copy(deep=True)
    newer.metadata.resource_version = "99"
    refreshed = rules.desired_binding(newer, policy, rules.Workload(3), current)
    assert refreshed.spec.clusters == current.spec.clusters
    assert refreshed.labels()["other"] == "kept"
    assert refreshed.metadata.finalizers == ["someone/else", constants.BINDING_CONTROLLER_FINALIZER]
    assert not rules.binding_differs(current, refreshed)
    scaled = rules.desired_binding(newer, policy, rules.Workload(9), current)
    assert rules.binding_differs(current, scaled) and scaled.spec.resource.resource_version == "99"


def test_a_cluster_scoped_template_gets_a_cluster_resource_binding() -> None:
    role = ClusterRole.from_dict({"metadata": {"name": "system:reader", "uid": "uid-role"}, "rules": []})
    policy = cpp("roles", selector={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"})
    binding = rules.desired_binding(role, policy, rules.Workload(), None)
    assert binding.kind == "ClusterResourceBinding" and binding.name == "system.reader-clusterrole"
    assert binding.labels()[constants.CPP_PERMANENT_ID_LABEL] == rules.policy_id(policy)
    assert binding.metadata.finalizers == [constants.CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER]
    assert constants.CRB_PERMANENT_ID_LABEL in binding.labels()


@pytest.mark.parametrize(("api_version", "kind", "name", "same"), [
    pytest.param("apps/v1", "Deployment", "nginx", True, id="the same template"),
    pytest.param("apps/v1beta1", "Deployment", "nginx", True, id="another version of the same kind"),
    pytest.param("example.io/v1", "Deployment", "nginx", False, id="a kind of another group"),
    pytest.param("apps/v1", "Deployment", "other", False, id="another name"),
])
def test_stands_for(api_version: str, kind: str, name: str, same: bool) -> None:
    binding = rules.desired_binding(DEPLOY, pp("a"), rules.Workload(), None)
    assert rules.stands_for(binding, api_version, kind, name) is same


# --------------------------------------------------------------------------- Lazy activation


def _template(**changes: Any) -> Unstructured:
    data: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, "generation": 1,
                     "resourceVersion": "1"},
        "spec": {"replicas": 1}}
    for path, value in changes.items():
        node = data
        *parents, leaf = path.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return Unstructured.for_kind("apps/v1", "Deployment").from_dict(data)


@pytest.mark.parametrize(("changes", "by_karmada"), [
    ({"status": {"readyReplicas": 1}}, True),
    ({"metadata__resourceVersion": "9", "metadata__generation": 2}, True),
    ({"metadata__labels": {"app": "web", "propagationpolicy.karmada.io/permanent-id": "x"}}, True),
    ({"metadata__annotations": {"propagationpolicy.karmada.io/name": "p"}}, True),
    ({"metadata__labels": {"app": "api"}}, False),
    ({"metadata__labels": {"app": "web", "namespace.karmada.io/skip-auto-propagation": "true"}}, False),
    ({"metadata__annotations": {"team": "web"}}, False),
    ({"spec__replicas": 2}, False),
], ids=["status", "system metadata", "claim label", "claim annotation", "a user label",
        "the user label with Karmada's prefix", "a user annotation", "the spec"])
def test_a_change_is_karmadas_own_when_only_its_fields_differ(changes: dict[str, Any],
                                                             by_karmada: bool) -> None:
    assert rules.changed_by_karmada(_template(), _template(**changes)) is by_karmada


def test_only_activation_preference_lazy_is_lazy() -> None:
    policy = PropagationPolicy.from_dict({
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}})
    assert not rules.is_lazy(policy) and not rules.is_lazy(None)
    policy.spec.activation_preference = "Lazy"
    assert rules.is_lazy(policy)
