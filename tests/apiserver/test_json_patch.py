"""``PATCH`` with ``application/json-patch+json`` answers as kube-apiserver: ``replace`` of an absent
field sets it, an operation that does not apply is ``422 Invalid`` with the library's sentence, and
the limit on operations is ``413`` in kube-apiserver's words."""

from __future__ import annotations

from typing import Any

import orjson

from fleetkeeper.api.limits import MAX_PATCH_OPERATIONS

from .helpers import Api

POLICIES = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


def policy(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": name},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                     "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}}


async def patch(api: Api, path: str, ops: Any) -> Any:
    return await api.http.patch(path, headers=JSON_PATCH, content=orjson.dumps(ops))


async def test_replace_of_an_absent_field_sets_it(api: Api) -> None:
    assert (await api.http.post(POLICIES, json=policy("migrate-pp"))).status_code == 201
    response = await patch(api, f"{POLICIES}/migrate-pp",
                           [{"op": "replace", "path": "/spec/preserveResourcesOnDeletion", "value": True}])
    assert response.status_code == 200, response.text
    stored = (await api.http.get(f"{POLICIES}/migrate-pp")).json()
    assert stored["spec"]["preserveResourcesOnDeletion"] is True


async def test_an_operation_that_does_not_apply_is_invalid_in_the_library_words(api: Api) -> None:
    assert (await api.http.post(POLICIES, json=policy("p"))).status_code == 201
    before = (await api.http.get(f"{POLICIES}/p")).json()
    response = await patch(api, f"{POLICIES}/p", [
        {"op": "replace", "path": "/spec/preserveResourcesOnDeletion", "value": True},
        {"op": "replace", "path": "/spec/resourceSelectors/3/name", "value": "x"}])
    assert response.status_code == 422
    status = response.json()
    assert (status["reason"], status["message"]) == (
        "Invalid", "replace operation does not apply: doc is missing path: /spec/resourceSelectors/3/name: "
                   "missing value")
    assert (await api.http.get(f"{POLICIES}/p")).json() == before
    unknown = await patch(api, f"{POLICIES}/p", [{"op": "merge", "path": "/spec"}])
    assert (unknown.status_code, unknown.json()["message"]) == (422, "Unexpected kind: merge")


async def test_too_many_operations_are_refused_in_kubernetes_words(api: Api) -> None:
    assert (await api.http.post(POLICIES, json=policy("p"))).status_code == 201
    ops = [{"op": "test", "path": "/kind", "value": "PropagationPolicy"}] * (MAX_PATCH_OPERATIONS + 1)
    response = await patch(api, f"{POLICIES}/p", ops)
    assert response.status_code == 413
    assert response.json()["message"] == (
        "Request entity too large: The allowed maximum operations in a JSON patch is "
        f"{MAX_PATCH_OPERATIONS}, got {MAX_PATCH_OPERATIONS + 1}")
