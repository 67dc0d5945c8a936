"""OverridePolicy and ClusterOverridePolicy rules: which policies apply in which order, each
overrider's edit (Karmada's cases), failures naming the policy, and the Work's record."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.override import ClusterOverridePolicy, ImageOverrider, OverridePolicy, Overriders
from fleetkeeper.controllers import override_rules as rules

DIGEST = "sha256:" + "ab" * 32


def deployment(**spec: Any) -> dict[str, Any]:
    containers = [{"name": "web", "image": "nginx:1.25", "args": ["--port=80"]},
                  {"name": "sidecar", "image": "docker.io/library/envoy:v1"}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": containers}}, **spec}}


def cluster(name: str, **labels: str) -> Cluster:
    return Cluster.from_dict({"metadata": {"name": name, "labels": labels}, "spec": {"syncMode": "Push"}})


def overriders(**fields: Any) -> Overriders:
    return Overriders.from_dict(fields)


def apply(manifest: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return rules.apply_overriders(manifest, overriders(**fields))


# --------------------------------------------------------------------------- images


@pytest.mark.parametrize(("image", "parts"), [
    ("nginx", ("", "nginx", "", "")),
    ("nginx:1.25", ("", "nginx", "1.25", "")),
    ("library/nginx:1.25", ("", "library/nginx", "1.25", "")),
    ("docker.io/library/nginx:1.25", ("docker.io", "library/nginx", "1.25", "")),
    ("localhost/app", ("localhost", "app", "", "")),
    ("localhost:5000/team/app:v1", ("localhost:5000", "team/app", "v1", "")),
    (f"gcr.io/proj/app@{DIGEST}", ("gcr.io", "proj/app", "", DIGEST)),
])
def test_image_references_split_as_karmada_splits_them(image: str, parts: tuple[str, ...]) -> None:
    ref = rules.ImageRef.parse(image)
    assert (ref.hostname, ref.repository, ref.tag, ref.digest) == parts
    assert str(ref) == image


@pytest.mark.parametrize("image", ["", "nginx:bad tag", "nginx@sha256:short", ":1.0"])
def test_an_image_reference_that_cannot_be_parsed_is_an_error(image: str) -> None:
    with pytest.raises(rules.OverrideError, match="invalid image reference"):
        rules.ImageRef.parse(image)


@pytest.mark.parametrize(("image", "component", "operator", "value", "expected"), [
    ("nginx:1.25", "Registry", "replace", "registry.eu.example.com", "registry.eu.example.com/nginx:1.25"),
    ("docker.io/nginx:1.25", "Registry", "add", "-mirror", "docker.io-mirror/nginx:1.25"),
    ("docker.io/nginx:1.25", "Registry", "remove", None, "nginx:1.25"),
    ("docker.io/library/nginx:1.25", "Repository", "replace", "team/web", "docker.io/team/web:1.25"),
    ("nginx:1.25", "Repository", "add", "-slim", "nginx-slim:1.25"),
    ("nginx:1.25", "Tag", "replace", "1.26", "nginx:1.26"),
    ("nginx:1.25", "Tag", "add", "-alpine", "nginx:1.25-alpine"),
    ("nginx:1.25", "Tag", "remove", None, "nginx"),
    ("nginx:1.25", "Tag", "replace", DIGEST, f"nginx@{DIGEST}"),
    (f"nginx@{DIGEST}", "Tag", "remove", None, "nginx"),
])
def test_an_image_component_is_added_replaced_or_removed(image: str, component: str, operator: str,
                                                         value: str | None, expected: str) -> None:
    overrider = ImageOverrider.from_dict({"component": component, "operator": operator, "value": value})
    assert rules.override_image(image, overrider) == expected


def test_the_image_overrider_edits_every_container_or_only_the_predicate_path() -> None:
    every = apply(deployment(), imageOverrider=[{"component": "Registry", "operator": "replace",
                                                 "value": "mirror.io"}])
    assert [c["image"] for c in every["spec"]["template"]["spec"]["containers"]] == [
        "mirror.io/nginx:1.25", "mirror.io/library/envoy:v1"]
    path = "/spec/template/spec/containers/1/image"
    one = apply(deployment(), imageOverrider=[{"predicate": {"path": path}, "component": "Tag",
                                               "operator": "replace", "value": "v2"}])
    assert [c["image"] for c in one["spec"]["template"]["spec"]["containers"]] == [
        "nginx:1.25", "docker.io/library/envoy:v2"]


def test_kinds_without_a_known_pod_spec_are_left_alone_by_image_command_and_args() -> None:
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
               "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
                   {"name": "web", "image": "nginx:1.25"}]}}}}}}
    edited = apply(cronjob, imageOverrider=[{"component": "Tag", "operator": "replace", "value": "2"}],
                   commandOverrider=[{"containerName": "web", "operator": "add", "value": ["x"]}])
    assert edited == cronjob


# --------------------------------------------------------------------------- command, args


def test_command_and_args_are_appended_to_or_removed_from_the_named_container() -> None:
    added = apply(deployment(),
                  argsOverrider=[{"containerName": "web", "operator": "add", "value": ["--debug"]}],
                  commandOverrider=[{"containerName": "sidecar", "operator": "add",
                                     "value": ["envoy", "-c"]}])
    web, sidecar = added["spec"]["template"]["spec"]["containers"]
    assert web["args"] == ["--port=80", "--debug"] and "command" not in web
    assert sidecar["command"] == ["envoy", "-c"]
    removed = apply(added, argsOverrider=[{"containerName": "web", "operator": "remove",
                                           "value": ["--port=80", "--absent"]}])
    assert removed["spec"]["template"]["spec"]["containers"][0]["args"] == ["--debug"]


# --------------------------------------------------------------------------- labels, annotations


def test_labels_are_added_and_only_existing_ones_replaced_or_removed() -> None:
    added = apply(deployment(), labelsOverrider=[{"operator": "add", "value": {"tier": "front", "app": "x"}}])
    assert added["metadata"]["labels"] == {"app": "x", "tier": "front"}
    replaced = apply(deployment(),
                     labelsOverrider=[{"operator": "replace", "value": {"app": "y", "new": "n"}}])
    assert replaced["metadata"]["labels"] == {"app": "y"}
    removed = apply(deployment(), labelsOverrider=[{"operator": "remove", "value": {"app": "", "gone": ""}}])
    assert removed["metadata"]["labels"] == {}
    annotated = apply(deployment(), annotationsOverrider=[{"operator": "add",
                                                           "value": {"example.io/owner": "team-a"}}])
    assert annotated["metadata"]["annotations"] == {"example.io/owner": "team-a"}
    untouched = apply(deployment(), annotationsOverrider=[{"operator": "replace", "value": {"a": "b"}}])
    assert "annotations" not in untouched["metadata"]


# --------------------------------------------------------------------------- field, plaintext


def test_a_field_holding_json_or_yaml_is_patched_as_a_document() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
              "data": {"app.json": '{"db": {"host": "a"}, "debug": false}', "app.yaml": "db:\n  host: a\n"}}
    edited = apply(config, fieldOverrider=[
        {"fieldPath": "/data/app.json",
         "json": [{"subPath": "/db/host", "operator": "replace", "value": "eu"}]},
        {"fieldPath": "/data/app.yaml", "yaml": [{"subPath": "/db/port", "operator": "add", "value": 5432}]}])
    assert json.loads(edited["data"]["app.json"]) == {"db": {"host": "eu"}, "debug": False}
    assert yaml.safe_load(edited["data"]["app.yaml"]) == {"db": {"host": "a", "port": 5432}}
    assert config["data"]["app.json"] == '{"db": {"host": "a"}, "debug": false}', "the input was changed"


def test_plaintext_is_a_json_patch_of_the_manifest() -> None:
    edited = apply(deployment(), plaintext=[
        {"path": "/spec/replicas", "operator": "replace", "value": 5},
        {"path": "/spec/paused", "operator": "add", "value": True},
        {"path": "/metadata/labels", "operator": "remove"}])
    assert edited["spec"]["replicas"] == 5 and edited["spec"]["paused"] is True
    assert "labels" not in edited["metadata"]


@pytest.mark.parametrize(("fields", "words"), [
    ({"plaintext": [{"path": "/spec/missing/deep", "operator": "replace", "value": 1}]}, "spec/missing"),
    ({"fieldOverrider": [{"fieldPath": "/spec/replicas",
                          "json": [{"subPath": "/a", "operator": "remove"}]}]},
     "not a string"),
    ({"imageOverrider": [{"predicate": {"path": "/spec/replicas"}, "component": "Tag",
                          "operator": "remove"}]}, "not an image"),
    ({"imageOverrider": [{"predicate": {"path": "/spec/nothing"}, "component": "Tag",
                          "operator": "remove"}]}, "/spec/nothing': the path does not exist"),
], ids=["a path that is not there", "a field that is not a string", "a predicate that is not an image",
        "a predicate that is not there"])
def test_an_override_that_cannot_apply_names_its_policy(fields: dict[str, Any], words: str) -> None:
    matched = [rules.Matched("careful", overriders(**fields))]
    with pytest.raises(rules.OverrideError, match="override policy careful") as caught:
        rules.apply(deployment(), matched)
    assert words in str(caught.value)


# --------------------------------------------------------------------------- matching


def policy(name: str, selectors: list[dict[str, Any]] | None, rules_: list[dict[str, Any]] | None = None,
           **top: Any) -> OverridePolicy:
    spec: dict[str, Any] = {"resourceSelectors": selectors, "overrideRules": rules_, **top}
    return OverridePolicy.from_dict({"metadata": {"name": name, "namespace": "default"},
                                     "spec": {k: v for k, v in spec.items() if v is not None}})


def label(value: str) -> dict[str, Any]:
    return {"overriders": {"labelsOverrider": [{"operator": "add", "value": {"by": value}}]}}


def test_policies_apply_from_the_least_to_the_most_specific_then_by_name() -> None:
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment"}
    policies = [
        policy("by-name", [{**deploy, "name": "web"}], [label("by-name")]),
        policy("all-b", None, [label("all-b")]),
        policy("by-label", [{**deploy, "labelSelector": {"matchLabels": {"app": "web"}}}],
               [label("by-label")]),
        policy("all-a", [deploy], [label("all-a")]),
        policy("other-kind", [{"apiVersion": "v1", "kind": "ConfigMap"}], [label("never")]),
        policy("other-name", [{**deploy, "name": "api"}], [label("never")]),
    ]
    matched = rules.matching(policies, deployment(), cluster("member1"))
    assert [m.policy for m in matched] == ["all-a", "all-b", "by-label", "by-name"]
    assert rules.apply(deployment(), matched)["metadata"]["labels"]["by"] == "by-name"


def test_rules_apply_to_the_clusters_their_target_selects_and_the_old_form_still_works() -> None:
    targeted = policy("targeted", None, [
        {"targetCluster": {"clusterNames": ["member1"]}, **label("one")},
        {"targetCluster": {"labelSelector": {"matchLabels": {"env": "prod"}}}, **label("prod")},
        label("every")])
    old_form = ClusterOverridePolicy.from_dict({"metadata": {"name": "old"}, "spec": {
        "targetCluster": {"clusterNames": ["member2"]},
        "overriders": {"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 1}]}}})
    one = rules.matching([targeted], deployment(), cluster("member1"))
    assert [m.overriders.labels_overrider[0].value for m in one  # type: ignore[index]
            ] == [{"by": "one"}, {"by": "every"}]
    prod = rules.matching([targeted], deployment(), cluster("member2", env="prod"))
    assert len(prod) == 2
    assert [m.policy for m in rules.matching([old_form], deployment(), cluster("member2"))] == ["old"]
    assert rules.matching([old_form], deployment(), cluster("member1")) == []


def test_the_work_records_what_was_applied_sorted_by_policy() -> None:
    first = rules.Matched("b-policy", overriders(labelsOverrider=[{"operator": "add", "value": {"a": "1"}}]))
    second = rules.Matched("a-policy", overriders(plaintext=[{"path": "/x", "operator": "remove"}]))
    recorded = rules.applied_annotations([], [first, second])
    assert list(recorded) == ["policy.karmada.io/applied-overrides"]
    assert json.loads(recorded["policy.karmada.io/applied-overrides"]) == [
        {"policyName": "a-policy", "overriders": {"plaintext": [{"path": "/x", "operator": "remove"}]}},
        {"policyName": "b-policy",
         "overriders": {"labelsOverrider": [{"operator": "add", "value": {"a": "1"}}]}}]
    assert rules.applied_annotations([], []) == {}


def test_events_name_policies_as_karmada_does() -> None:
    label = overriders(labelsOverrider=[{"operator": "add", "value": {"a": "1"}}])
    assert rules.applied_titles([rules.Matched("everywhere", label)],
                                [rules.Matched("web", label), rules.Matched("web", label)], "prod") == [
        "cluster override policy(everywhere)", "override policy(prod/web)", "override policy(prod/web)"]
    assert rules.policy_title("everywhere", None) == "cluster override policy(everywhere)"


@pytest.mark.parametrize(("cluster_wide", "title"), [
    (True, "cluster override policy(broken)"), (False, "override policy(prod/broken)")])
def test_a_failing_policy_is_named_with_its_scope_and_cluster(cluster_wide: bool, title: str) -> None:
    broken = [rules.Matched("broken", overriders(plaintext=[{"path": "/spec/nothing/here",
                                                             "operator": "replace", "value": 1}]))]
    fine = [rules.Matched("fine", overriders(labelsOverrider=[{"operator": "add", "value": {"a": "1"}}]))]
    with pytest.raises(rules.Failed) as failed:
        rules.apply_for({"spec": {}}, broken if cluster_wide else fine, fine if cluster_wide else broken,
                        "prod", "member1")
    assert (failed.value.title, failed.value.cluster) == (title, "member1")
    assert "override policy broken" in str(failed.value.error)
