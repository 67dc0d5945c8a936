"""A CustomResourceDefinition created over HTTP is served at once, as kube-apiserver serves it:
Established, in discovery, every verb on its kind (namespaced or cluster-scoped), watch, ``/status``;
a CRD for a built-in kind is refused; deleting the CRD stops serving its kind and deletes its objects."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from fleetkeeper.api.scheme import GroupKind

from .crd_data import CLUSTER_WIDE, CRDS, GUESTBOOKS, guestbook, guestbook_crd, rack, rack_crd
from .helpers import Api

pytestmark = pytest.mark.usefixtures("forget_crds")
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
GUARD = 10.0


async def created(api: Api, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await api.http.post(path, json=body)
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


async def test_a_new_crd_is_established_and_in_discovery_before_its_create_returns(api: Api) -> None:
    await created(api, CRDS, guestbook_crd())
    crd = (await api.http.get(f"{CRDS}/guestbooks.webapp.my.domain")).json()
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("True", "NoConflicts"),
                          "Established": ("True", "InitialNamesAccepted")}
    assert crd["status"]["acceptedNames"] == {"plural": "guestbooks", "singular": "guestbook",
                                              "kind": "Guestbook", "listKind": "GuestbookList"}
    assert crd["status"]["storedVersions"] == ["v1"]

    groups = (await api.http.get("/apis")).json()["groups"]
    v1 = {"groupVersion": "webapp.my.domain/v1", "version": "v1"}
    assert {"name": "webapp.my.domain", "versions": [v1], "preferredVersion": v1} in groups
    assert (await api.http.get("/apis/webapp.my.domain")).status_code == 200
    listed = (await api.http.get("/apis/webapp.my.domain/v1")).json()["resources"]
    assert [(r["name"], r["namespaced"], r["kind"]) for r in listed] == [
        ("guestbooks", True, "Guestbook"), ("guestbooks/status", True, "Guestbook")]
    assert listed[0]["singularName"] == "guestbook" and "watch" in listed[0]["verbs"]
    aggregated = (await api.http.get("/apis", headers={"Accept": AGGREGATED})).json()
    group = next(g for g in aggregated["items"] if g["metadata"]["name"] == "webapp.my.domain")
    resource = group["versions"][0]["resources"][0]
    assert (resource["resource"], resource["scope"]) == ("guestbooks", "Namespaced")
    assert [s["subresource"] for s in resource["subresources"]] == ["status"]


async def test_every_verb_serves_a_namespaced_custom_kind(api: Api) -> None:
    await created(api, CRDS, guestbook_crd())
    made = await created(api, GUESTBOOKS, guestbook("guestbook-sample"))
    assert made["metadata"]["namespace"] == "default" and made["spec"]["size"] == 2
    item = f"{GUESTBOOKS}/guestbook-sample"
    listed = (await api.http.get(GUESTBOOKS)).json()
    assert listed["kind"] == "GuestbookList" and [o["metadata"]["name"] for o in listed["items"]] == [
        "guestbook-sample"]
    everywhere = (await api.http.get("/apis/webapp.my.domain/v1/guestbooks")).json()
    assert len(everywhere["items"]) == 1
    replaced = {**made, "spec": {**made["spec"], "size": 3}}
    assert (await api.http.put(item, json=replaced)).json()["spec"]["size"] == 3
    patched = await api.http.patch(item, content="{\"spec\": {\"alias\": \"Phone\"}}",
                                   headers={"Content-Type": "application/merge-patch+json"})
    assert patched.json()["spec"] == {"size": 3, "configMapName": "test", "alias": "Phone"}
    ignored = await api.http.patch(item, content='{"status": {"active": "nope"}}',
                                   headers={"Content-Type": "application/merge-patch+json"})
    assert "status" not in ignored.json(), "with a status subresource, the main resource ignores status"
    status = await api.http.patch(f"{item}/status", content='{"status": {"active": "pod-0", "standby": []}}',
                                  headers={"Content-Type": "application/merge-patch+json"})
    assert status.status_code == 200 and status.json()["status"]["active"] == "pod-0"
    assert (await api.http.get(f"{item}/status")).json()["status"]["active"] == "pod-0"
    assert (await api.http.delete(item)).status_code == 200
    assert (await api.http.get(item)).status_code == 404


async def test_a_custom_kind_is_watched(api: Api) -> None:
    await created(api, CRDS, guestbook_crd())
    async with api.http.stream("GET", GUESTBOOKS, params={"watch": "true", "resourceVersion": "0"}) as stream:
        lines = stream.aiter_lines()
        await created(api, GUESTBOOKS, guestbook("a"))
        await api.http.patch(f"{GUESTBOOKS}/a", content='{"spec": {"size": 5}}',
                             headers={"Content-Type": "application/merge-patch+json"})
        await api.http.delete(f"{GUESTBOOKS}/a")
        seen: list[tuple[str, str]] = []
        async with asyncio.timeout(GUARD):
            async for line in lines:
                if line.strip():
                    event = orjson.loads(line)
                    seen.append((event["type"], event["object"]["kind"]))
                if len(seen) == 3:
                    break
    assert seen == [("ADDED", "Guestbook"), ("MODIFIED", "Guestbook"), ("DELETED", "Guestbook")]


async def test_a_cluster_scoped_custom_kind_lives_outside_namespaces(api: Api) -> None:
    await created(api, CRDS, rack_crd())
    listed = (await api.http.get("/apis/infra.test.io/v1")).json()["resources"]
    rack_entry = next(r for r in listed if r["name"] == "racks")
    assert rack_entry["namespaced"] is False and rack_entry["shortNames"] == ["rk"]
    assert rack_entry["categories"] == ["infra"]
    assert {r["name"] for r in listed} == {"racks", "racks/status", "racks/scale"}
    made = await created(api, CLUSTER_WIDE, {**rack("r1"), "metadata": {"name": "r1", "namespace": "x"}})
    assert "namespace" not in made["metadata"]
    assert (await api.http.get(f"{CLUSTER_WIDE}/r1")).json()["spec"]["units"] == 4
    nested = await api.http.get("/apis/infra.test.io/v1/namespaces/default/racks")
    assert nested.status_code == 404
    scale = (await api.http.get(f"{CLUSTER_WIDE}/r1/scale")).json()
    assert scale["spec"] == {"replicas": 4}
    scaled = await api.http.patch(f"{CLUSTER_WIDE}/r1/scale", content='{"spec": {"replicas": 6}}',
                                  headers={"Content-Type": "application/merge-patch+json"})
    assert scaled.status_code == 200 and scaled.json()["spec"] == {"replicas": 6}
    assert (await api.http.get(f"{CLUSTER_WIDE}/r1")).json()["spec"] == {"units": 6, "room": "b2"}


async def test_deleting_the_crd_stops_serving_its_kind_and_deletes_its_objects(api: Api) -> None:
    await created(api, CRDS, guestbook_crd())
    await created(api, GUESTBOOKS, guestbook("a"))
    deleted = await api.http.delete(f"{CRDS}/guestbooks.webapp.my.domain")
    assert deleted.status_code == 200
    assert (await api.http.get("/apis/webapp.my.domain/v1")).status_code == 404
    assert (await api.http.get("/apis/webapp.my.domain")).status_code == 404
    assert (await api.http.get(GUESTBOOKS)).status_code == 404
    names = [g["name"] for g in (await api.http.get("/apis")).json()["groups"]]
    assert "webapp.my.domain" not in names
    left = await api.store.list(GroupKind("webapp.my.domain", "Guestbook"))
    assert left.items == [], "the objects of a deleted CRD go with it"
    await created(api, CRDS, guestbook_crd())
    assert (await api.http.get(GUESTBOOKS)).json()["items"] == [], "a CRD made again starts empty"


async def test_a_crd_for_a_built_in_kind_is_refused_naming_the_field(api: Api) -> None:
    body = guestbook_crd()
    body["metadata"]["name"] = "propagationpolicies.policy.karmada.io"
    body["spec"].update(group="policy.karmada.io", scope="Cluster",
                        names={"kind": "PropagationPolicy", "plural": "propagationpolicies"})
    answer = await api.http.post(CRDS, json=body)
    assert answer.status_code == 422, answer.text
    causes = answer.json()["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.names.kind"]
    assert "PropagationPolicy.policy.karmada.io is a built-in kind" in causes[0]["message"]
    listed = (await api.http.get("/apis/policy.karmada.io/v1alpha1")).json()["resources"]
    assert next(r for r in listed if r["name"] == "propagationpolicies")["namespaced"] is True


async def test_an_updated_crd_serves_its_new_version(api: Api) -> None:
    await created(api, CRDS, guestbook_crd())
    current = (await api.http.get(f"{CRDS}/guestbooks.webapp.my.domain")).json()
    v1 = current["spec"]["versions"][0]
    current["spec"]["versions"] = [{**v1, "storage": False}, {**v1, "name": "v2"}]
    answer = await api.http.put(f"{CRDS}/guestbooks.webapp.my.domain", json=current)
    assert answer.status_code == 200, answer.text
    group = (await api.http.get("/apis/webapp.my.domain")).json()
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert (await api.http.get("/apis/webapp.my.domain/v2/namespaces/default/guestbooks")).status_code == 200
    crd = (await api.http.get(f"{CRDS}/guestbooks.webapp.my.domain")).json()
    assert crd["status"]["storedVersions"] == ["v1", "v2"]
