"""Karmada's resource-migration tutorial, rollback included, with the real kubectl against
``fleetkeeper up``: the tutorial's files and commands unchanged (the simulated members start
empty, so its step that presets the Deployment in member1 is left out and the policy's copy is
the one kept).

After ``kubectl patch pp migrate-pp --type=json`` replaces the absent
``/spec/preserveResourcesOnDeletion`` with ``true`` and ``kubectl delete -f deployments.yaml``
deletes the template, its Work is gone and its pods still run in member1.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .test_up import Fleet, allocated_pods, fleet, ready_clusters, wait_for

__all__ = ["fleet"]  # the fixture, shared with test_up

DEPLOYMENTS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deploy
spec:
  selector:
    matchLabels:
      app: nginx
  replicas: 2
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
        - name: nginx
          image: nginx:latest
          ports:
            - containerPort: 80
"""

MIGRATE_PP = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: migrate-pp
spec:
  conflictResolution: Overwrite
  placement:
    clusterAffinity:
      clusterNames:
      - member1
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx-deploy
"""

PRESERVE = '[{"op": "replace", "path": "/spec/preserveResourcesOnDeletion", "value": true}]'


def member1_works(fleet: Fleet) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = fleet.json("get", "works", "-n", "karmada-es-member1")["items"]
    return [w for w in found if w["metadata"]["name"].startswith("nginx-deploy-")]


def preserving(fleet: Fleet) -> bool:
    return any(w["spec"].get("preserveResourcesOnDeletion") is True for w in member1_works(fleet))


def test_the_migration_rollback_keeps_the_member_copy(fleet: Fleet, tmp_path: Path) -> None:
    fleet.up("--clusters", "2")
    wait_for(lambda: ready_clusters(fleet) == {"member1": "True", "member2": "True"}, "both members Ready")
    deployments, policy = tmp_path / "deployments.yaml", tmp_path / "pp-for-migrating-deployments.yaml"
    deployments.write_text(DEPLOYMENTS)
    policy.write_text(MIGRATE_PP)
    assert "deployment.apps/nginx-deploy created" in fleet.kubectl_ok("apply", "-f", str(deployments))
    assert "propagationpolicy.policy.karmada.io/migrate-pp created" in fleet.kubectl_ok(
        "apply", "-f", str(policy))
    wait_for(lambda: allocated_pods(fleet, "member1") == "2", "nginx-deploy's 2 pods running in member1")

    wrong = fleet.kubectl("patch", "pp", "migrate-pp", "--type=json", "-p",
                          '[{"op": "replace", "path": "/spec/placement/clusterAffinity/clusterNames/3",'
                          ' "value": "member2"}]')
    assert wrong.returncode == 1
    assert ("replace operation does not apply: doc is missing key: "
            "/spec/placement/clusterAffinity/clusterNames/3: missing value") in wrong.stderr

    patched = fleet.kubectl_ok("patch", "pp", "migrate-pp", "--type=json", "-p", PRESERVE)
    assert "propagationpolicy.policy.karmada.io/migrate-pp patched" in patched
    assert json.loads(fleet.kubectl_ok("get", "pp", "migrate-pp", "-o", "json"))["spec"][
        "preserveResourcesOnDeletion"] is True
    wait_for(lambda: preserving(fleet), "the Work in member1 preserving its resources")

    assert 'deployment.apps "nginx-deploy" deleted' in fleet.kubectl_ok("delete", "-f", str(deployments))
    wait_for(lambda: member1_works(fleet) == [], "the Work deleted with its template")
    time.sleep(3)  # several status probes (every second): the pods would be gone by now
    assert allocated_pods(fleet, "member1") == "2"
