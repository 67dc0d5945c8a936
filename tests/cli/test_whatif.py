"""``fleetkeeper whatif`` offline: the fleets of the acceptance table as files, through typer's
CliRunner — the answer per workload, the JSON shape, the table and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from fleetkeeper.cli.whatif import whatif

app = typer.Typer()
app.command()(whatif)
runner = CliRunner()

API = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]


def cluster(name: str, *, region: str = "eu", cpu: str = "8", used: str = "0", pods: int = 0
            ) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push", "region": region},
            "status": {"apiEnablements": API, "resourceSummary": {
                "allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                "allocated": {"cpu": used, "memory": "0", "pods": str(pods)}}}}


def app_of(name: str, replicas: int, placement: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
         "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                      {"name": name, "image": "nginx", "resources": {"requests": {"cpu": "250m"}}}]}}}},
        {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
         "metadata": {"name": name, "namespace": "default"},
         "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                  "placement": placement}},
    ]


def weighted(**weights: int) -> dict[str, Any]:
    return {"clusterAffinity": {"clusterNames": list(weights)},
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                                  "weightPreference": {"staticWeightList": [
                                      {"targetCluster": {"clusterNames": [n]}, "weight": w}
                                      for n, w in weights.items()]}}}


SEED = weighted(member1=1, member2=2)
TOLERATING = {**SEED, "clusterTolerations": [{"key": "cluster.karmada.io/not-ready", "operator": "Exists",
                                              "effect": "NoExecute", "tolerationSeconds": 120}]}
PINNED = {"clusterAffinity": {"clusterNames": ["member1"]},
          "replicaScheduling": {"replicaSchedulingType": "Divided"}}
ALL_FOUR = [{"targetCluster": {"clusterNames": ["member1", "member2", "member3", "member4"]}, "weight": 1}]
EVEN = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                              "weightPreference": {"staticWeightList": ALL_FOUR}}}
REGIONS = {"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2},
                                 {"spreadByField": "region", "minGroups": 2, "maxGroups": 2}],
           "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}


def invoke(tmp_path: Path, docs: list[dict[str, Any]], *args: str) -> Any:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return runner.invoke(app, ["-f", str(path), *args])


CASES = [
    pytest.param([cluster("member1"), cluster("member2"), *app_of("web", 3, SEED)], ["--down", "member1"], 0,
                 {"before": {"member1": 1, "member2": 2}, "after": {"member2": 3}},
                 {"moved": 1, "homeless": 0, "short": 0, "blocked": 0}, id="the seed fleet: all on member2"),
    pytest.param([cluster("member1"), cluster("member2", cpu="600m", used="500m", pods=2),
                  *app_of("web", 3, SEED)], ["--down", "member1"], 3,
                 {"after": {"member2": 3}, "pendingReplicas": 1},
                 {"moved": 1, "homeless": 0, "short": 1, "blocked": 0},
                 id="member2 lacks room for one replica"),
    pytest.param([cluster("member1"), cluster("member2"), *app_of("web", 3, PINNED)],
                 ["--down", "member1"], 3,
                 {"before": {"member1": 3}, "after": {}, "homeless": True, "pendingReplicas": 3},
                 {"moved": 1, "homeless": 1, "short": 0, "blocked": 0}, id="pinned to member1: homeless"),
    pytest.param([cluster("member1"), cluster("member2"), *app_of("web", 3, TOLERATING)],
                 ["--down", "member1"], 0, {"after": {"member2": 3}, "movesAfterSeconds": 120},
                 {"moved": 1, "homeless": 0, "short": 0, "blocked": 0}, id="a toleration of 120s"),
    pytest.param([*(cluster(f"member{i}") for i in range(1, 5)), *app_of("web", 4, EVEN)],
                 ["--down", "member1,member2", "--down", "member3"], 3,
                 {"after": {"member1": 1, "member2": 1, "member3": 1, "member4": 1}, "blocked": True,
                  "movesAfterSeconds": None},
                 {"moved": 0, "homeless": 0, "short": 0, "blocked": 1}, id="3 of 4 down: circuit breaker"),
    pytest.param([cluster("member1", region="eu"), cluster("member2", region="us"),
                  *app_of("web", 2, REGIONS)],
                 ["--region", "eu"], 3, {"after": {"member2": 2}, "homeless": True},
                 {"moved": 1, "homeless": 1, "short": 0, "blocked": 0},
                 id="minGroups 2, one of two regions down"),
]


@pytest.mark.parametrize(("docs", "args", "code", "workload", "summary"), CASES)
def test_whatif_offline(tmp_path: Path, docs: list[dict[str, Any]], args: list[str], code: int,
                        workload: dict[str, Any], summary: dict[str, int]) -> None:
    result = invoke(tmp_path, docs, *args, "-o", "json")
    assert result.exit_code == code, result.output
    answer = json.loads(result.stdout)
    assert answer["summary"] == summary
    [found] = answer["workloads"]
    assert set(found) == {"binding", "before", "after", "pendingReplicas", "homeless", "blocked",
                          "movesAfterSeconds"}
    assert found["binding"] == "default/web-deployment"
    assert {k: found[k] for k in workload} == workload


def test_the_table_names_each_workload_and_sums_up(tmp_path: Path) -> None:
    result = invoke(tmp_path, [cluster("member1"), cluster("member2"), *app_of("web", 3, SEED)],
                    "--down", "member1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["BINDING", "BEFORE", "AFTER", "PENDING", "STATE"]
    assert lines[1].split() == ["default/web-deployment", "member1:1,member2:2", "member2:3", "0", "moved"]
    assert lines[-1] == "if member1 fails: 1 moved, 0 short, 0 homeless, 0 blocked"


def test_yaml_output_and_a_workload_not_on_the_failed_cluster(tmp_path: Path) -> None:
    docs = [cluster("member1"), cluster("member2"), cluster("member3"), *app_of("web", 3, SEED)]
    result = invoke(tmp_path, docs, "--down", "member3", "-o", "yaml")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout) == {"down": ["member3"], "workloads": [],
                                             "summary": {"moved": 0, "homeless": 0, "short": 0, "blocked": 0}}


@pytest.mark.parametrize(("docs", "args", "message"), [
    pytest.param([cluster("member1")], ["--down", "member9"], "--down: no cluster named 'member9'",
                 id="unknown"),
    pytest.param([cluster("member1")], [], "name the failure", id="no failure named"),
    pytest.param([cluster("member1")], ["--zone", "z1"], "--zone: no cluster is in zone 'z1'",
                 id="empty zone"),
    pytest.param([cluster("member1")], ["--down", "member1", "-o", "xml"], "--output", id="bad output"),
    pytest.param([*app_of("web", 3, SEED)], ["--down", "member1"], "no Cluster in the files",
                 id="no clusters"),
    pytest.param([cluster("member1"), app_of("web", 3, SEED)[0]], ["--down", "member1"],
                 "no PropagationPolicy or ClusterPropagationPolicy in the files selects",
                 id="template unclaimed"),
    pytest.param([{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m"},
                   "spec": {"syncMode": "Sideways"}}], ["--down", "m"], "spec.syncMode",
                 id="invalid cluster"),
])
def test_bad_input_exits_2_naming_the_flag_or_field(tmp_path: Path, docs: list[dict[str, Any]],
                                                    args: list[str], message: str) -> None:
    result = invoke(tmp_path, docs, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_each_cluster_is_the_n_plus_1_matrix(tmp_path: Path) -> None:
    docs = [cluster("member1"), cluster("member2", cpu="600m", used="500m", pods=2), cluster("member3"),
            *app_of("web", 3, SEED), *app_of("pinned", 2, PINNED)]
    result = invoke(tmp_path, docs, "--each", "cluster", "-o", "json")
    assert result.exit_code == 3, result.output
    zero = {"moved": 0, "homeless": 0, "short": 0, "blocked": 0}
    assert json.loads(result.stdout) == {"each": "cluster", "domains": [
        {"domain": "member1", "down": ["member1"],
         "summary": {**zero, "moved": 2, "short": 1, "homeless": 1}},
        {"domain": "member2", "down": ["member2"], "summary": {**zero, "moved": 1}},
        {"domain": "member3", "down": ["member3"], "summary": zero}]}
    table = invoke(tmp_path, docs, "--each", "cluster").stdout.splitlines()
    assert [line.split() for line in table] == [
        ["CLUSTER", "CLUSTERS", "MOVED", "SHORT", "HOMELESS", "BLOCKED"],
        ["member1", "member1", "2", "1", "1", "0"],
        ["member2", "member2", "1", "0", "0", "0"], ["member3", "member3", "0", "0", "0", "0"]]


def test_each_region_groups_clusters_and_a_whole_fleet_exits_0(tmp_path: Path) -> None:
    docs = [cluster("member1", region="eu"), cluster("member2", region="us"), cluster("member3", region="us"),
            *app_of("web", 3, weighted(member1=1, member2=1, member3=1))]
    blocked = invoke(tmp_path, docs, "--each", "region", "-o", "yaml")
    assert blocked.exit_code == 3, "two of three clusters down trips the default circuit breaker"
    assert yaml.safe_load(blocked.stdout)["domains"][1]["summary"]["blocked"] == 1
    result = invoke(tmp_path, docs, "--each", "region", "-o", "yaml",
                    "--eviction-circuit-breaker-threshold", "0.9")
    assert result.exit_code == 0, result.output
    assert [(d["domain"], d["down"]) for d in yaml.safe_load(result.stdout)["domains"]] == [
        ("eu", ["member1"]), ("us", ["member2", "member3"])]


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--each", "rack"], "--each: must be one of cluster, zone, region", id="unknown domain"),
    pytest.param(["--each", "cluster", "--down", "member1"], "--each: give it alone", id="with --down"),
])
def test_each_refuses_bad_use(tmp_path: Path, args: list[str], message: str) -> None:
    result = invoke(tmp_path, [cluster("member1")], *args)
    assert result.exit_code == 2 and message in result.output


def test_a_binding_whose_dispatching_is_suspended_is_blocked(tmp_path: Path) -> None:
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
               "metadata": {"name": "web-deployment", "namespace": "default"},
               "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                                     "name": "web"},
                        "replicas": 3, "placement": SEED, "suspension": {"dispatching": True},
                        "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]}}
    docs = [cluster("member1"), cluster("member2"), binding]
    result = invoke(tmp_path, docs, "--down", "member1", "-o", "json")
    assert result.exit_code == 3, result.output
    [found] = json.loads(result.stdout)["workloads"]
    assert (found["blocked"], found["after"]) == (True, {"member1": 1, "member2": 2})


def test_clusters_as_a_list_as_kubectl_get_prints_them(tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [cluster("member1"), cluster("member2")]}
    result = invoke(tmp_path, [listed, *app_of("web", 3, SEED)], "--down", "member1", "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["workloads"][0]["after"] == {"member2": 3}
