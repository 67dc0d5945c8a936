"""DELETE's propagationPolicy on a resource template: what becomes of the binding it owns."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import Api

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
RBS = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


async def template_with_binding(api: Api, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Deployment and the binding it owns, as the detector writes it."""
    made = (await api.http.post(DEPLOYS, json=deployment(name))).json()
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": made["metadata"]["uid"],
             "controller": True, "blockOwnerDeletion": True}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "not-the-template"}
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
               "metadata": {"name": f"{name}-deployment", "ownerReferences": [owner, other]},
               "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                                     "name": name}}}
    created = await api.http.post(RBS, json=binding)
    assert created.status_code == 201, created.text
    return made, created.json()


async def test_orphan_keeps_the_binding_and_drops_only_the_templates_ownership(api: Api) -> None:
    await template_with_binding(api, "web")
    gone = await api.http.request("DELETE", f"{DEPLOYS}/web", json={"propagationPolicy": "Orphan"})
    assert gone.status_code == 200, gone.text
    assert (await api.http.get(f"{DEPLOYS}/web")).status_code == 404
    kept = (await api.http.get(f"{RBS}/web-deployment")).json()
    assert [ref["uid"] for ref in kept["metadata"]["ownerReferences"]] == ["not-the-template"]


async def test_the_older_orphan_dependents_spelling_orphans_too(api: Api) -> None:
    await template_with_binding(api, "web")
    await api.http.request("DELETE", f"{DEPLOYS}/web", params={"orphanDependents": "true"})
    kept = (await api.http.get(f"{RBS}/web-deployment")).json()
    assert [ref["uid"] for ref in kept["metadata"]["ownerReferences"]] == ["not-the-template"]


async def test_foreground_holds_a_template_that_owns_a_binding(api: Api) -> None:
    await template_with_binding(api, "web")
    held = await api.http.request("DELETE", f"{DEPLOYS}/web", json={"propagationPolicy": "Foreground"})
    assert held.status_code == 200, held.text
    meta = (await api.http.get(f"{DEPLOYS}/web")).json()["metadata"]
    assert meta["deletionTimestamp"] and meta["finalizers"] == ["foregroundDeletion"]
    owners = (await api.http.get(f"{RBS}/web-deployment")).json()["metadata"]["ownerReferences"]
    assert len(owners) == 2, "the binding still belongs to it (the detector deletes it)"


@pytest.mark.parametrize("policy", ["Foreground", "Background", None])
async def test_a_template_without_a_binding_goes_at_once(api: Api, policy: str | None) -> None:
    await api.http.post(DEPLOYS, json=deployment("lone"))
    body = {"propagationPolicy": policy} if policy else None
    gone = await api.http.request("DELETE", f"{DEPLOYS}/lone", json=body)
    assert gone.status_code == 200 and (await api.http.get(f"{DEPLOYS}/lone")).status_code == 404


async def test_background_leaves_the_binding_to_the_detector(api: Api) -> None:
    await template_with_binding(api, "web")
    await api.http.request("DELETE", f"{DEPLOYS}/web", json={"propagationPolicy": "Background"})
    owners = (await api.http.get(f"{RBS}/web-deployment")).json()["metadata"]["ownerReferences"]
    assert len(owners) == 2


async def test_a_failed_precondition_touches_no_dependent(api: Api) -> None:
    made, _ = await template_with_binding(api, "web")
    refused = await api.http.request("DELETE", f"{DEPLOYS}/web", json={
        "propagationPolicy": "Orphan", "preconditions": {"uid": "someone-else"}})
    assert refused.status_code == 409, refused.text
    owners = (await api.http.get(f"{RBS}/web-deployment")).json()["metadata"]["ownerReferences"]
    assert len(owners) == 2
    assert (await api.http.get(f"{DEPLOYS}/web")).json()["metadata"]["uid"] == made["metadata"]["uid"]
