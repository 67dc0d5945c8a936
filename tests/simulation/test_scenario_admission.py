"""Scenario files the control plane would refuse are refused when they load, naming the field.

Clusters, ``resources`` and ``apply`` manifests go through the control plane's decoding and
admission before anything runs; the file's bytes must be UTF-8 and its mappings may not name
a key twice (as Kubernetes' YAML parser refuses them).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper.errors import ScenarioError
from fleetkeeper.simulation import scenario

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
        },
    },
}
POLICY: dict[str, Any] = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "nginx-propagation", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}},
    },
}
STORY: dict[str, Any] = {
    "apiVersion": "fleetkeeper.io/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "admitted"},
    "spec": {
        "clusters": [{"name": "member1", "region": "eu-west"}, {"name": "member2"}],
        "resources": [DEPLOYMENT, POLICY],
        "timeline": [{"at": "30s", "do": [{"apply": POLICY}]}],
    },
}


def story(path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(STORY)
    cur: Any = doc
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = value
    return doc


def test_the_story_itself_loads() -> None:
    sc = scenario.parse(copy.deepcopy(STORY))
    assert [c.name for c in sc.clusters] == ["member1", "member2"]
    assert [a.name for a in sc.timeline[0].do] == ["apply"]


@pytest.mark.parametrize(
    ("path", "value", "field", "rule"),
    [
        pytest.param(
            ["spec", "clusters", 0, "nodeResources"], {"cpu": "eight"},
            "spec.clusters[0].nodeResources.cpu", "quantities must match",
            id="a node resource that is not a quantity",
        ),
        pytest.param(
            ["spec", "clusters", 0, "nodeResources"], {"memory": "-1Gi"},
            "spec.clusters[0].nodeResources.memory", "must not be negative",
            id="a negative node resource",
        ),
        pytest.param(
            ["spec", "clusters", 0, "taints"], [{"key": "a", "effect": "Sometimes"}],
            "spec.clusters[0].taints[0].effect",
            'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            id="a taint effect that does not exist",
        ),
        pytest.param(
            ["spec", "clusters", 1, "taints"],
            [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}],
            "spec.clusters[1].taints[1]", "unique by key and effect",
            id="the same taint twice",
        ),
        pytest.param(
            ["spec", "clusters", 1, "name"], "Member_2",
            "spec.clusters[1].name", "RFC 1123 label",
            id="a cluster name the control plane refuses",
        ),
        pytest.param(
            ["spec", "clusters", 0, "region"], "eu west",
            "spec.clusters[0].region", "Invalid value",
            id="a region that is not a label value",
        ),
        pytest.param(
            ["spec", "clusters", 0, "labels"], {"bad key!": "x"},
            "spec.clusters[0].labels[bad key!]", "Invalid value",
            id="a label key that is not a qualified name",
        ),
        pytest.param(
            ["spec", "resources", 1, "spec", "placement", "replicaScheduling"],
            {"replicaSchedulingType": "Tripled"},
            "spec.resources[1]",
            'PropagationPolicy "nginx-propagation" is invalid: '
            'spec.placement.replicaScheduling.replicaSchedulingType: Unsupported value: "Tripled": '
            'supported values: "Duplicated", "Divided"',
            id="a resource that does not decode",
        ),
        pytest.param(
            ["spec", "resources", 1, "spec", "placement", "spreadConstraints"],
            [{"spreadByField": "region", "minGroups": 1, "maxGroups": 2}],
            "spec.resources[1]",
            'PropagationPolicy "nginx-propagation" is invalid: spec.placement.spreadConstraints: '
            "the cluster spread constraint must be enabled",
            id="a resource admission refuses",
        ),
        pytest.param(
            ["spec", "timeline", 0, "do", 0, "apply"],
            {**POLICY, "spec": {**POLICY["spec"], "placement": {
                "clusterAffinity": {"clusterNames": ["member1"]},
                "clusterAffinities": [{"affinityName": "a", "clusterNames": ["member1"]}]}}},
            "spec.timeline[0].do[0].apply",
            'PropagationPolicy "nginx-propagation" is invalid: spec.placement.clusterAffinities: '
            "clusterAffinities cannot co-exist with clusterAffinity",
            id="an apply action admission refuses",
        ),
    ],
)
def test_what_the_control_plane_refuses_is_refused_at_load(path: list[Any], value: Any, field: str,
                                                          rule: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario.parse(story(path, value))
    assert info.value.field == field
    assert rule in info.value.message


def test_numeric_node_resources_are_quantities_too() -> None:
    sc = scenario.parse(story(["spec", "clusters", 0, "nodeResources"], {"cpu": 4, "memory": "16Gi"}))
    assert sc.clusters[0].node_resources == {"cpu": "4", "memory": "16Gi", "pods": "110"}


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "latin1.yaml"
    f.write_bytes(yaml.safe_dump(STORY).encode() + "# café\n".encode("latin-1"))
    with pytest.raises(ScenarioError) as info:
        scenario.load_file(f)
    assert str(info.value).startswith("cannot read: not UTF-8 text (byte 0xe9 at offset ")


def test_a_key_given_twice_is_refused_naming_it_and_both_lines(tmp_path: Path) -> None:
    f = tmp_path / "twice.yaml"
    f.write_text(
        "apiVersion: fleetkeeper.io/v1alpha1\n"
        "kind: Scenario\n"
        "metadata: {name: twice}\n"
        "spec:\n"
        "  clusters: [{name: member1}]\n"
        "  timeline:\n"
        "    - {at: 10s, do: [{clusterDown: member1}]}\n"
        "  timeline:\n"
        "    - {at: 20s, do: [{clusterUp: member1}]}\n"
    )
    with pytest.raises(ScenarioError) as info:
        scenario.load_file(f)
    message = str(info.value)
    assert 'mapping key "timeline" already defined at line 6' in message
    assert "line 8" in message


def test_merge_keys_still_give_way_to_the_keys_beside_them(tmp_path: Path) -> None:
    f = tmp_path / "merge.yaml"
    f.write_text(
        "apiVersion: fleetkeeper.io/v1alpha1\n"
        "kind: Scenario\n"
        "metadata: {name: merge}\n"
        "spec:\n"
        "  clusters:\n"
        "    - &base {name: member1, region: eu-west, nodes: 2}\n"
        "    - {<<: *base, name: member2}\n"
    )
    sc = scenario.load_file(f)
    assert [(c.name, c.region, c.nodes) for c in sc.clusters] == [("member1", "eu-west", 2),
                                                                  ("member2", "eu-west", 2)]
