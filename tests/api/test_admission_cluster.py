"""Admission of Cluster objects and the metadata rules every kind shares."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import SCHEME, admission
from fleetkeeper.api.admission_cluster import default_resource_models, standardize_resource_models
from fleetkeeper.api.cluster import ResourceModel

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
EARLIER = "2025-12-31T00:00:00Z"


def cluster(name: str = "member1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push", **spec}}


def admit(doc: dict[str, Any], *, operation: str = "CREATE") -> dict[str, Any]:
    return admission.admit(SCHEME.decode(doc), None, operation=operation, now=NOW).to_dict()  # type: ignore[arg-type]


def rejected_fields(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    return [c.field for c in caught.value.causes]


# --- defaulting ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("taint", "time_added"), [
    pytest.param({"key": "k", "effect": "NoExecute"}, "2026-01-01T12:00:00Z",
                 id="a NoExecute taint without timeAdded is stamped now"),
    pytest.param({"key": "k", "effect": "NoExecute", "timeAdded": EARLIER}, EARLIER,
                 id="a NoExecute taint keeps its timeAdded"),
    pytest.param({"key": "k", "effect": "NoSchedule"}, None, id="a NoSchedule taint gets no timeAdded"),
])
def test_taint_time_added_default(taint: dict[str, Any], time_added: str | None) -> None:
    assert admit(cluster(taints=[taint]))["spec"]["taints"][0].get("timeAdded") == time_added


@pytest.mark.parametrize(("spec", "zone", "zones"), [
    pytest.param({"zone": "z1"}, None, ["z1"], id="a lone zone moves into zones"),
    pytest.param({"zones": ["z1", "z2"]}, None, ["z1", "z2"], id="zones stay as given"),
    pytest.param({}, None, None, id="no zone stays no zone"),
])
def test_zone_moves_into_zones(spec: dict[str, Any], zone: str | None, zones: list[str] | None) -> None:
    out = admit(cluster(**spec))["spec"]
    assert (out.get("zone"), out.get("zones")) == (zone, zones)


def test_create_installs_the_default_resource_models() -> None:
    models = admit(cluster())["spec"]["resourceModels"]
    assert [m["grade"] for m in models] == list(range(9))
    assert models[0]["ranges"] == [{"name": "cpu", "min": "0", "max": "1"},
                                   {"name": "memory", "min": "0", "max": "4Gi"}]
    assert models[-1]["ranges"][1] == {"name": "memory", "min": "1Ti", "max": "9223372036854775807"}


def test_update_without_resource_models_keeps_none() -> None:
    assert "resourceModels" not in admit(cluster(), operation="UPDATE")["spec"]


def test_given_resource_models_are_sorted_and_bounded() -> None:
    given = [{"grade": 1, "ranges": [{"name": "cpu", "min": "2", "max": "8"}]},
             {"grade": 0, "ranges": [{"name": "cpu", "min": "1", "max": "2"}]}]
    assert admit(cluster(resourceModels=given))["spec"]["resourceModels"] == [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "2"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "2", "max": "9223372036854775807"}]},
    ]


def test_default_models_are_already_standard() -> None:
    models = default_resource_models()
    assert standardize_resource_models(models) == models


def test_a_namespace_on_a_cluster_scoped_object_is_dropped() -> None:
    doc = cluster()
    doc["metadata"]["namespace"] = "default"
    assert "namespace" not in admit(doc)["metadata"]


# --- validation ----------------------------------------------------------------------------------

TOO_LONG = "m" * 49


@pytest.mark.parametrize(("doc", "path"), [
    pytest.param(cluster(TOO_LONG), "metadata.name", id="a cluster name has at most 48 characters"),
    pytest.param(cluster("Member_1"), "metadata.name", id="a cluster name is an RFC 1123 label"),
    pytest.param(cluster("a.b"), "metadata.name", id="a cluster name has no dots"),
    pytest.param(cluster(""), "metadata.name", id="a cluster needs a name"),
    pytest.param(cluster(apiEndpoint="/just/a/path"), "spec.apiEndpoint", id="an api endpoint needs a host"),
    pytest.param(cluster(apiEndpoint="https://u:p@h:6443"), "spec.apiEndpoint",
                 id="an api endpoint carries no user information"),
    pytest.param(cluster(apiEndpoint="https://h:6443?x=1"), "spec.apiEndpoint",
                 id="an api endpoint carries no query"),
    pytest.param(cluster(apiEndpoint="https://h:6443#frag"), "spec.apiEndpoint",
                 id="an api endpoint carries no fragment"),
    pytest.param(cluster(apiEndpoint="kube://ctx#other"), "spec.apiEndpoint",
                 id="a kubeconfig context named in a fragment goes with a file path"),
    pytest.param(cluster(apiEndpoint="kube:///etc/member1.kubeconfig?x=1#ctx"), "spec.apiEndpoint",
                 id="a kubeconfig endpoint carries no query"),
    pytest.param(cluster(secretRef={"namespace": "", "name": "s"}), "spec.secretRef.namespace",
                 id="a secretRef needs a namespace"),
    pytest.param(cluster(impersonatorSecretRef={"namespace": "n", "name": ""}),
                 "spec.impersonatorSecretRef.name", id="an impersonatorSecretRef needs a name"),
    pytest.param(cluster(proxyURL="ftp://proxy"), "spec.proxyURL", id="a proxy is http https or socks5"),
    pytest.param(cluster(provider="a b"), "spec.provider", id="the provider is a label value"),
    pytest.param(cluster(region="-eu"), "spec.region", id="the region is a label value"),
    pytest.param(cluster(zones=["ok", "not ok"]), "spec.zones[1]", id="each zone is a label value"),
    pytest.param(cluster(zone="z1", zones=["z2"]), "spec.zone", id="zone and zones cannot co-exist"),
    pytest.param(cluster(taints=[{"key": "k", "effect": "PreferNoSchedule"}]), "spec.taints[0].effect",
                 id="a cluster taint is NoSchedule or NoExecute"),
    pytest.param(cluster(taints=[{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule",
                                                                      "value": "v"}]),
                 "spec.taints[1]", id="cluster taints are unique by key and effect"),
    pytest.param(cluster(taints=[{"key": "/k", "effect": "NoSchedule"}]), "spec.taints[0].key",
                 id="a taint key is a qualified name"),
    pytest.param(cluster(taints=[{"key": "k", "value": "a b", "effect": "NoSchedule"}]),
                 "spec.taints[0].value",
                 id="a taint value is a label value"),
    pytest.param(cluster(resourceModels=[{"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "x"}]}]),
                 "spec.resourceModels[0].ranges[0].max", id="resource model bounds are quantities"),
    pytest.param(cluster(resourceModels=[{"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
                                         {"grade": 0, "ranges": [{"name": "cpu", "min": "1", "max": "2"}]}]),
                 "spec.resourceModels", id="resource model grades are unique"),
    pytest.param(cluster(resourceModels=[
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "2", "max": "3"}]}]),
        "spec.resourceModels", id="resource model intervals are contiguous"),
    pytest.param(cluster(resourceModels=[
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "memory", "min": "1", "max": "3"}]}]),
        "spec.resourceModels", id="resource model grades list the same resources"),
    pytest.param(cluster(resourceModels=[
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "1"}, {"name": "memory", "min": "0",
                                                                            "max": "1"}]}]),
        "spec.resourceModels", id="resource model grades have the same number of resources"),
    pytest.param(cluster(resourceModels=[
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "4"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "4", "max": "9223372036854775807"}]},
        {"grade": 2, "ranges": [{"name": "cpu", "min": "9223372036854775807", "max": "1"}]}]),
        "spec.resourceModels", id="a resource model max is above its min"),
])
def test_invalid_cluster_is_rejected_naming_the_field(doc: dict[str, Any], path: str) -> None:
    assert path in rejected_fields(doc)


@pytest.mark.parametrize("endpoint", [
    pytest.param("https://172.18.0.3:6443", id="an https URL with an IP and port"),
    pytest.param("https://member1.example.com", id="an https URL with a host name"),
    pytest.param("simulated://member1", id="a simulated member URL"),
    pytest.param("kube://kubernetes-admin@kind-member1", id="a context of the default kubeconfig"),
    pytest.param("kube:///etc/fleet/member1.kubeconfig#member1", id="a context of a kubeconfig file"),
])
def test_valid_api_endpoints_are_admitted(endpoint: str) -> None:
    assert admit(cluster(apiEndpoint=endpoint))["spec"]["apiEndpoint"] == endpoint


def test_a_48_character_cluster_name_is_admitted() -> None:
    assert admit(cluster("m" * 48))["metadata"]["name"] == "m" * 48


# --- metadata (every kind) -------------------------------------------------------------------------


def deployment(name: str | None = "nginx", namespace: str | None = "default", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, **meta}, "spec": {"replicas": 1, "x": None}}


@pytest.mark.parametrize(("doc", "path"), [
    pytest.param(deployment(name=None), "metadata.name", id="an object needs a name or generateName"),
    pytest.param(deployment(name="a/b"), "metadata.name", id="a name may not contain a slash"),
    pytest.param(deployment(name=".."), "metadata.name", id="a name may not be dot-dot"),
    pytest.param(deployment(namespace=None), "metadata.namespace",
                 id="a namespaced object needs a namespace"),
    pytest.param(deployment(namespace="Bad_NS"), "metadata.namespace", id="a namespace is an RFC 1123 label"),
    pytest.param(deployment(labels={"app": "a b"}), "metadata.labels[app]", id="label values are validated"),
    pytest.param(deployment(labels={"bad key": "x"}), "metadata.labels[bad key]",
                 id="label keys are validated"),
    pytest.param(deployment(annotations={"/x": "anything goes"}), "metadata.annotations[/x]",
                 id="annotation keys are qualified names"),
    pytest.param({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}, "metadata.name",
                 id="a namespace name has no dots"),
    pytest.param({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                  "metadata": {"name": "Nginx", "namespace": "karmada-es-m1"}}, "metadata.name",
                 id="typed kinds use RFC 1123 subdomain names"),
])
def test_invalid_metadata_is_rejected_naming_the_field(doc: dict[str, Any], path: str) -> None:
    assert path in rejected_fields(doc)


@pytest.mark.parametrize("doc", [
    pytest.param({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": "system:controller:tom"}, "rules": []}, id="a ClusterRole"),
    pytest.param({"apiVersion": "apps.example.io/v1", "kind": "Deployment",
                  "metadata": {"name": "Any:Name", "namespace": "default"}, "spec": {}},
                 id="a custom kind that shares a built-in kind's name"),
])
def test_unstructured_objects_without_kind_rules_pass_through_unchanged(doc: dict[str, Any]) -> None:
    obj = SCHEME.decode(doc)
    assert admission.admit(obj, None, operation="CREATE", now=NOW) is obj


def test_generate_name_stands_in_for_a_name() -> None:
    doc = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"generateName": "nginx-", "namespace": "default"}}
    assert admit(doc)["metadata"]["generateName"] == "nginx-"


def test_a_binding_is_admitted_unchanged() -> None:
    doc = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
           "metadata": {"name": "nginx-deployment", "namespace": "default"},
           "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}}}
    obj = SCHEME.decode(doc)
    assert admission.admit(obj, obj, operation="UPDATE", now=NOW) is obj


def test_ric_target_must_name_a_kind() -> None:
    doc = {"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
           "metadata": {"name": "r"}, "spec": {"target": {"apiVersion": "apps/v1", "kind": ""},
                                               "customizations": {}}}
    assert rejected_fields(doc) == ["spec.target.kind"]


def test_resource_model_type_is_reexported() -> None:
    assert ResourceModel.from_dict({"grade": 0, "ranges": []}).grade == 0


def test_an_event_may_be_named_after_an_object_with_colons() -> None:
    doc = {"apiVersion": "v1", "kind": "Event",
           "metadata": {"name": "system:tom.17a8", "namespace": "default"},
           "involvedObject": {"kind": "ClusterRole", "name": "system:tom"}, "reason": "SyncSucceed"}
    assert admit(doc)["metadata"]["name"] == "system:tom.17a8"
