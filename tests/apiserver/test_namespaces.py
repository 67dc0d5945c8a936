"""Namespace lifecycle at the API server: the namespaces it starts with, creation only in a
namespace that exists and is not being deleted, and the namespaces that cannot be deleted."""

from __future__ import annotations

import httpx
import pytest

from fleetkeeper.apiserver import InProcessTransport, build_app
from fleetkeeper.clock import SystemClock

from .helpers import ADMIN, Api

NAMESPACES = "/api/v1/namespaces"
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}}


async def _names(http: httpx.AsyncClient) -> dict[str, str]:
    listed = (await http.get(NAMESPACES)).json()["items"]
    return {item["metadata"]["name"]: item["status"]["phase"] for item in listed}


async def test_the_server_starts_with_the_namespaces_of_a_karmada_control_plane(api: Api) -> None:
    assert await _names(api.http) == {name: "Active" for name in (
        "default", "kube-system", "kube-public", "kube-node-lease", "karmada-system", "karmada-cluster")}
    first = (await api.http.get(f"{NAMESPACES}/default")).json()["metadata"]["uid"]
    # a second server over the same store (a restart) leaves them as they are
    again = build_app(api.store, clock=SystemClock())
    async with httpx.AsyncClient(transport=InProcessTransport(again), base_url="http://apiserver.test",
                                 headers={"Authorization": f"Bearer {ADMIN}"}) as http:
        assert (await http.get(f"{NAMESPACES}/default")).json()["metadata"]["uid"] == first
        assert len(await _names(http)) == 6
    again.close()


@pytest.mark.parametrize("how", ["create", "apply", "dry-run"])
async def test_nothing_is_created_in_a_namespace_that_does_not_exist(api: Api, how: str) -> None:
    path = f"{NAMESPACES}/prod/configmaps"
    if how == "apply":
        manifest = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
        refused = await api.http.patch(f"{path}/settings", params={"fieldManager": "me"}, headers=APPLY,
                                       content=manifest)
    else:
        params = {"dryRun": "All"} if how == "dry-run" else {}
        refused = await api.http.post(path, params=params, json=configmap("settings"))
    assert refused.status_code == 404
    status = refused.json()
    assert status["message"] == 'namespaces "prod" not found' and status["reason"] == "NotFound"
    assert status["details"] == {"name": "prod", "kind": "namespaces"}
    assert (await api.http.get("/api/v1/configmaps")).json()["items"] == []
    made = await api.http.post(NAMESPACES, json={"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": "prod"}})
    assert made.status_code == 201
    assert (await api.http.post(path, json=configmap("settings"))).status_code == 201


async def test_a_namespace_being_deleted_takes_no_new_objects_but_keeps_its_own(api: Api) -> None:
    held = {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "closing", "finalizers": ["example.com/hold"]}}
    assert (await api.http.post(NAMESPACES, json=held)).status_code == 201
    path = f"{NAMESPACES}/closing/configmaps"
    assert (await api.http.post(path, json=configmap("kept"))).status_code == 201
    assert (await api.http.delete(f"{NAMESPACES}/closing")).status_code == 200
    refused = await api.http.post(path, json=configmap("new"))
    assert refused.status_code == 403 and refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"] == ("unable to create new content in namespace closing because it is "
                                         "being terminated")
    patched = await api.http.patch(f"{path}/kept", json={"data": {"a": "c"}},
                                   headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200 and patched.json()["data"] == {"a": "c"}


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_the_immortal_namespaces_cannot_be_deleted(api: Api, name: str) -> None:
    refused = await api.http.delete(f"{NAMESPACES}/{name}")
    assert refused.status_code == 403
    assert refused.json()["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    assert (await api.http.get(f"{NAMESPACES}/{name}")).status_code == 200


async def test_deleting_every_namespace_spares_the_immortal_ones(api: Api) -> None:
    assert (await api.http.post(NAMESPACES, json={"metadata": {"name": "scratch"}})).status_code == 201
    removed = (await api.http.delete(NAMESPACES)).json()["items"]
    assert sorted(item["metadata"]["name"] for item in removed) == [
        "karmada-cluster", "karmada-system", "kube-node-lease", "scratch"]
    # no controllers here: the deleted ones wait, Terminating, for the namespace cleanup to empty them
    assert await _names(api.http) == {
        "default": "Active", "kube-public": "Active", "kube-system": "Active",
        "karmada-cluster": "Terminating", "karmada-system": "Terminating", "kube-node-lease": "Terminating",
        "scratch": "Terminating"}


async def test_only_finalize_changes_a_namespace_s_spec_finalizers(api: Api) -> None:
    assert (await api.http.post(NAMESPACES, json={"metadata": {"name": "stuck"}})).status_code == 201
    assert (await api.http.delete(f"{NAMESPACES}/stuck")).status_code == 200  # as Kubernetes answers
    current = (await api.http.get(f"{NAMESPACES}/stuck")).json()
    assert current["spec"] == {"finalizers": ["kubernetes"]} and current["status"]["phase"] == "Terminating"
    # a plain update or patch takes other changes, not the finalizers (as in Kubernetes)
    edited = {**current, "metadata": {**current["metadata"], "labels": {"team": "a"}}, "spec": {}}
    updated = await api.http.put(f"{NAMESPACES}/stuck", json=edited)
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"] == {"finalizers": ["kubernetes"]}
    assert updated.json()["metadata"]["labels"]["team"] == "a"
    patched = await api.http.patch(f"{NAMESPACES}/stuck", json={"spec": {"finalizers": None}},
                                   headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200 and patched.json()["spec"] == {"finalizers": ["kubernetes"]}
    for method in ("GET", "PATCH", "POST"):
        refused = await api.http.request(method, f"{NAMESPACES}/stuck/finalize", json={})
        assert refused.status_code == 405, (method, refused.text)
    elsewhere = await api.http.put("/api/v1/namespaces/default/configmaps/x/finalize", json={})
    assert elsewhere.status_code == 404
    odd = await api.http.put(f"{NAMESPACES}/stuck/finalize",
                             json={**patched.json(), "spec": {"finalizers": ["kubernetes", "not ok!"]}})
    assert odd.status_code == 422, odd.text
    assert odd.json()["details"]["causes"][0]["field"] == "spec.finalizers[1]"
    # the well-known way out: PUT /finalize with the finalizers gone — the namespace goes
    finalized = await api.http.put(f"{NAMESPACES}/stuck/finalize", json={**patched.json(), "spec": {}})
    assert finalized.status_code == 200, finalized.text
    assert (await api.http.get(f"{NAMESPACES}/stuck")).status_code == 404


async def test_discovery_names_the_finalize_subresource(api: Api) -> None:
    listed = (await api.http.get("/api/v1")).json()["resources"]
    assert {"name": "namespaces/finalize", "singularName": "", "namespaced": False, "kind": "Namespace",
            "verbs": ["update"]} in listed
