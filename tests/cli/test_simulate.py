"""``fleetkeeper simulate``: exit 2 for a file or a store that cannot make a run, never a traceback.

A scenario starts from an empty store; whatever the file sets up at time 0 and the control
plane refuses is a file error naming the field (docs/scenario-format.md: exit 2).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from fleetkeeper.cmd.main import app

runner = CliRunner()

POLICY: dict[str, Any] = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "web-propagation", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "web"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
    },
}
STORY: dict[str, Any] = {
    "apiVersion": "fleetkeeper.io/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "config-to-member1"},
    "spec": {
        "clusters": [{"name": "member1"}],
        "resources": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "default"},
             "data": {"greeting": "hello"}},
            POLICY,
        ],
        "timeline": [{"at": "30s", "expect": [{
            "member": "member1",
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "web"},
            "path": "data.greeting",
            "equals": "hello",
        }]}],
    },
}


def simulate(*args: str) -> Result:
    return runner.invoke(app, ["simulate", *args])


def write(tmp_path: Path, doc: dict[str, Any], name: str = "story.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def test_the_story_holds(tmp_path: Path) -> None:
    result = simulate(write(tmp_path, STORY))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("PASS config-to-member1")


def test_a_store_that_already_holds_a_run_is_refused(tmp_path: Path) -> None:
    story = write(tmp_path, STORY)
    url = f"sqlite:///{tmp_path / 'state.db'}"
    first = simulate(story, "--store", url)
    assert first.exit_code == 0, first.output
    again = simulate(story, "--store", url)
    assert again.exit_code == 2, again.output
    assert again.stdout == ""
    assert f"error: --store {url}: the store is not empty" in again.stderr
    assert "must start from an empty store" in again.stderr and "fresh path" in again.stderr


def test_a_fresh_sqlite_path_is_used(tmp_path: Path) -> None:
    result = simulate(write(tmp_path, STORY), "--store", f"sqlite:///{tmp_path / 'new.db'}")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new.db").exists()


def test_an_unknown_store_scheme_exits_2_with_a_message(tmp_path: Path) -> None:
    result = simulate(write(tmp_path, STORY), "--store", "bogus://")
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "error: --store bogus://: cannot open the store: unknown store URL scheme 'bogus'" in result.stderr


def test_a_store_file_that_cannot_be_opened_exits_2(tmp_path: Path) -> None:
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("not a database, just some notes\n" * 100)
    result = simulate(write(tmp_path, STORY), "--store", f"sqlite:///{not_a_db}")
    assert result.exit_code == 2
    assert f"error: --store sqlite:///{not_a_db}: cannot open the store" in result.stderr


def test_an_invalid_taint_exits_2_naming_the_field(tmp_path: Path) -> None:
    doc = copy.deepcopy(STORY)
    doc["spec"]["clusters"][0]["taints"] = [{"key": "a", "effect": "Sometimes"}]
    story = write(tmp_path, doc)
    result = simulate(story)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {story}: spec.clusters[0].taints[0].effect: ")


def test_node_resources_that_are_not_quantities_exit_2(tmp_path: Path) -> None:
    doc = copy.deepcopy(STORY)
    doc["spec"]["clusters"][0]["nodeResources"] = {"cpu": "eight"}
    story = write(tmp_path, doc)
    result = simulate(story)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {story}: spec.clusters[0].nodeResources.cpu: ")


def test_a_policy_admission_refuses_exits_2_naming_the_resource(tmp_path: Path) -> None:
    doc = copy.deepcopy(STORY)
    doc["spec"]["resources"][1]["spec"]["placement"]["spreadConstraints"] = [
        {"spreadByField": "region", "minGroups": 1}]
    story = write(tmp_path, doc)
    result = simulate(story)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(
        f'error: {story}: spec.resources[1]: PropagationPolicy "web-propagation" is invalid: '
        "spec.placement.spreadConstraints: ")


def test_a_resource_the_control_plane_refuses_at_time_0_exits_2(tmp_path: Path) -> None:
    """Each manifest is valid on its own, but the second write of the policy changes an immutable field."""
    doc = copy.deepcopy(STORY)
    again = copy.deepcopy(POLICY)
    again["spec"]["schedulerName"] = "another-scheduler"
    doc["spec"]["resources"].append(again)
    story = write(tmp_path, doc)
    result = simulate(story)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {story}: spec.resources[2]: the control plane refused it: ")
    assert "spec.schedulerName" in result.stderr and "immutable" in result.stderr


def test_a_file_that_is_not_utf8_exits_2(tmp_path: Path) -> None:
    story = tmp_path / "latin1.yaml"
    story.write_bytes(b"# caf\xe9\n" + yaml.safe_dump(STORY).encode())
    result = simulate(str(story))
    assert result.exit_code == 2
    assert result.stderr == f"error: {story}: cannot read: not UTF-8 text (byte 0xe9 at offset 5)\n"


def test_a_key_given_twice_exits_2(tmp_path: Path) -> None:
    story = tmp_path / "twice.yaml"
    story.write_text(yaml.safe_dump(STORY, sort_keys=False) + "kind: Scenario\n")
    result = simulate(str(story))
    assert result.exit_code == 2
    assert 'mapping key "kind" already defined at line 2' in result.stderr
