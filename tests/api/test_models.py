"""The kinds: scheme facts, wire shape, CRD defaults and decode errors naming the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import SCHEME, cluster, core, policy, work
from fleetkeeper.api.config import OPERATIONS, CustomizationRules
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.remedy import RemedySpec

_KINDS = [
    ("cluster.karmada.io/v1alpha1", "Cluster", "clusters", False, ()),
    ("policy.karmada.io/v1alpha1", "PropagationPolicy", "propagationpolicies", True, ("pp",)),
    ("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy", "clusterpropagationpolicies", False, ("cpp",)),
    ("policy.karmada.io/v1alpha1", "OverridePolicy", "overridepolicies", True, ("op",)),
    ("policy.karmada.io/v1alpha1", "ClusterOverridePolicy", "clusteroverridepolicies", False, ("cop",)),
    ("policy.karmada.io/v1alpha1", "ClusterTaintPolicy", "clustertaintpolicies", False, ()),
    ("work.karmada.io/v1alpha2", "ResourceBinding", "resourcebindings", True, ("rb",)),
    ("work.karmada.io/v1alpha2", "ClusterResourceBinding", "clusterresourcebindings", False, ("crb",)),
    ("work.karmada.io/v1alpha1", "Work", "works", True, ("wk",)),
    ("remedy.karmada.io/v1alpha1", "Remedy", "remedies", False, ()),
    ("networking.karmada.io/v1alpha1", "MultiClusterIngress", "multiclusteringresses", True, ("mci",)),
    ("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", "resourceinterpretercustomizations",
     False, ("ric",)),
    ("coordination.k8s.io/v1", "Lease", "leases", True, ()),
    ("v1", "Namespace", "namespaces", False, ("ns",)),
    ("v1", "Event", "events", True, ("ev",)),
    ("apps/v1", "Deployment", "deployments", True, ("deploy",)),
    ("apps/v1", "StatefulSet", "statefulsets", True, ("sts",)),
    ("apps/v1", "ReplicaSet", "replicasets", True, ("rs",)),
    ("apps/v1", "DaemonSet", "daemonsets", True, ("ds",)),
    ("batch/v1", "Job", "jobs", True, ()),
    ("batch/v1", "CronJob", "cronjobs", True, ("cj",)),
    ("v1", "Pod", "pods", True, ("po",)),
    ("v1", "Service", "services", True, ("svc",)),
    ("v1", "ConfigMap", "configmaps", True, ("cm",)),
    ("v1", "Secret", "secrets", True, ()),
    ("v1", "ServiceAccount", "serviceaccounts", True, ("sa",)),
    ("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",)),
    ("v1", "PersistentVolume", "persistentvolumes", False, ("pv",)),
    ("v1", "Node", "nodes", False, ("no",)),
    ("v1", "Endpoints", "endpoints", True, ("ep",)),
    ("networking.k8s.io/v1", "Ingress", "ingresses", True, ("ing",)),
    ("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True, ("netpol",)),
    ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",)),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",)),
    ("rbac.authorization.k8s.io/v1", "Role", "roles", True, ()),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True, ()),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False, ()),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False, ()),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False,
     ("crd", "crds")),
]


@pytest.mark.parametrize(("api_version", "kind", "plural", "namespaced", "short_names"), [
    pytest.param(*row, id=f"{row[1]} is served as {row[2]}") for row in _KINDS
])
def test_kind_is_served_with_kubernetes_names(api_version: str, kind: str, plural: str, namespaced: bool,
                                               short_names: tuple[str, ...]) -> None:
    info = SCHEME.lookup(api_version, kind)
    assert info is not None
    assert (info.plural, info.namespaced, info.short_names) == (plural, namespaced, short_names)
    group, _, version = api_version.rpartition("/")
    assert SCHEME.by_plural(group, version, plural) is info


def test_event_has_no_status_subresource_and_cluster_has_one() -> None:
    assert core.Event.HAS_STATUS is False
    assert cluster.Cluster.HAS_STATUS is True


PP: dict[str, Any] = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
                      "metadata": {"name": "p", "namespace": "default"},
                      "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}}


def with_spec(**spec: Any) -> dict[str, Any]:
    return {**PP, "spec": {**PP["spec"], **spec}}


@pytest.mark.parametrize(("doc", "path", "reason"), [
    pytest.param(with_spec(priority="high"), "spec.priority", "FieldValueInvalid",
                 id="a wrong type names the field"),
    pytest.param(with_spec(preemption="Sometimes"), "spec.preemption", "FieldValueNotSupported",
                 id="an unknown enum value names the field"),
    pytest.param(with_spec(failover={"application": {"decisionConditions": {}, "purgeMode": "Later"}}),
                 "spec.failover.application.purgeMode", "FieldValueNotSupported",
                 id="an unknown purge mode names the nested field"),
    pytest.param(with_spec(failover={"cluster": {"purgeMode": "Never"}}), "spec.failover.cluster.purgeMode",
                 "FieldValueNotSupported", id="Never is not a purge mode for cluster failover"),
    pytest.param(with_spec(failover={"application": {}}), "spec.failover.application.decisionConditions",
                 "FieldValueRequired", id="a missing required field names it"),
    pytest.param({**PP, "spec": {}}, "spec.resourceSelectors", "FieldValueRequired",
                 id="resourceSelectors is required"),
    pytest.param(with_spec(resourceSelectors=[]), "spec.resourceSelectors", "FieldValueInvalid",
                 id="resourceSelectors needs at least one item"),
    pytest.param(with_spec(placement={"clusterAfinity": {}}), "spec.placement.clusterAfinity",
                 "FieldValueNotSupported", id="a misspelt field is rejected, not dropped"),
    pytest.param(with_spec(placement={"replicaScheduling": {"weightPreference": {"staticWeightList": [
        {"targetCluster": {}, "weight": 0}]}}}),
        "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight", "FieldValueInvalid",
        id="a static weight below 1 is rejected"),
    pytest.param({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m"},
                  "spec": {"syncMode": "Both"}}, "spec.syncMode", "FieldValueNotSupported",
                 id="syncMode is Push or Pull"),
    pytest.param({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m"},
                  "spec": {"syncMode": "Push", "taints": [{"key": "k", "effect": "Sometimes"}]}},
                 "spec.taints[0].effect", "FieldValueNotSupported", id="a taint effect must be a known one"),
    pytest.param({"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                  "metadata": {"name": "b", "namespace": "d"},
                  "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"},
                           "gracefulEvictionTasks": [
                               {"fromCluster": "m", "reason": "1bad", "producer": "x"}]}},
                 "spec.gracefulEvictionTasks[0].reason", "FieldValueInvalid",
                 id="an eviction reason must match its pattern"),
    pytest.param({"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                  "metadata": {"name": "b", "namespace": "d"}, "spec": {}},
                 "spec.resource", "FieldValueRequired", id="a binding needs its resource"),
    pytest.param({"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                  "metadata": {"name": "b", "namespace": "d"},
                  "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"}},
                  "status": {"aggregatedStatus": [{"clusterName": "m", "health": "Sick"}]}},
                 "status.aggregatedStatus[0].health", "FieldValueNotSupported",
                 id="health is Healthy Unhealthy or Unknown"),
])
def test_invalid_object_is_rejected_naming_the_field(doc: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(errors.Invalid) as caught:
        SCHEME.decode(doc)
    causes = {c.field: c.reason for c in caught.value.causes}
    assert causes.get(path) == reason, causes
    assert path in caught.value.message


def test_a_kind_must_match_its_model() -> None:
    with pytest.raises(errors.Invalid, match="kind must be"):
        policy.PropagationPolicy.from_dict({**PP, "kind": "ClusterPropagationPolicy"})


@pytest.mark.parametrize(("given", "stored"), [
    pytest.param("Immediately", "Directly", id="the seed spelling Immediately is stored as Directly"),
    pytest.param("Graciously", "Gracefully", id="the seed spelling Graciously is stored as Gracefully"),
    pytest.param("Never", "Never", id="Never stays Never"),
])
def test_legacy_purge_modes_are_normalised(given: str, stored: str) -> None:
    pp = SCHEME.decode(with_spec(failover={"application": {"decisionConditions": {}, "purgeMode": given}}))
    assert isinstance(pp, policy.PropagationPolicy)
    assert pp.to_dict()["spec"]["failover"]["application"]["purgeMode"] == stored


def test_crd_defaults_are_filled_on_decode() -> None:
    pp = SCHEME.decode(with_spec(failover={"application": {"decisionConditions": {}}, "cluster": {}},
                                 placement={"replicaScheduling": {}}))
    spec = pp.to_dict()["spec"]
    assert spec["failover"]["application"] == {
        "decisionConditions": {"tolerationSeconds": 300}, "purgeMode": "Gracefully"}
    assert pp.spec.failover.application.block_seconds() == 600, "fleetkeeper's additive field: not written"
    assert spec["failover"]["cluster"] == {"purgeMode": "Gracefully"}
    assert spec["placement"]["replicaScheduling"] == {"replicaSchedulingType": "Divided"}
    assert (spec["preemption"], spec["conflictResolution"], spec["schedulerName"], spec["priority"]) == (
        "Never", "Abort", "default-scheduler", 0)


def test_placement_without_replica_scheduling_is_duplicated() -> None:
    assert policy.Placement().replica_scheduling_type() == "Duplicated"
    assert policy.Placement.from_dict({"replicaScheduling": {}}).replica_scheduling_type() == "Divided"


def test_quantities_given_as_numbers_are_stored_as_strings() -> None:
    summary = cluster.ResourceSummary.from_dict({"allocatable": {"cpu": 4, "memory": "16Gi", "x": 0.5}})
    assert summary.to_dict() == {"allocatable": {"cpu": "4", "memory": "16Gi", "x": "0.5"}}


def test_acronym_fields_keep_karmada_spelling() -> None:
    spec = cluster.ClusterSpec.from_dict(
        {"syncMode": "Push", "proxyURL": "http://p", "insecureSkipTLSVerification": True})
    assert spec.proxy_url == "http://p" and spec.insecure_skip_tls_verification is True
    assert {"proxyURL", "insecureSkipTLSVerification"} <= set(spec.to_dict())
    status = work.ResourceBindingStatus(scheduler_observed_affinity_name="g1")
    assert status.to_dict()["schedulerObservingAffinityName"] == "g1"


def test_binding_round_trips_raw_status_and_additive_history() -> None:
    rb = work.ResourceBinding.from_dict({
        "metadata": {"name": "nginx-deployment", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
                 "evictionHistory": [{"clusterName": "m1", "evictedAt": "2026-01-01T10:00:00Z",
                                      "reason": "ApplicationFailure", "producer": "x"}]},
        "status": {"aggregatedStatus": [{"clusterName": "m1", "status": {"readyReplicas": 1, "x": None}}]},
    })
    assert rb.spec.eviction_history is not None
    assert rb.spec.eviction_history[0].evicted_at == datetime(2026, 1, 1, 10, tzinfo=UTC)
    dumped = rb.to_dict()
    assert dumped["status"]["aggregatedStatus"][0]["status"] == {"readyReplicas": 1, "x": None}
    assert dumped["spec"]["evictionHistory"][0]["evictedAt"] == "2026-01-01T10:00:00Z"


def test_nil_and_empty_lists_stay_distinct() -> None:
    assert RemedySpec.from_dict({}).to_dict() == {}
    assert RemedySpec.from_dict({"decisionMatches": [], "clusterAffinity": {}}).to_dict() == {
        "decisionMatches": [], "clusterAffinity": {}}


def test_unknown_kinds_decode_as_unstructured_and_keep_every_field() -> None:
    doc = {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "d"},
           "spec": {"size": 3, "nothing": None}}
    obj = SCHEME.decode(doc)
    assert isinstance(obj, Unstructured)
    assert obj.to_dict()["spec"] == {"size": 3, "nothing": None}


def test_lease_times_keep_microseconds() -> None:
    lease = SCHEME.decode({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                           "metadata": {"name": "member1", "namespace": "karmada-cluster"},
                           "spec": {"holderIdentity": "member1", "leaseDurationSeconds": 40,
                                    "renewTime": "2026-01-01T10:00:00.123456Z"}})
    assert lease.to_dict()["spec"]["renewTime"] == "2026-01-01T10:00:00.123456Z"


def test_ric_script_lookup_by_wire_name() -> None:
    script = "function InterpretHealth() end"
    rules = CustomizationRules.from_dict({"healthInterpretation": {"luaScript": script}})
    assert rules.script("healthInterpretation").startswith("function")
    assert rules.script("retention") == ""
    assert set(OPERATIONS) == set(rules.to_dict()) | {
        "retention", "replicaResource", "componentResource", "replicaRevision", "statusReflection",
        "statusAggregation", "dependencyInterpretation"}


def test_deep_copy_is_independent_and_equal() -> None:
    rb = work.ResourceBinding.from_dict({
        "metadata": {"name": "b", "namespace": "d"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"}, "clusters": [{"name": "m1"}]},
        "status": {"aggregatedStatus": [{"clusterName": "m1", "status": {"nested": {"n": 1}}}]},
    })
    copy = rb.deep_copy()
    assert copy == rb
    assert copy.spec.clusters is not None and copy.status.aggregated_status is not None
    copy.spec.clusters[0].replicas = 3
    copy.status.aggregated_status[0].status = {"nested": {"n": 2}}
    assert rb.spec.clusters is not None and rb.spec.clusters[0].replicas == 0
    assert rb.status.aggregated_status is not None
    assert rb.status.aggregated_status[0].status == {"nested": {"n": 1}}


def test_deep_copy_of_an_object_broken_after_validation_still_copies() -> None:
    rb = work.ResourceBinding.from_dict({
        "metadata": {"name": "b", "namespace": "d"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"}}})
    rb.spec.graceful_eviction_tasks = [work.GracefulEvictionTask(from_cluster="m1", reason="R", producer="p")]
    rb.spec.graceful_eviction_tasks[0].reason = "not a valid reason!"
    assert rb.deep_copy() == rb


def test_unstructured_deep_copy_does_not_share_nested_values() -> None:
    obj = SCHEME.decode({"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "n", "namespace": "d"},
                         "spec": {"template": {"containers": [{"name": "c"}]}}})
    assert isinstance(obj, Unstructured)
    copy = obj.deep_copy()
    assert isinstance(copy, Unstructured)
    copy.field("spec")["template"]["containers"][0]["name"] = "changed"
    assert obj.field("spec")["template"]["containers"][0]["name"] == "c"


def test_equality_is_by_fields_within_a_class_and_keeps_extras_in_unstructured_kinds() -> None:
    doc = {"metadata": {"name": "nginx", "namespace": "default"},
           "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
                    "replicas": 3, "clusters": [{"name": "member1", "replicas": 3}]}}
    a, b = work.ResourceBinding.from_dict(doc), work.ResourceBinding.from_dict(doc)
    assert a == b and a.spec.placement == b.spec.placement and a is not b
    assert a.spec != b.spec.model_copy(update={"replicas": 2})
    assert a.spec.clusters != b.spec.model_copy(update={"clusters": []}).clusters
    cluster_ref = work.ObjectReference(api_version="apps/v1", kind="Deployment", name="nginx")
    assert a.spec.resource == cluster_ref
    assert a.spec.resource != work.ObjectReference(api_version="apps/v1", kind="Deployment", name="other")
    assert (a == "nginx") is False and a != 3
    kept = Unstructured.for_kind("example.io/v1", "Widget")
    one = kept.from_dict({"metadata": {"name": "w"}, "spec": {"size": 1}})
    assert one == kept.from_dict({"metadata": {"name": "w"}, "spec": {"size": 1}})
    assert one != kept.from_dict({"metadata": {"name": "w"}, "spec": {"size": 2}}), "extra fields count"


def test_decoding_errors_read_as_kubernetes_words_them() -> None:
    body = {"metadata": {"name": "x", "namespace": "d"},
            "spec": {"conflictResolution": "Nope", "priority": "high", "extra": 1,
                     "resourceSelectors": [{"kind": "ConfigMap"}]}}
    with pytest.raises(errors.Invalid) as refused:
        policy.PropagationPolicy.from_dict(body)
    found = {c.field: (c.message, c.reason) for c in refused.value.causes}
    assert found == {
        "spec.priority": ('Invalid value: "high": must be an integer', "FieldValueInvalid"),
        "spec.conflictResolution": ('Unsupported value: "Nope": supported values: "Abort", "Overwrite"',
                                    "FieldValueNotSupported"),
        "spec.extra": ("unknown field", "FieldValueNotSupported"),
        "spec.resourceSelectors[0].apiVersion": ("Required value", "FieldValueRequired"),
    }
