"""Fields written as ``null`` are stored as kube-apiserver stores them: absent where the schema has the
field (Karmada's kinds, Kubernetes' own, a CRD's properties), kept where the schema leaves the value
free or the CRD marks it nullable — on create, update, patch and ``/status`` alike."""

from __future__ import annotations

import copy
from typing import Any

from .crd_data import CRDS, guestbook_crd
from .helpers import Api

POLICIES = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
WORKS = "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works"
SHELVES = "/apis/webapp.my.domain/v1/namespaces/default/shelves"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


def policy(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": name, "labels": None, "annotations": {"team": "web"}},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                            "labelSelector": None}],
                     "placement": {"clusterAffinity": {"clusterNames": ["member1"]},
                                   "spreadConstraints": None},
                     "failover": None, "propagateDeps": None, "priority": None, "dependentOverrides": None}}


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "annotations": None},
            "spec": {"replicas": None, "strategy": None, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"nodeSelector": None,
                                           "containers": [{"name": "web", "image": "nginx", "args": None}]}}}}


def shelf_crd() -> dict[str, Any]:
    """A namespaced kind whose spec has a nullable property, a non-nullable one and a map."""
    crd = guestbook_crd()
    crd["metadata"] = {"name": "shelves.webapp.my.domain"}
    crd["spec"]["names"] = {"kind": "Shelf", "plural": "shelves"}
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"] = {"type": "object", "properties": {
        "note": {"type": "string", "nullable": True}, "size": {"type": "integer"},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    return crd


async def test_a_policy_created_with_nulls_is_stored_without_them(api: Api) -> None:
    created = await api.http.post(POLICIES, json=policy("nulls"))
    assert created.status_code == 201, created.text
    stored = created.json()
    spec = stored["spec"]
    assert "labels" not in stored["metadata"] and stored["metadata"]["annotations"] == {"team": "web"}
    assert "failover" not in spec and "dependentOverrides" not in spec
    assert (spec["propagateDeps"], spec["priority"]) == (False, 0), "the defaults, as if left out"
    assert "spreadConstraints" not in spec["placement"]
    assert "labelSelector" not in spec["resourceSelectors"][0]
    assert (await api.http.get(f"{POLICIES}/nulls")).json()["spec"] == spec


async def test_an_update_and_a_patch_of_a_policy_drop_nulls_too(api: Api) -> None:
    written = policy("later")
    written["spec"].update(dependentOverrides=["extra"], conflictResolution="Overwrite", priority=4)
    created = await api.http.post(POLICIES, json=written)
    assert created.status_code == 201, created.text
    replaced = copy.deepcopy(created.json())
    replaced["spec"].update(dependentOverrides=None, conflictResolution=None, priority=None)
    updated = await api.http.put(f"{POLICIES}/later", json=replaced)
    assert updated.status_code == 200, updated.text
    spec = updated.json()["spec"]
    assert "dependentOverrides" not in spec and (spec["conflictResolution"], spec["priority"]) == ("Abort", 0)
    patched = await api.http.patch(f"{POLICIES}/later", headers=JSON_PATCH,
                                   json=[{"op": "add", "path": "/spec/schedulerName", "value": None}])
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["schedulerName"] == "default-scheduler"


async def test_a_deployment_with_nulls_is_stored_as_kubernetes_decodes_it(api: Api) -> None:
    created = await api.http.post(DEPLOYS, json=deployment("web"))
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert (spec["replicas"], spec["strategy"]["type"]) == (1, "RollingUpdate")
    assert spec["template"]["spec"] == {"containers": [{"name": "web", "image": "nginx"}]}
    assert "annotations" not in created.json()["metadata"]


async def test_a_null_inside_a_works_manifest_is_data_and_kept(api: Api) -> None:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": None},
                "data": None}
    work = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": {"name": "w"},
            "spec": {"workload": {"manifests": [manifest]}, "suspendDispatching": None}}
    assert (await api.http.post("/api/v1/namespaces", json={"metadata": {"name": "karmada-es-member1"}})
            ).status_code == 201
    created = await api.http.post(WORKS, json=work)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"workload": {"manifests": [manifest]}}


async def test_a_custom_resource_keeps_only_its_nullable_and_free_nulls(api: Api) -> None:
    assert (await api.http.post(CRDS, json=shelf_crd())).status_code == 201
    shelf = {"apiVersion": "webapp.my.domain/v1", "kind": "Shelf", "metadata": {"name": "s"},
             "spec": {"note": None, "size": None, "tags": {"a": "b", "c": None}, "extra": {"free": None}},
             "status": None}
    created = await api.http.post(SHELVES, json=shelf)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"note": None, "tags": {"a": "b"}, "extra": {"free": None}}
    assert "status" not in created.json()
    merged = await api.http.patch(f"{SHELVES}/s", headers=MERGE, json={"spec": {"size": 3}})
    assert merged.json()["spec"]["size"] == 3 and merged.json()["spec"]["note"] is None
    status = await api.http.put(f"{SHELVES}/s/status", json={**merged.json(), "status": {
        "active": None, "standby": ["x"]}})
    assert status.status_code == 200, status.text
    assert status.json()["status"] == {"standby": ["x"]}
