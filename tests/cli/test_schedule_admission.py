"""``fleetkeeper schedule``: a policy the control plane would refuse is refused with admission's
message, clusters are unique by name, and the input files are UTF-8 YAML without duplicate keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
import yaml
from typer.testing import CliRunner, Result

from fleetkeeper.apiserver import InProcessTransport, Tokens, build_app
from fleetkeeper.cli.schedule import schedule
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

app = typer.Typer()
app.command()(schedule)
runner = CliRunner()

API = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]


def cluster(name: str) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push"}, "status": {"apiEnablements": API}}


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx"},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
             "template": {"metadata": {"labels": {"app": "nginx"}},
                          "spec": {"containers": [{"image": "nginx", "name": "nginx"}]}}}}


def policy(placement: dict[str, Any] | None) -> dict[str, Any]:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "nginx-propagation"},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
                     "placement": placement}}


def write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def invoke(*files: str) -> Result:
    return runner.invoke(app, [arg for f in files for arg in ("-f", f)])


def inputs(tmp_path: Path, placement: dict[str, Any]) -> list[str]:
    return [write(tmp_path, "clusters.yaml", cluster("member1"), cluster("member2")),
            write(tmp_path, "deploy.yaml", DEPLOYMENT),
            write(tmp_path, "pp.yaml", policy(placement))]


@pytest.mark.parametrize(("placement", "message"), [
    pytest.param({"spreadConstraints": [{"spreadByField": "region", "minGroups": 1, "maxGroups": 2}]},
                 "spec.placement.spreadConstraints: the cluster spread constraint must be enabled in one of "
                 "the constraints in case of SpreadByField is enabled",
                 id="spreading by region without a cluster constraint"),
    pytest.param({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 2}]},
                 "spec.placement.spreadConstraints[0].maxGroups: Invalid value: 2: "
                 "maxGroups lower than minGroups is not allowed",
                 id="maxGroups below minGroups"),
    pytest.param({"clusterAffinity": {"clusterNames": ["member1"]},
                  "clusterAffinities": [{"affinityName": "a", "clusterNames": ["member1"]}]},
                 "spec.placement.clusterAffinities: clusterAffinities cannot co-exist with clusterAffinity",
                 id="clusterAffinity and clusterAffinities together"),
    pytest.param({"clusterTolerations": [
                     {"key": "a", "operator": "Lt", "value": "1", "effect": "NoSchedule"}]},
                 'spec.placement.clusterTolerations[0].operator: Unsupported value: "Lt"',
                 id="a toleration with operator Lt"),
])
def test_a_placement_admission_refuses_exits_2_with_its_message(tmp_path: Path, placement: dict[str, Any],
                                                                message: str) -> None:
    files = inputs(tmp_path, placement)
    result = invoke(*files)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(
        f'error: {files[2]}: document 1: PropagationPolicy "nginx-propagation" is invalid: ')
    assert message in result.stderr


def test_an_admitted_policy_schedules_with_the_admission_defaults(tmp_path: Path) -> None:
    files = inputs(tmp_path, {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                              "spreadConstraints": [{"maxGroups": 1, "minGroups": 0}],
                              "replicaScheduling": {"replicaSchedulingType": "Duplicated"}})
    result = invoke(*files)
    assert result.exit_code == 0, result.output
    placed = yaml.safe_load(result.stdout)
    assert len(placed) == 1 and placed[0]["replicas"] == 3


def test_two_clusters_of_one_name_exit_2_naming_both_places(tmp_path: Path) -> None:
    first = write(tmp_path, "clusters.yaml", cluster("member1"), cluster("member2"))
    second = write(tmp_path, "more.yaml", cluster("member2"))
    rest = inputs(tmp_path, {"clusterAffinity": {"clusterNames": ["member1"]}})[1:]
    result = invoke(first, second, *rest)
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"error: {second}: document 1: metadata.name: Duplicate value: 'member2': "
                             f"a Cluster of that name is already given in {first}: document 2\n")


def test_a_file_that_is_not_utf8_exits_2(tmp_path: Path) -> None:
    files = inputs(tmp_path, {"clusterAffinity": {"clusterNames": ["member1"]}})
    Path(files[1]).write_bytes(b"\xff\xfe" + Path(files[1]).read_bytes())
    result = invoke(*files)
    assert result.exit_code == 2
    assert result.stderr == f"error: {files[1]}: cannot read: not UTF-8 text (byte 0xff at offset 0)\n"


def test_a_key_given_twice_exits_2(tmp_path: Path) -> None:
    files = inputs(tmp_path, {"clusterAffinity": {"clusterNames": ["member1"]}})
    Path(files[2]).write_text(Path(files[2]).read_text() + "spec: {}\n")
    result = invoke(*files)
    assert result.exit_code == 2
    assert f"error: {files[2]}: invalid YAML: mapping key \"spec\" already defined at line" in result.stderr


async def test_an_empty_placement_means_any_cluster_duplicated_here_as_in_the_control_plane(
        tmp_path: Path) -> None:
    empty = policy(None)  # `placement:` with nothing after it
    store = open_store("memory://", clock=SystemClock())
    app_ = build_app(store, clock=SystemClock(), tokens=Tokens(admin="t"))
    async with httpx.AsyncClient(transport=InProcessTransport(app_), base_url="http://plane.test",
                                 headers={"Authorization": "Bearer t"}) as http:
        response = await http.patch(
            "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies/nginx-propagation",
            params={"fieldManager": "test"}, content=yaml.safe_dump(empty),
            headers={"Content-Type": "application/apply-patch+yaml"})
    app_.close()
    await store.close()
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["placement"] == {}
    result = invoke(write(tmp_path, "clusters.yaml", cluster("member1"), cluster("member2")),
                    write(tmp_path, "app.yaml", DEPLOYMENT, empty))
    assert result.exit_code == 0, result.output
    everywhere = [{"name": "member1", "replicas": 3}, {"name": "member2", "replicas": 3}]
    assert yaml.safe_load(result.stdout) == everywhere, "Duplicated onto every cluster"
