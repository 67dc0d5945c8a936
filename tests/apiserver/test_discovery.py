"""Discovery documents and the OpenAPI v3 documents kubectl validates and explains with."""

from __future__ import annotations

import orjson
import pytest

from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.apiserver.discovery import Discovery, version_priority, wants_aggregated
from fleetkeeper.apiserver.openapi import OpenAPI

from .helpers import Api

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"


def test_versions_sort_the_kubernetes_way() -> None:
    versions = ["v1alpha1", "v1", "v2beta1", "v1beta2", "v2", "v1alpha2", "foo"]
    assert sorted(versions, key=version_priority) == [
        "v2", "v1", "v2beta1", "v1beta2", "v1alpha2", "v1alpha1", "foo"]


@pytest.mark.parametrize(("accept", "wanted"), [
    (AGGREGATED, True), ("application/json", False), (None, False),
    ("application/json;as=APIGroupDiscoveryList", False),
], ids=["kubectl's header", "plain json", "no header", "without the group"])
def test_aggregated_discovery_is_chosen_by_accept(accept: str | None, wanted: bool) -> None:
    assert wants_aggregated(accept) is wanted


def test_work_group_prefers_v1alpha2_and_serves_both_versions() -> None:
    group = Discovery(SCHEME).group("work.karmada.io")
    assert group is not None
    assert [v["version"] for v in group["versions"]] == ["v1alpha2", "v1alpha1"]
    assert group["preferredVersion"]["version"] == "v1alpha2"


def test_resource_lists_carry_short_names_and_status_subresources() -> None:
    listed = Discovery(SCHEME).resource_list("policy.karmada.io", "v1alpha1")
    assert listed is not None
    pp = next(r for r in listed["resources"] if r["name"] == "propagationpolicies")
    assert pp["shortNames"] == ["pp"] and pp["namespaced"] and "watch" in pp["verbs"]
    clusters = Discovery(SCHEME).resource_list("cluster.karmada.io", "v1alpha1")
    assert clusters is not None
    assert {r["name"] for r in clusters["resources"]} == {"clusters", "clusters/status"}


async def test_both_roots_answer_aggregated_discovery(api: Api) -> None:
    for path in ("/api", "/apis"):
        response = await api.http.get(path, headers={"Accept": AGGREGATED})
        assert response.headers["content-type"] == \
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        assert response.json()["kind"] == "APIGroupDiscoveryList"
    core = (await api.http.get("/api", headers={"Accept": AGGREGATED})).json()
    resources = {r["resource"] for r in core["items"][0]["versions"][0]["resources"]}
    assert {"configmaps", "namespaces"} <= resources
    legacy = (await api.http.get("/api")).json()
    assert legacy["versions"] == ["v1"] and (await api.http.get("/api/v1")).json()["resources"]


def test_every_patch_operation_lets_kubectl_delegate_validation() -> None:
    doc = orjson.loads(OpenAPI(SCHEME).document("policy.karmada.io", "v1alpha1")[0])  # type: ignore[index]
    item = "/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies/{name}"
    patch = doc["paths"][item]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "policy.karmada.io", "version": "v1alpha1", "kind": "PropagationPolicy"}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]


def test_schemas_are_openapi_3_without_json_schema_leftovers() -> None:
    api = OpenAPI(SCHEME)
    for group, version in Discovery(SCHEME).group_versions():
        found = api.document(group, version)
        assert found is not None
        text = orjson.dumps(orjson.loads(found[0])["components"]).decode()
        assert '"$defs"' not in text and '{"type":"null"}' not in text
        if group != "apiextensions.k8s.io":  # a CRD's JSONSchemaProps has a field named title
            assert '"title"' not in text
    doc = orjson.loads(api.document("policy.karmada.io", "v1alpha1")[0])  # type: ignore[index]
    schema = doc["components"]["schemas"]["io.karmada.policy.v1alpha1.PropagationPolicy"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "policy.karmada.io", "version": "v1alpha1", "kind": "PropagationPolicy"}]
    spec_ref = schema["properties"]["spec"]["allOf"][0]["$ref"].rsplit("/", 1)[-1]
    assert schema["properties"]["spec"]["description"]  # the description of the spec's type
    spec = doc["components"]["schemas"][spec_ref]
    assert "failover" in spec["properties"] and "resourceSelectors" in spec["properties"]


async def test_the_index_points_at_each_document_with_its_hash(api: Api) -> None:
    index = (await api.http.get("/openapi/v3")).json()["paths"]
    url = index["apis/cluster.karmada.io/v1alpha1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/cluster.karmada.io/v1alpha1?hash=")
    doc = await api.http.get(url)
    assert doc.status_code == 200 and doc.json()["openapi"] == "3.0.0"
    assert (await api.http.get("/openapi/v3/apis/nope/v1")).status_code == 404
