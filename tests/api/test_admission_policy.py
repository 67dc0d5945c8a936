"""Admission of propagation, override and cluster taint policies (one row per rule)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import SCHEME, admission
from fleetkeeper.api.meta import Resource

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def pp(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                   "name": "nginx"}]}
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "nginx-propagation", "namespace": "default"}, "spec": {**base, **spec}}


def cpp(**spec: Any) -> dict[str, Any]:
    doc = pp(**spec)
    doc["kind"] = "ClusterPropagationPolicy"
    doc["metadata"] = {"name": "nginx-propagation"}
    return doc


def app_failover(**fields: Any) -> dict[str, Any]:
    return {"application": {"decisionConditions": {}, **fields}}


def admit(doc: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    new = SCHEME.decode(doc)
    old_obj: Resource | None = SCHEME.decode(old) if old else None
    result = admission.admit(new, old_obj, operation="UPDATE" if old else "CREATE", now=NOW)
    return result.to_dict()


# --- defaulting ----------------------------------------------------------------------------------


def test_resource_selector_namespace_defaults_to_the_policy_namespace() -> None:
    assert admit(pp())["spec"]["resourceSelectors"][0]["namespace"] == "default"


def test_cluster_policy_selectors_keep_no_namespace() -> None:
    assert "namespace" not in admit(cpp())["spec"]["resourceSelectors"][0]


def test_selecting_a_service_import_forces_propagate_deps() -> None:
    doc = pp(resourceSelectors=[{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport"}])
    assert admit(doc)["spec"]["propagateDeps"] is True


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param({}, {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 0},
                 id="an empty spread constraint spreads by cluster with at least one group"),
    pytest.param({"spreadByLabel": "team"}, {"spreadByLabel": "team", "minGroups": 1, "maxGroups": 0},
                 id="a label spread keeps its label and gets minGroups 1"),
    pytest.param({"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
                 {"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
                 id="explicit values are kept and maxGroups gets no default"),
])
def test_spread_constraint_defaults(given: dict[str, Any], expected: dict[str, Any]) -> None:
    needs_cluster = given.get("spreadByField", "cluster") != "cluster"
    constraints = [given, {"spreadByField": "cluster"}] if needs_cluster else [given]
    out = admit(pp(placement={"spreadConstraints": constraints}))
    assert out["spec"]["placement"]["spreadConstraints"][0] == expected


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param({}, {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
                 id="an empty replicaScheduling becomes Divided and Weighted"),
    pytest.param({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
                 {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
                 id="an explicit division preference is kept"),
    pytest.param({"replicaSchedulingType": "Duplicated"}, {"replicaSchedulingType": "Duplicated"},
                 id="Duplicated gets no division preference"),
])
def test_replica_division_preference_defaults(given: dict[str, Any], expected: dict[str, Any]) -> None:
    out = admit(pp(placement={"replicaScheduling": given}))
    assert out["spec"]["placement"]["replicaScheduling"] == expected


def test_absent_replica_scheduling_stays_absent() -> None:
    assert "replicaScheduling" not in admit(pp())["spec"]["placement"]


@pytest.mark.parametrize(("given", "grace"), [
    pytest.param({}, 600, id="Gracefully by default gets a 600 second grace period"),
    pytest.param({"purgeMode": "Gracefully", "gracePeriodSeconds": 30}, 30,
                 id="an explicit grace period is kept"),
    pytest.param({"purgeMode": "Never"}, None, id="Never gets no grace period"),
    pytest.param({"purgeMode": "Directly"}, None, id="Directly gets no grace period"),
])
def test_grace_period_default(given: dict[str, Any], grace: int | None) -> None:
    out = admit(pp(propagateDeps=True, failover=app_failover(**given)))
    assert out["spec"]["failover"]["application"].get("gracePeriodSeconds") == grace


def test_admission_does_not_modify_its_input() -> None:
    obj = SCHEME.decode(pp())
    before = copy.deepcopy(obj.to_dict())
    admission.admit(obj, None, operation="CREATE", now=NOW)
    assert obj.to_dict() == before


def test_a_valid_policy_is_admitted() -> None:
    out = admit(pp(propagateDeps=True, failover=app_failover(purgeMode="Graciously")))
    assert out["spec"]["failover"]["application"]["purgeMode"] == "Gracefully"


# --- validation ----------------------------------------------------------------------------------

SPREAD = "spec.placement.spreadConstraints"
APP = "spec.failover.application"

INVALID_PROPAGATION = [
    pytest.param(pp(failover=app_failover()), "spec.propagateDeps",
                 id="application failover requires propagateDeps"),
    pytest.param(cpp(failover=app_failover()), "spec.propagateDeps",
                 id="application failover requires propagateDeps on a cluster policy too"),
    pytest.param(pp(propagateDeps=True,
                    failover={"application": {"decisionConditions": {"tolerationSeconds": -1}}}),
                 f"{APP}.decisionConditions.tolerationSeconds", id="tolerationSeconds must not be negative"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(purgeMode="Never", gracePeriodSeconds=10)),
                 f"{APP}.gracePeriodSeconds", id="gracePeriodSeconds only goes with Gracefully"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(gracePeriodSeconds=0)),
                 f"{APP}.gracePeriodSeconds", id="gracePeriodSeconds must be positive"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(blockPredecessorSeconds=-5)),
                 f"{APP}.blockPredecessorSeconds", id="blockPredecessorSeconds must not be negative"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(preConditions={"delaySeconds": -1})),
                 f"{APP}.preConditions.delaySeconds", id="preConditions delaySeconds must not be negative"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(statePreservation={"rules": [
        {"aliasLabelName": "not a label!", "jsonPath": "{ .jobId }"}]})),
        f"{APP}.statePreservation.rules[0].aliasLabelName", id="aliasLabelName must be a label name"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(statePreservation={"rules": [
        {"aliasLabelName": "", "jsonPath": "{ .jobId }"}]})),
        f"{APP}.statePreservation.rules[0].aliasLabelName", id="aliasLabelName is required"),
    pytest.param(pp(propagateDeps=True, failover=app_failover(statePreservation={"rules": [
        {"aliasLabelName": "example.io/job-id", "jsonPath": " "}]})),
        f"{APP}.statePreservation.rules[0].jsonPath", id="jsonPath is required"),
    pytest.param(pp(failover={"cluster": {"statePreservation": {"rules": [
        {"aliasLabelName": "-bad-", "jsonPath": "{ .x }"}]}}}),
        "spec.failover.cluster.statePreservation.rules[0].aliasLabelName",
        id="cluster failover state preservation is validated too"),
    pytest.param(pp(suspension={"dispatching": True, "dispatchingOnClusters": {"clusterNames": ["m1"]}}),
                 "spec.suspension", id="dispatching and dispatchingOnClusters cannot co-exist"),
    pytest.param(pp(resourceSelectors=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                        "namespace": "other"}]),
                 "spec.resourceSelectors[0].namespace",
                 id="a selector namespace must be the policy namespace"),
    pytest.param(pp(preemption="Always", resourceSelectors=[{"apiVersion": "apps/v1", "kind": "Deployment"}]),
                 "spec.resourceSelectors[0].name", id="preemption Always needs named selectors"),
    pytest.param(pp(resourceSelectors=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                        "labelSelector": {"matchExpressions": [
                                            {"key": "a", "operator": "In"}]}}]),
                 "spec.resourceSelectors[0].labelSelector", id="a selector's label selector must be valid"),
    pytest.param(pp(resourceSelectors=[{"apiVersion": "", "kind": "Deployment"}]),
                 "spec.resourceSelectors[0].apiVersion", id="a selector needs an apiVersion"),
    pytest.param(pp(placement={"clusterAffinity": {}, "clusterAffinities": [{"affinityName": "a"}]}),
                 "spec.placement.clusterAffinities",
                 id="clusterAffinity and clusterAffinities are exclusive"),
    pytest.param(pp(placement={"clusterAffinity": {"fieldSelector": {"matchExpressions": [
        {"key": "name", "operator": "In", "values": ["x"]}]}}}),
        "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key",
        id="field selector keys are provider region or zone"),
    pytest.param(pp(placement={"clusterAffinity": {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "Exists"}]}}}),
        "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator",
        id="field selector operators are In or NotIn"),
    pytest.param(pp(placement={"clusterAffinities": [{"affinityName": "a"}, {"affinityName": "a"}]}),
                 "spec.placement.clusterAffinities[1].affinityName", id="affinity names are unique"),
    pytest.param(pp(placement={"clusterAffinities": [{"affinityName": "bad name"}]}),
                 "spec.placement.clusterAffinities[0].affinityName", id="affinity names are qualified names"),
    pytest.param(pp(placement={"clusterAffinities": [
        {"affinityName": "a", "clusterNames": ["m1"], "overflowAffinities": [{"affinityName": "b"}]}]}),
        "spec.placement.clusterAffinities[0].overflowAffinities",
        id="overflow affinities need dynamic replica division"),
    pytest.param(pp(placement={"replicaScheduling": {"replicaDivisionPreference": "Aggregated"},
                               "clusterAffinities": [{"affinityName": "a", "overflowAffinities": [
                                   {"affinityName": "b"}]}]}),
                 "spec.placement.clusterAffinities[0].overflowAffinities",
                 id="overflow affinities need a non-empty inline affinity"),
    pytest.param(pp(placement={"replicaScheduling": {"replicaDivisionPreference": "Aggregated"},
                               "clusterAffinities": [{"affinityName": "a", "clusterNames": ["m1"],
                                                      "overflowAffinities": [{"affinityName": "a"}]}]}),
                 "spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName",
                 id="an overflow affinity name differs from its term"),
    pytest.param(pp(placement={"spreadConstraints": [{"spreadByField": "cluster", "spreadByLabel": "x"}]}),
                 f"{SPREAD}[0]", id="spreadByField and spreadByLabel cannot co-exist"),
    pytest.param(pp(placement={"spreadConstraints": [{"spreadByField": "cluster", "minGroups": -1}]}),
                 f"{SPREAD}[0].minGroups", id="minGroups must not be negative"),
    pytest.param(pp(placement={"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": -1}]}),
                 f"{SPREAD}[0].maxGroups", id="maxGroups must not be negative"),
    pytest.param(pp(placement={"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 3,
                                                      "maxGroups": 2}]}),
                 f"{SPREAD}[0].maxGroups", id="maxGroups must not be below minGroups"),
    pytest.param(pp(placement={"spreadConstraints": [{"spreadByField": "cluster"},
                                                     {"spreadByField": "cluster"}]}),
                 f"{SPREAD}[1].spreadByField", id="each spreadByField appears once"),
    pytest.param(pp(placement={"spreadConstraints": [{"spreadByField": "region"}]}),
                 SPREAD, id="spreading by a field needs a cluster constraint"),
    pytest.param(pp(placement={"clusterTolerations": [{"key": "k", "operator": "Gt", "value": "1"}]}),
                 "spec.placement.clusterTolerations[0].operator", id="toleration operator Gt is rejected"),
    pytest.param(pp(placement={"clusterTolerations": [{"key": "k", "operator": "Lt", "value": "1"}]}),
                 "spec.placement.clusterTolerations[0].operator", id="toleration operator Lt is rejected"),
    pytest.param(pp(placement={"clusterTolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}),
                 "spec.placement.clusterTolerations[0].value", id="an Exists toleration has no value"),
    pytest.param(pp(placement={"clusterTolerations": [{"key": "bad key!", "operator": "Exists"}]}),
                 "spec.placement.clusterTolerations[0].key", id="a toleration key is a qualified name"),
    pytest.param(pp(placement={"workloadAffinity": {"affinity": {"groupByLabelKey": "app"},
                                                    "antiAffinity": {"groupByLabelKey": "app"}}}),
                 "spec.placement.workloadAffinity", id="affinity and anti-affinity keys differ"),
    pytest.param(pp(placement={"replicaScheduling": {"weightPreference": {"staticWeightList": [
        {"targetCluster": {"fieldSelector": {"matchExpressions": [{"key": "env", "operator": "In",
                                                                   "values": ["x"]}]}}, "weight": 1}]}}}),
        "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster"
        ".fieldSelector.matchExpressions[0].key", id="static weight targets are validated as affinities"),
]


@pytest.mark.parametrize(("doc", "path"), INVALID_PROPAGATION)
def test_invalid_propagation_policy_is_rejected_naming_the_field(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    assert path in [c.field for c in caught.value.causes], caught.value.message


def test_every_problem_is_reported_at_once() -> None:
    doc = pp(failover=app_failover(gracePeriodSeconds=-1),
             suspension={"dispatching": True, "dispatchingOnClusters": {"clusterNames": ["m1"]}})
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    fields = [c.field for c in caught.value.causes]
    assert {"spec.propagateDeps", f"{APP}.gracePeriodSeconds", "spec.suspension"} <= set(fields)
    assert caught.value.kind == "PropagationPolicy" and caught.value.name == "nginx-propagation"
    assert caught.value.to_status()["details"]["group"] == "policy.karmada.io"


def test_scheduler_name_is_immutable() -> None:
    old = pp(schedulerName="default-scheduler")
    with pytest.raises(errors.Invalid) as caught:
        admit(pp(schedulerName="other"), old)
    assert [c.field for c in caught.value.causes] == ["spec.schedulerName"]
    assert admit(pp(schedulerName="default-scheduler"), old)["spec"]["schedulerName"] == "default-scheduler"


# --- override policies ---------------------------------------------------------------------------


def op(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
            "metadata": {"name": "o", "namespace": "default"}, "spec": spec}


RULE = {"targetCluster": {"clusterNames": ["m1"]},
        "overriders": {"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 1}]}}


@pytest.mark.parametrize(("doc", "path"), [
    pytest.param(op(targetCluster={}, overrideRules=[RULE]), "spec.targetCluster",
                 id="overrideRules and the deprecated targetCluster cannot co-exist"),
    pytest.param(op(overriders=RULE["overriders"], overrideRules=[RULE]), "spec.overriders",
                 id="overrideRules and the deprecated overriders cannot co-exist"),
    pytest.param(op(overrideRules=[{"overriders": {"fieldOverrider": [{"fieldPath": "/data"}]}}]),
                 "spec.overrideRules[0].overriders.fieldOverrider[0]",
                 id="a field overrider needs JSON or YAML"),
    pytest.param(op(overrideRules=[{"overriders": {"fieldOverrider": [{"fieldPath": "data", "json": [
        {"subPath": "/a", "operator": "add", "value": 1}]}]}}]),
        "spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath", id="a field path is a JSON pointer"),
    pytest.param(op(overrideRules=[{"overriders": {"fieldOverrider": [{"fieldPath": "/data", "json": [
        {"subPath": "/a", "operator": "remove", "value": 1}]}]}}]),
        "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value", id="remove takes no value"),
    pytest.param(op(overrideRules=[{"overriders": {"labelsOverrider": [
        {"operator": "add", "value": {"bad key!": "v"}}]}}]),
        "spec.overrideRules[0].overriders.labelsOverrider[0].value", id="override labels are valid labels"),
    pytest.param(op(resourceSelectors=[{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "other"}]),
                 "spec.resourceSelectors[0].namespace",
                 id="an override selector stays in the policy namespace"),
])
def test_invalid_override_policy_is_rejected_naming_the_field(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    assert path in [c.field for c in caught.value.causes], caught.value.message


def test_valid_override_policy_gets_selector_namespaces() -> None:
    out = admit(op(resourceSelectors=[{"apiVersion": "v1", "kind": "ConfigMap"}], overrideRules=[RULE]))
    assert out["spec"]["resourceSelectors"][0]["namespace"] == "default"


# --- cluster taint policies ------------------------------------------------------------------------


def ctp(**spec: Any) -> dict[str, Any]:
    base = {"taints": [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]}
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterTaintPolicy",
            "metadata": {"name": "t"}, "spec": {**base, **spec}}


@pytest.mark.parametrize(("doc", "path"), [
    pytest.param(ctp(taints=[{"key": "k", "effect": "NoExecute"}, {"key": "k", "effect": "NoExecute",
                                                                    "value": "x"}]),
                 "spec.taints[1]", id="taints are unique by key and effect"),
    pytest.param(ctp(taints=[{"key": "k", "effect": "PreferNoSchedule"}]), "spec.taints[0].effect",
                 id="a policy taint is NoSchedule or NoExecute"),
    pytest.param(ctp(taints=[{"key": "bad key", "effect": "NoSchedule"}]), "spec.taints[0].key",
                 id="a policy taint key is a qualified name"),
    pytest.param(ctp(addOnConditions=[{"conditionType": "Ready", "operator": "Equal",
                                       "statusValues": ["True"]}]),
                 "spec.addOnConditions[0].operator", id="condition operators are In or NotIn"),
    pytest.param(ctp(removeOnConditions=[{"conditionType": "", "operator": "In", "statusValues": ["True"]}]),
                 "spec.removeOnConditions[0].conditionType", id="a condition type is required"),
])
def test_invalid_cluster_taint_policy_is_rejected_naming_the_field(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    assert path in [c.field for c in caught.value.causes], caught.value.message


def test_no_execute_cluster_taint_policy_is_admitted() -> None:
    assert admit(ctp())["spec"]["taints"] == [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]
