"""The REST surface, request by request: routing, verbs, status codes and Status bodies."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from .helpers import AGENT, Api, close_api, open_api

CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
MERGE = {"Content-Type": "application/merge-patch+json"}


def cluster(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push", **spec}}


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}, **spec}}


async def test_create_get_list_and_delete_a_cluster(api: Api) -> None:
    created = await api.http.post(CLUSTERS, json=cluster("m1"))
    assert created.status_code == 201
    got = (await api.http.get(f"{CLUSTERS}/m1")).json()
    assert got["metadata"]["uid"] == created.json()["metadata"]["uid"]
    listed = (await api.http.get(CLUSTERS)).json()
    assert listed["kind"] == "ClusterList" and [i["metadata"]["name"] for i in listed["items"]] == ["m1"]
    assert int(listed["metadata"]["resourceVersion"]) >= 1
    deleted = await api.http.delete(f"{CLUSTERS}/m1")
    assert deleted.status_code == 200
    missing = await api.http.get(f"{CLUSTERS}/m1")
    assert missing.status_code == 404
    assert missing.json()["message"] == 'clusters.cluster.karmada.io "m1" not found'
    assert missing.json()["details"] == {"name": "m1", "group": "cluster.karmada.io", "kind": "clusters"}


async def test_namespaced_objects_take_the_namespace_of_the_url(api: Api) -> None:
    made = await api.http.post(DEPLOYS, json=deployment("web"))
    assert made.status_code == 201 and made.json()["metadata"]["namespace"] == "default"
    elsewhere = {**deployment("web"), "metadata": {"name": "web", "namespace": "default"}}
    other = await api.http.post("/apis/apps/v1/namespaces/other/deployments", json=elsewhere)
    assert other.status_code == 400 and "namespace" in other.json()["message"]
    every = (await api.http.get("/apis/apps/v1/deployments")).json()
    keys = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in every["items"]]
    assert keys == [("default", "web")]
    assert (await api.http.get("/apis/apps/v1/deployments/web")).status_code == 404


@pytest.mark.parametrize("path", [
    "/apis/cluster.karmada.io/v1alpha1/widgets",
    "/apis/nope.io/v1/things",
    "/apis/cluster.karmada.io/v1alpha1/namespaces/default/clusters",
    "/apis/cluster.karmada.io/v1alpha1/clusters/m1/scale",
    "/apis/policy.karmada.io/v1alpha1/propagationpolicies/x/status",
    "/nothing/here",
], ids=["unknown resource", "unknown group", "cluster-scoped kind under a namespace",
        "unknown subresource", "status of a kind without status", "unknown path"])
async def test_unknown_paths_are_not_found(api: Api, path: str) -> None:
    response = await api.http.get(path)
    assert response.status_code == 404 and response.json()["reason"] == "NotFound"


async def test_update_with_a_stale_resource_version_is_a_conflict(api: Api) -> None:
    made = (await api.http.post(CLUSTERS, json=cluster("m1"))).json()
    await api.http.patch(f"{CLUSTERS}/m1", content=b'{"spec":{"region":"eu"}}', headers=MERGE)
    made["spec"]["region"] = "us"
    stale = await api.http.put(f"{CLUSTERS}/m1", json=made)
    assert stale.status_code == 409 and stale.json()["reason"] == "Conflict"
    assert "the object has been modified" in stale.json()["message"]


async def test_status_writes_touch_only_status(api: Api) -> None:
    await api.http.post(CLUSTERS, json=cluster("m1"))
    patched = await api.http.patch(f"{CLUSTERS}/m1/status", headers=MERGE, content=orjson.dumps(
        {"spec": {"region": "x"}, "status": {"kubernetesVersion": "v1.31.0"}}))
    body = patched.json()
    assert body["status"] == {"kubernetesVersion": "v1.31.0"} and "region" not in body["spec"]
    assert body["metadata"]["generation"] == 1


async def test_a_table_answers_kubectl_get(api: Api) -> None:
    await api.http.post(CLUSTERS, json=cluster("m1", apiEndpoint="https://m1:6443"))
    ready = {"type": "Ready", "status": "True", "reason": "R", "message": "",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}
    await api.http.patch(f"{CLUSTERS}/m1/status", headers=MERGE, content=orjson.dumps(
        {"status": {"kubernetesVersion": "v1.31.0", "conditions": [ready]}}))
    table = (await api.http.get(CLUSTERS, headers={"Accept": TABLE})).json()
    assert table["kind"] == "Table"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Version", "Mode", "Ready", "Age", "Zones", "Region", "Provider", "API-Endpoint",
                     "Proxy-URL"]
    row = table["rows"][0]
    assert row["cells"][:4] == ["m1", "v1.31.0", "Push", "True"]
    assert row["cells"][8] == "https://m1:6443"
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "m1"
    one = (await api.http.get(f"{CLUSTERS}/m1?includeObject=None", headers={"Accept": TABLE})).json()
    assert len(one["rows"]) == 1 and "object" not in one["rows"][0]


async def test_a_bad_include_object_is_400_with_a_bounded_message(api: Api) -> None:
    await api.http.post(CLUSTERS, json=cluster("m1"))
    for url in (CLUSTERS, f"{CLUSTERS}/m1"):
        bad = await api.http.get(url, params={"includeObject": "x" * 5000}, headers={"Accept": TABLE})
        message = bad.json()["message"]
        assert bad.status_code == 400 and "includeObject must be None, Metadata or Object" in message
        assert len(message) < 200


async def test_selectors_filter_lists(api: Api) -> None:
    for name, region in (("a", "eu"), ("b", "us")):
        body = cluster(name)
        body["metadata"]["labels"] = {"region": region}
        await api.http.post(CLUSTERS, json=body)
    by_label = (await api.http.get(CLUSTERS, params={"labelSelector": "region=us"})).json()
    by_field = (await api.http.get(CLUSTERS, params={"fieldSelector": "metadata.name=a"})).json()
    assert [i["metadata"]["name"] for i in by_label["items"]] == ["b"]
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["a"]
    bad = await api.http.get(CLUSTERS, params={"labelSelector": "a in (b"})
    assert bad.status_code == 400


async def test_limit_and_continue_page_through_a_list(api: Api) -> None:
    for i in range(5):
        await api.http.post(CLUSTERS, json=cluster(f"m{i}"))
    first = (await api.http.get(CLUSTERS, params={"limit": "2"})).json()
    assert len(first["items"]) == 2 and first["metadata"]["continue"]
    token = first["metadata"]["continue"]
    rest = (await api.http.get(CLUSTERS, params={"limit": "10", "continue": token})).json()
    assert [i["metadata"]["name"] for i in first["items"] + rest["items"]] == [f"m{i}" for i in range(5)]


async def test_a_continue_token_older_than_the_history_is_410_expired_as_kubectl_expects() -> None:
    """client-go's pager lists again from scratch on ``410`` with reason ``Expired``."""
    api = await open_api(history=5)
    try:
        for i in range(3):
            await api.http.post(CLUSTERS, json=cluster(f"m{i}"))
        first = (await api.http.get(CLUSTERS, params={"limit": "1"})).json()
        for i in range(3, 30):
            await api.http.post(CLUSTERS, json=cluster(f"m{i}"))
        stale = await api.http.get(CLUSTERS, params={"limit": "1", "continue": first["metadata"]["continue"]})
        assert stale.status_code == 410
        status = stale.json()
        assert (status["kind"], status["reason"], status["code"]) == ("Status", "Expired", 410)
        assert "continue" in status["message"]
    finally:
        await close_api(api)


async def test_delete_of_an_object_with_finalizers_answers_as_kube_apiserver_does(api: Api) -> None:
    body = cluster("m1")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await api.http.post(CLUSTERS, json=body)
    held = await api.http.request("DELETE", f"{CLUSTERS}/m1", content=b'{"propagationPolicy":"Background"}',
                                  headers={"Content-Type": "application/json"})
    assert held.status_code == 200 and held.json()["metadata"]["deletionTimestamp"]
    # 202 only when the request asked not to orphan dependents (kube-apiserver's rule)
    accepted = await api.http.request("DELETE", f"{CLUSTERS}/m1", content=b'{"orphanDependents":false}',
                                      headers={"Content-Type": "application/json"})
    assert accepted.status_code == 202 and accepted.json()["metadata"]["deletionTimestamp"]
    queried = await api.http.delete(f"{CLUSTERS}/m1", params={"orphanDependents": "false"})
    assert queried.status_code == 202
    bad = await api.http.request("DELETE", f"{CLUSTERS}/m1", content=b'{"propagationPolicy":"Sometimes"}')
    assert bad.status_code == 400
    unsure = await api.http.request("DELETE", f"{CLUSTERS}/m1", content=b'{"orphanDependents":"maybe"}')
    assert unsure.status_code == 400 and "orphanDependents" in unsure.json()["message"]
    gone = await api.http.patch(f"{CLUSTERS}/m1", headers={"Content-Type": "application/json-patch+json"},
                                content=b'[{"op":"remove","path":"/metadata/finalizers"}]')
    assert gone.status_code == 200
    assert (await api.http.get(f"{CLUSTERS}/m1")).status_code == 404


async def test_delete_collection_removes_the_selected_objects(api: Api) -> None:
    for name in ("a", "b", "c"):
        labels = {"drop": str(name != "b")}
        await api.http.post(CONFIGMAPS, json={"metadata": {"name": name, "labels": labels}})
    removed = (await api.http.delete(CONFIGMAPS, params={"labelSelector": "drop=True"})).json()
    assert [i["metadata"]["name"] for i in removed["items"]] == ["a", "c"]
    left = (await api.http.get(CONFIGMAPS)).json()
    assert [i["metadata"]["name"] for i in left["items"]] == ["b"]


async def test_dry_run_stores_nothing(api: Api) -> None:
    created = await api.http.post(CLUSTERS, params={"dryRun": "All"}, json=cluster("m1"))
    assert created.status_code == 201 and created.json()["spec"]["resourceModels"], "admission ran"
    assert (await api.http.get(f"{CLUSTERS}/m1")).status_code == 404
    assert (await api.http.post(CLUSTERS, params={"dryRun": "Maybe"}, json=cluster("m1"))).status_code == 400


async def test_a_dry_run_answers_what_would_be_stored(api: Api) -> None:
    created = await api.http.post(CLUSTERS, params={"dryRun": "All"}, json=cluster("m1"))
    meta = created.json()["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] and meta["generation"] == 1
    assert "resourceVersion" not in meta, "nothing was stored, so there is no version"
    stored = (await api.http.post(CLUSTERS, json=cluster("m1"))).json()
    rv, uid = stored["metadata"]["resourceVersion"], stored["metadata"]["uid"]
    # a patch that drops system metadata: the real write would restore it, and so does the dry run
    dropped = {"metadata": {"uid": None, "creationTimestamp": None, "generation": None},
               "spec": {"region": "eu"}}
    patched = await api.http.patch(f"{CLUSTERS}/m1", params={"dryRun": "All"}, json=dropped,
                                   headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200, patched.text
    meta = patched.json()["metadata"]
    assert (meta["uid"], meta["creationTimestamp"]) == (uid, stored["metadata"]["creationTimestamp"])
    assert meta["generation"] == 2 and meta["resourceVersion"] == rv
    assert patched.json()["spec"]["region"] == "eu"
    after = (await api.http.get(f"{CLUSTERS}/m1")).json()
    assert after["metadata"]["resourceVersion"] == rv and "region" not in after["spec"]
    replaced = await api.http.put(f"{CLUSTERS}/m1", params={"dryRun": "All"},
                                  json={**stored, "metadata": {"name": "m1", "resourceVersion": rv}})
    assert replaced.json()["metadata"]["uid"] == uid and replaced.json()["metadata"]["generation"] == 1
    stale = await api.http.put(f"{CLUSTERS}/m1", params={"dryRun": "All"},
                               json={**stored, "metadata": {"name": "m1", "resourceVersion": "1"}})
    assert stale.status_code == 409, "a dry run checks the version as the write would"


async def test_field_validation_modes(api: Api) -> None:
    body = cluster("m1", regoin="eu")
    strict = await api.http.post(CLUSTERS, params={"fieldValidation": "Strict"}, json=body)
    assert strict.status_code == 400 and strict.json()["details"]["causes"][0]["field"] == "spec.regoin"
    assert strict.json()["message"].endswith('strict decoding error: unknown field "spec.regoin"')
    warned = await api.http.post(CLUSTERS, params={"fieldValidation": "Warn"}, json=body)
    assert warned.status_code == 201 and "regoin" not in warned.json()["spec"]
    assert warned.headers["warning"] == '299 - "unknown field \\"spec.regoin\\""'
    ignored = await api.http.post(CLUSTERS, params={"fieldValidation": "Ignore"},
                                  json=cluster("m2", regoin="x"))
    assert ignored.status_code == 201 and "warning" not in ignored.headers
    assert (await api.http.post(CLUSTERS, params={"fieldValidation": "Loose"}, json=body)).status_code == 400


async def test_admission_errors_name_the_field(api: Api) -> None:
    refused = await api.http.post(CLUSTERS, json=cluster("m1", apiEndpoint="not a url"))
    status = refused.json()
    assert refused.status_code == 422 and status["reason"] == "Invalid"
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.apiEndpoint"]


async def test_body_kind_and_name_must_match_the_url(api: Api) -> None:
    wrong_kind = await api.http.post(CLUSTERS, json={**cluster("m1"), "kind": "Work"})
    assert wrong_kind.status_code == 400
    await api.http.post(CLUSTERS, json=cluster("m1"))
    renamed = await api.http.put(f"{CLUSTERS}/m1", json=cluster("m2"))
    assert renamed.status_code == 400


async def test_yaml_bodies_are_accepted(api: Api) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  when: 2026-01-01\n"
    made = await api.http.post(CONFIGMAPS, content=body, headers={"Content-Type": "application/yaml"})
    assert made.status_code == 201 and made.json()["data"] == {"when": "2026-01-01"}


@pytest.mark.parametrize("body", [
    pytest.param(b'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: {k: "\\ud800"}\n',
                 id="a lone surrogate in a YAML value"),
    pytest.param(b'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: {"\\udfff": v}\n',
                 id="a lone surrogate in a YAML key"),
])
async def test_text_that_is_not_unicode_is_a_bad_request(api: Api, body: bytes) -> None:
    response = await api.http.post(CONFIGMAPS, content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 400 and "not valid Unicode" in response.json()["message"]
    as_json = await api.http.post(CONFIGMAPS, content=b'{"metadata":{"name":"s"},"data":{"k":"\\ud800"}}')
    assert as_json.status_code == 400


async def test_a_missing_content_type_means_json(api: Api) -> None:
    made = await api.http.post(CONFIGMAPS, content=orjson.dumps({"metadata": {"name": "plain"}}))
    assert made.status_code == 201


async def test_oversized_bodies_are_refused(api: Api) -> None:
    huge = b'{"metadata":{"name":"h"},"data":{"x":"' + b"x" * (3 * 1024 * 1024) + b'"}}'
    response = await api.http.post(CONFIGMAPS, content=huge)
    assert response.status_code == 413 and response.json()["reason"] == "RequestEntityTooLarge"


async def test_strategic_patches_of_typed_kinds_merge_like_merge_patches(api: Api) -> None:
    await api.http.post(CLUSTERS, json=cluster("m1", zones=["a", "b"]))
    strategic = {"Content-Type": "application/strategic-merge-patch+json"}
    patched = await api.http.patch(f"{CLUSTERS}/m1", headers=strategic,
                                   content=b'{"spec":{"zones":["c"],"$retainKeys":["zones"]}}')
    assert patched.status_code == 200 and patched.json()["spec"]["zones"] == ["c"]


async def test_apply_needs_a_field_manager(api: Api) -> None:
    response = await api.http.patch(f"{CLUSTERS}/m1", content=b"{}",
                                    headers={"Content-Type": "application/apply-patch+yaml"})
    assert response.status_code == 400 and "fieldManager" in response.json()["message"]


async def test_apply_creates_updates_and_removes_what_it_stopped_applying(api: Api) -> None:
    headers = {"Content-Type": "application/apply-patch+yaml"}
    first = await api.http.patch(f"{CLUSTERS}/m1", params={"fieldManager": "ops"}, headers=headers,
                                 content=orjson.dumps(cluster("m1", region="eu", provider="aws")))
    assert first.status_code == 201
    second = await api.http.patch(f"{CLUSTERS}/m1", params={"fieldManager": "ops"}, headers=headers,
                                  content=orjson.dumps(cluster("m1", region="eu")))
    assert second.status_code == 200
    assert second.json()["spec"]["region"] == "eu" and "provider" not in second.json()["spec"]


async def test_version_discovery_and_health(api: Api) -> None:
    assert (await api.http.get("/version")).json()["minor"] == "37"
    assert (await api.http.get("/version/")).status_code == 200
    for path in ("/healthz", "/livez", "/readyz"):
        assert (await api.http.get(path)).text == "ok"
    assert (await api.http.get("/apis/policy.karmada.io")).json()["preferredVersion"]["version"] == "v1alpha1"
    assert (await api.http.get("/openapi/v2")).json()["swagger"] == "2.0"


async def test_a_pull_agent_reads_its_cluster_but_not_others(api: Api) -> None:
    for name in ("member1", "member2"):
        await api.http.post(CLUSTERS, json=cluster(name))
    async with api.client(AGENT) as agent:
        assert (await agent.get(f"{CLUSTERS}/member1")).status_code == 200
        assert (await agent.get(f"{CLUSTERS}/member2")).status_code == 403
        assert (await agent.get(CLUSTERS)).status_code == 403
        pinned = {"fieldSelector": "metadata.name=member1"}
        assert (await agent.get(CLUSTERS, params=pinned)).status_code == 200
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": "member1"}, "spec": {"holderIdentity": "member1"}}
        leases = "/apis/coordination.k8s.io/v1/namespaces/karmada-cluster/leases"
        assert (await agent.post(leases, json=lease)).status_code == 201
        other = {**lease, "metadata": {"name": "member2"}}
        assert (await agent.post(leases, json=other)).status_code == 403


async def test_scale_reads_and_writes_the_template_replicas(api: Api) -> None:
    body = deployment("web", selector={"matchLabels": {"app": "web"}})
    await api.http.post(DEPLOYS, json=body)
    scale = (await api.http.get(f"{DEPLOYS}/web/scale")).json()
    assert (scale["kind"], scale["spec"]) == ("Scale", {"replicas": 1})
    assert scale["status"]["selector"] == "app=web"
    patched = await api.http.patch(f"{DEPLOYS}/web/scale", headers=MERGE, content=b'{"spec":{"replicas":4}}')
    assert patched.json()["spec"] == {"replicas": 4}
    stored = (await api.http.get(f"{DEPLOYS}/web")).json()
    assert stored["spec"]["replicas"] == 4 and stored["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    refused = await api.http.patch(f"{DEPLOYS}/web/scale", headers=MERGE, content=b'{"spec":{"replicas":-1}}')
    assert refused.status_code == 422
    assert (await api.http.get(f"{CONFIGMAPS}/x/scale")).status_code == 404
