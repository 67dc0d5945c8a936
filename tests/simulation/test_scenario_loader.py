"""Scenario files: valid ones load; invalid ones name the field and the rule."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper.errors import ScenarioError
from fleetkeeper.simulation import scenario

VALID: dict[str, Any] = yaml.safe_load(
    """
apiVersion: fleetkeeper.io/v1alpha1
kind: Scenario
metadata: {name: weighted-divided-member1-down}
spec:
  seed: 7
  settings: {clusterFailureThreshold: 30s, gracefulEvictionTimeout: 10m}
  clusters:
    - {name: member1, labels: {env: prod}, region: us-east-1}
    - {name: member2, syncMode: Pull, nodes: 2, podStartup: 500ms}
  resources:
    - {apiVersion: apps/v1, kind: Deployment, metadata: {name: nginx, namespace: default},
       spec: {replicas: 3, selector: {matchLabels: {app: nginx}},
              template: {metadata: {labels: {app: nginx}},
                         spec: {containers: [{name: nginx, image: nginx}]}}}}
  timeline:
    - at: 60s
      do: [{clusterDown: member1}, {setNodes: {cluster: member2, nodes: 1}}]
    - at: 200s
      expect:
        - object: {apiVersion: work.karmada.io/v1alpha2, kind: ResourceBinding, namespace: default,
                   name: nginx-deployment}
          path: spec.clusters
          equalsUnordered: [{name: member2, replicas: 3}]
        - member: member2
          object: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx}
          path: status.readyReplicas
          equals: 3
"""
)


def test_valid_scenario_loads(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump(VALID))
    sc = scenario.load_file(f)
    assert sc.seed == 7
    assert sc.options.cluster_failure_threshold == 30.0 and sc.options.graceful_eviction_timeout == 600.0
    assert [c.name for c in sc.clusters] == ["member1", "member2"]
    assert sc.clusters[1].sync_mode == "Pull" and sc.clusters[1].pod_startup == 0.5
    assert sc.clusters[0].nodes == 3 and sc.clusters[0].node_resources["memory"] == "32Gi"
    assert [s.at for s in sc.timeline] == [60.0, 200.0]
    assert [a.name for a in sc.timeline[0].do] == ["clusterDown", "setNodes"]
    exp = sc.timeline[1].expect
    assert exp[0].check == "equalsUnordered" and exp[1].member == "member2"
    assert str(exp[0].ref) == "ResourceBinding/default/nginx-deployment"


def _mutated(path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(VALID)
    cur: Any = doc
    for key in path[:-1]:
        cur = cur[key]
    if value is _DELETE:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "field", "rule"),
    [
        pytest.param(["kind"], "Story", "kind", "must be 'Scenario'", id="wrong kind"),
        pytest.param(["metadata", "name"], "", "metadata.name", "Required", id="missing name"),
        pytest.param(
            ["spec", "settings", "clusterFailureThreshold"],
            "soon",
            "spec.settings.clusterFailureThreshold",
            "duration",
            id="bad duration setting",
        ),
        pytest.param(
            ["spec", "clusters", 1, "syncMode"],
            "Poll",
            "spec.clusters[1].syncMode",
            "Push or Pull",
            id="unknown sync mode",
        ),
        pytest.param(
            ["spec", "clusters", 1, "name"],
            "member1",
            "spec.clusters[1].name",
            "duplicate",
            id="duplicate cluster",
        ),
        pytest.param(
            ["spec", "timeline", 1, "at"],
            "30s",
            "spec.timeline[1].at",
            "non-decreasing",
            id="steps out of order",
        ),
        pytest.param(
            ["spec", "timeline", 0, "do", 0],
            {"clusterDown": "member9"},
            "spec.timeline[0].do[0].clusterDown",
            "unknown cluster",
            id="action on an undeclared cluster",
        ),
        pytest.param(
            ["spec", "timeline", 0, "do", 0],
            {"explode": "member1"},
            "spec.timeline[0].do[0]",
            "unknown action",
            id="unknown action",
        ),
        pytest.param(
            ["spec", "timeline", 0, "do", 1, "setNodes", "nodes"],
            -1,
            "spec.timeline[0].do[1].setNodes.nodes",
            "non-negative",
            id="negative node count",
        ),
        pytest.param(
            ["spec", "timeline", 1, "expect", 1, "equals"],
            _DELETE,
            "spec.timeline[1].expect[1]",
            "exactly one check",
            id="expectation without a check",
        ),
        pytest.param(
            ["spec", "timeline", 1, "expect", 0, "path"],
            "spec.[",
            "spec.timeline[1].expect[0].path",
            "path",
            id="malformed path",
        ),
        pytest.param(
            ["spec", "timeline", 1, "expect", 0, "count"],
            1,
            "spec.timeline[1].expect[0]",
            "exactly one check",
            id="two checks in one item",
        ),
        pytest.param(
            ["spec", "resources", 0, "metadata"],
            {},
            "spec.resources[0].metadata.name",
            "Required",
            id="resource without a name",
        ),
        pytest.param(["spec", "surprise"], 1, "spec.surprise", "unknown field", id="unknown spec field"),
    ],
)
def test_invalid_scenarios_name_the_field(path: list[Any], value: Any, field: str, rule: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario.parse(_mutated(path, value))
    assert info.value.field == field
    assert rule in info.value.message


def test_unreadable_and_non_yaml_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        scenario.load_file(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec: [unclosed")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        scenario.load_file(bad)
