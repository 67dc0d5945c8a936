"""Strict field validation over HTTP: ``?fieldValidation=Strict|Warn|Ignore`` on create, update,
patch and apply, for built-in kinds (checked against their schema) and Karmada's typed kinds alike,
with kube-apiserver's status and wording."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from .helpers import Api

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}, **spec}}


def typo(name: str) -> dict[str, Any]:
    body = deployment(name)
    body["spec"] = {"replcas": 3, **body["spec"]}
    body["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    return body


def warnings_of(response: Any) -> list[str]:
    return [w.split(" - ", 1)[1][1:-1].replace('\\"', '"') for w in response.headers.get_list("warning")]


async def test_strict_refuses_unknown_fields_of_a_deployment_with_kube_apiservers_words(api: Api) -> None:
    refused = await api.http.post(DEPLOYS, params={"fieldValidation": "Strict"}, json=typo("web"))
    assert refused.status_code == 400 and refused.json()["reason"] == "BadRequest"
    assert refused.json()["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.replcas", unknown field "spec.template.spec.containers[0].imagePullPolcy"')
    assert (await api.http.get(f"{DEPLOYS}/web")).status_code == 404


async def test_warn_drops_unknown_fields_and_says_so_and_is_the_default(api: Api) -> None:
    for name, params in (("warned", {"fieldValidation": "Warn"}), ("default", {})):
        made = await api.http.post(DEPLOYS, params=params, json=typo(name))
        assert made.status_code == 201
        assert warnings_of(made) == ['unknown field "spec.replcas"',
                                     'unknown field "spec.template.spec.containers[0].imagePullPolcy"']
        stored = (await api.http.get(f"{DEPLOYS}/{name}")).json()
        assert "replcas" not in stored["spec"] and stored["spec"]["replicas"] == 1
        assert "imagePullPolcy" not in stored["spec"]["template"]["spec"]["containers"][0]


async def test_ignore_drops_unknown_fields_silently(api: Api) -> None:
    made = await api.http.post(DEPLOYS, params={"fieldValidation": "Ignore"}, json=typo("quiet"))
    assert made.status_code == 201 and "warning" not in made.headers
    assert "replcas" not in made.json()["spec"]


async def test_free_keys_int_or_string_and_status_pass(api: Api) -> None:
    body = deployment("free", strategy={"type": "RollingUpdate",
                                        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}})
    body["metadata"]["labels"] = {"any.key/at-all": "x"}
    body["metadata"]["annotations"] = {"note": "y"}
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"limits": {"cpu": "500m", "example.com/gpu": 1}}
    body["status"] = {"replicas": 1, "conditions": [{"type": "Available", "status": "True"}]}
    made = await api.http.post(DEPLOYS, params={"fieldValidation": "Strict"}, json=body)
    assert made.status_code == 201, made.text
    status = copy.deepcopy(made.json())
    status["status"] = {"replicas": 1, "readyReplica": 1}
    refused = await api.http.put(f"{DEPLOYS}/free/status", params={"fieldValidation": "Strict"}, json=status)
    assert refused.status_code == 400 and 'unknown field "status.readyReplica"' in refused.json()["message"]


async def test_patches_and_apply_are_checked_on_their_result(api: Api) -> None:
    assert (await api.http.post(DEPLOYS, json=deployment("p"))).status_code == 201
    strict = {"fieldValidation": "Strict"}
    for headers in (MERGE, STRATEGIC):
        refused = await api.http.patch(f"{DEPLOYS}/p", params=strict, headers=headers,
                                       content=b'{"spec":{"replcas":3}}')
        assert refused.status_code == 400
        assert refused.json()["message"] == 'strict decoding error: unknown field "spec.replcas"'
    applied = typo("p")
    refused = await api.http.patch(f"{DEPLOYS}/p", headers=APPLY, content=orjson.dumps(applied),
                                   params={**strict, "fieldManager": "me"})
    assert refused.status_code == 400 and 'unknown field "spec.replcas"' in refused.json()["message"]
    warned = await api.http.patch(f"{DEPLOYS}/p", headers=MERGE, content=b'{"spec":{"replcas":3}}',
                                  params={"fieldValidation": "Warn"})
    assert warned.status_code == 200 and warnings_of(warned) == ['unknown field "spec.replcas"']


async def test_duplicate_fields_of_a_json_body(api: Api) -> None:
    body = orjson.dumps(deployment("dup")).replace(b'"replicas":1', b'"replicas":1,"replicas":2')
    refused = await api.http.post(DEPLOYS, params={"fieldValidation": "Strict"}, content=body, headers=JSON)
    assert refused.status_code == 400
    assert refused.json()["message"].endswith('strict decoding error: duplicate field "spec.replicas"')
    made = await api.http.post(DEPLOYS, content=body, headers=JSON)
    assert made.status_code == 201 and warnings_of(made) == ['duplicate field "spec.replicas"']
    assert made.json()["spec"]["replicas"] == 2


async def test_karmada_kinds_follow_the_same_rules(api: Api) -> None:
    body = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"},
            "spec": {"syncMode": "Push", "regoin": "eu"}}
    refused = await api.http.post(CLUSTERS, params={"fieldValidation": "Strict"}, json=body)
    assert refused.status_code == 400 and refused.json()["message"] == (
        'Cluster in version "v1alpha1" cannot be handled as a Cluster: strict decoding error: '
        'unknown field "spec.regoin"')
    made = await api.http.post(CLUSTERS, json=body)
    assert made.status_code == 201 and warnings_of(made) == ['unknown field "spec.regoin"']


@pytest.mark.parametrize("mode", ["Strict", "Warn"])
async def test_a_huge_object_reports_a_bounded_number_of_fields(api: Api, mode: str) -> None:
    body = deployment("huge")
    body["spec"]["template"]["spec"]["containers"] = [
        {"name": f"c{i}", "image": "nginx", "nmae": "x"} for i in range(500)]
    response = await api.http.post(DEPLOYS, params={"fieldValidation": mode}, json=body)
    reported = response.json()["message"].count("unknown field") if mode == "Strict" else \
        len(warnings_of(response))
    assert reported == 100


async def test_field_names_beyond_ascii_or_very_long_are_said_safely(api: Api) -> None:
    body = deployment("odd")
    body["spec"]["é\n\U0008a6df"] = 1
    body["spec"]["x" * 5000] = 1
    made = await api.http.post(DEPLOYS, json=body)
    assert made.status_code == 201
    said = warnings_of(made)
    assert said[0] == 'unknown field "spec.\\xe9\\x0a\\U0008a6df"'
    assert said[1] == f'unknown field "spec.{"x" * 251}..."'
