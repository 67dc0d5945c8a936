"""``fleetkeeper schedule``: the what-if command, driven through typer's CliRunner with
the seed stories as input files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from fleetkeeper.cli.schedule import schedule

app = typer.Typer()
app.command()(schedule)
runner = CliRunner()

DEPLOYMENT_API = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
                  {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}]
NOT_READY = [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]


def cluster(name: str, taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"syncMode": "Push"}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": spec, "status": {"apiEnablements": DEPLOYMENT_API}}


def deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx",
                                                                        "labels": {"app": "nginx"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"metadata": {"labels": {"app": "nginx"}},
                                  "spec": {"containers": [{"image": "nginx", "name": "nginx"}]}}}}


def policy(placement: dict[str, Any], kind: str = "Deployment", api: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "nginx-propagation"},
            "spec": {"resourceSelectors": [{"apiVersion": api, "kind": kind, "name": "nginx"}],
                     "placement": placement}}


WEIGHTED = {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
            "replicaScheduling": {"replicaDivisionPreference": "Weighted", "replicaSchedulingType": "Divided",
                                  "weightPreference": {"staticWeightList": [
                                      {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                                      {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2}]}}}
DUPLICATED = {"clusterAffinity": {"clusterNames": ["member1", "member2", "member3", "member5"]},
              "spreadConstraints": [{"maxGroups": 2, "minGroups": 2}],
              "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}


def write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def binding(placement: dict[str, Any], replicas: int, clusters: list[dict[str, Any]],
            tasks: list[str]) -> dict[str, Any]:
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": "nginx-deployment", "namespace": "default"},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                                  "name": "nginx"},
                     "replicas": replicas, "placement": placement, "clusters": clusters,
                     "gracefulEvictionTasks": [{"fromCluster": c, "reason": "TaintUntolerated",
                                                "producer": "TaintManager"} for c in tasks]}}


def invoke(*files: str, output: str | None = None, stdin: str | None = None) -> Any:
    args = [arg for f in files for arg in ("-f", f)]
    if output:
        args += ["-o", output]
    return runner.invoke(app, args, input=stdin)


@pytest.mark.parametrize(("replicas", "expected"), [
    pytest.param(3, [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}],
                 id="three replicas at static weights 1 and 2"),
    pytest.param(9, [{"name": "member1", "replicas": 3}, {"name": "member2", "replicas": 6}],
                 id="nine replicas at static weights 1 and 2"),
])
def test_seed_static_weights_from_a_template_and_its_policy(tmp_path: Path, replicas: int,
                                                            expected: list[dict[str, Any]]) -> None:
    clusters = write(tmp_path, "clusters.yaml", cluster("member1"), cluster("member2"))
    workload = write(tmp_path, "workload.yaml", deployment(replicas), policy(WEIGHTED))
    result = invoke(clusters, workload)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout) == expected


def test_seed_static_weights_after_member1_is_evicted(tmp_path: Path) -> None:
    clusters = write(tmp_path, "clusters.yaml", cluster("member1", NOT_READY), cluster("member2"))
    rb = write(tmp_path, "rb.yaml", binding(WEIGHTED, 3, [{"name": "member2", "replicas": 2}], ["member1"]))
    result = invoke(clusters, rb)
    assert result.exit_code == 0, result.output
    assert result.stdout == "- name: member2\n  replicas: 3\n"


def test_seed_duplicated_example_member2_fails(tmp_path: Path) -> None:
    clusters = write(tmp_path, "clusters.yaml", *(cluster(f"member{i}", NOT_READY if i == 2 else None)
                                                  for i in range(1, 6)))
    rb = write(tmp_path, "rb.yaml", binding(DUPLICATED, 2, [{"name": "member1", "replicas": 2}], ["member2"]))
    result = invoke(clusters, rb)
    assert result.exit_code == 0, result.output
    names = [c["name"] for c in yaml.safe_load(result.stdout)]
    assert names[0] == "member1" and len(names) == 2 and names[1] in ("member3", "member5")


def test_seed_duplicated_example_initial_schedule(tmp_path: Path) -> None:
    clusters = write(tmp_path, "clusters.yaml", *(cluster(f"member{i}") for i in range(1, 6)))
    workload = write(tmp_path, "workload.yaml", deployment(2), policy(DUPLICATED))
    result = invoke(clusters, workload, output="json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"name": "member1", "replicas": 2}, {"name": "member2",
                                                                              "replicas": 2}]


def test_an_unschedulable_binding_exits_1_with_the_reason_per_cluster(tmp_path: Path) -> None:
    clusters = write(tmp_path, "clusters.yaml", cluster("member1"), cluster("member3", NOT_READY))
    workload = write(tmp_path, "workload.yaml", deployment(1),
                     policy({"clusterAffinity": {"clusterNames": ["member3"]}}))
    result = invoke(clusters, workload)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert 'cluster "member3" is not fit, reason: cluster(s) had untolerated taint ' \
           "{cluster.karmada.io/not-ready:NoExecute}" in result.stderr
    assert 'cluster "member1" is not fit, reason: cluster(s) did not match the placement cluster affinity ' \
           "constraint" in result.stderr


def test_a_non_workload_prints_names_only(tmp_path: Path) -> None:
    clusters = write(tmp_path, "clusters.yaml", cluster("member2"), cluster("member1"))
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nginx"}, "data": {"a": "b"}}
    workload = write(tmp_path, "workload.yaml", configmap, policy({}, kind="ConfigMap", api="v1"))
    result = invoke(clusters, workload)
    assert result.exit_code == 0, result.output
    assert result.stdout == "- name: member1\n- name: member2\n"


def test_files_can_come_from_stdin(tmp_path: Path) -> None:
    workload = write(tmp_path, "workload.yaml", deployment(3), policy(WEIGHTED))
    result = invoke("-", workload, stdin=yaml.safe_dump_all([cluster("member1"), cluster("member2")]))
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout) == [{"name": "member1", "replicas": 1}, {"name": "member2",
                                                                                  "replicas": 2}]


@pytest.mark.parametrize(("docs", "output", "message"), [
    pytest.param([{**cluster("member1"), "spec": {}}], None, "spec.syncMode",
                 id="a cluster without syncMode names the field"),
    pytest.param([cluster("member1")], None, "expected one ResourceBinding",
                 id="nothing to schedule is bad input"),
    pytest.param([deployment(1), policy(WEIGHTED, kind="StatefulSet")], None, "spec.resourceSelectors",
                 id="a policy that does not select the template"),
    pytest.param([{"kind": "Deployment"}], None, "apiVersion and kind are required",
                 id="a document without apiVersion"),
    pytest.param([deployment(1), policy({"replicaScheduling": {"replicaSchedulingType": "Sideways"}})], None,
                 "spec.placement.replicaScheduling.replicaSchedulingType", id="an unknown scheduling type"),
    pytest.param([cluster("member1"), deployment(1), policy(WEIGHTED)], "xml", "--output",
                 id="an unknown format"),
])
def test_bad_input_exits_2_naming_the_field(tmp_path: Path, docs: list[dict[str, Any]], output: str | None,
                                            message: str) -> None:
    result = invoke(write(tmp_path, "input.yaml", *docs), output=output)
    assert result.exit_code == 2
    assert message in result.stderr


def test_invalid_yaml_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: [unclosed\n")
    result = invoke(str(path))
    assert result.exit_code == 2 and "invalid YAML" in result.stderr


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2 and "cannot read" in result.stderr
