"""Broken built-in objects are refused at the door, on every write path, with a 4xx Status naming
the field, and nothing stored changes: containers that are null or nameless, a container without
an image, no containers, a ``status`` that is not an object, a finalizer that is not a qualified name."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from .helpers import Api

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
LABELS = {"app": "web"}


def deployment(name: str = "web", **pod: Any) -> dict[str, Any]:
    spec = {"containers": [{"name": "web", "image": "nginx:1.25"}], **pod}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS}, "spec": spec}}}


def with_meta(doc: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["metadata"].update(meta)
    return out


def refused(answer: httpx.Response, field: str, says: str) -> None:
    """A 4xx ``Status`` whose causes name ``field`` with a message holding ``says``."""
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text)
    status = answer.json()
    assert status["kind"] == "Status" and status["status"] == "Failure", status
    causes = {c["field"]: c["message"] for c in status["details"]["causes"]}
    assert field in causes, causes
    assert says in causes[field], causes
    assert field in status["message"]


@pytest.mark.parametrize(("body", "field", "says"), [
    pytest.param(deployment(containers=[None]), "spec.template.spec.containers[0]", "must be an object",
                 id="containers: [null]"),
    pytest.param(deployment(containers=[{"name": 1, "image": "nginx"}]),
                 "spec.template.spec.containers[0].name",
                 "Invalid value: 1: must be a string", id="name: 1"),
    pytest.param(deployment(containers=[{"name": "web"}]), "spec.template.spec.containers[0].image",
                 "Required value", id="no image"),
    pytest.param(deployment(containers=[]), "spec.template.spec.containers", "Required value",
                 id="containers: []"),
    pytest.param(with_meta(deployment(), finalizers=["bad finalizer"]), "metadata.finalizers[0]",
                 'Invalid value: "bad finalizer": name part must consist of alphanumeric characters',
                 id="finalizer: bad finalizer"),
    pytest.param({**deployment(), "status": "Running"}, "status",
                 'Invalid value: "Running": must be an object',
                 id="status: a string"),
])
async def test_a_broken_deployment_is_not_created(api: Api, body: dict[str, Any], field: str,
                                                  says: str) -> None:
    refused(await api.http.post(DEPLOYS, json=body), field, says)
    assert (await api.http.get(f"{DEPLOYS}/web")).status_code == 404
    assert (await api.http.get(DEPLOYS)).json()["items"] == []


Write = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


def _put_status(client: httpx.AsyncClient, stored: dict[str, Any]) -> Awaitable[httpx.Response]:
    return client.put(f"{DEPLOYS}/web/status", json={**stored, "status": "broken"})


WRITES: list[Any] = [
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web/status", headers=JSON_PATCH,
                                      json=[{"op": "replace", "path": "/status", "value": "broken"}]),
                 "status", 'Invalid value: "broken": must be an object',
                 id="a /status JSON patch of a string"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web/status", headers=JSON_PATCH,
                                      json=[{"op": "add", "path": "/status", "value": [1, 2]}]),
                 "status", "Invalid value: list: must be an object", id="a /status JSON patch of a list"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web/status", headers=MERGE, json={"status": 7}),
                 "status", "Invalid value: 7: must be an object", id="a /status merge patch of a number"),
    pytest.param(_put_status, "status", 'Invalid value: "broken": must be an object', id="a /status update"),
    pytest.param(lambda c, s: c.put(f"{DEPLOYS}/web", json={**s, "status": "broken"}),
                 "status", 'Invalid value: "broken": must be an object', id="an update with a string status"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web", headers=JSON_PATCH, json=[
        {"op": "replace", "path": "/spec/template/spec/containers/0", "value": None}]),
                 "spec.template.spec.containers[0]", "must be an object",
                 id="a JSON patch nulling a container"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web", headers=JSON_PATCH, json=[
        {"op": "remove", "path": "/spec/template/spec/containers/0/image"}]),
                 "spec.template.spec.containers[0].image", "Required value",
                 id="a JSON patch removing the image"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web", headers=MERGE, json={
        "spec": {"template": {"spec": {"containers": []}}}}),
                 "spec.template.spec.containers", "Required value", id="a merge patch emptying containers"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web", headers=STRATEGIC, json={
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": ""}]}}}}),
                 "spec.template.spec.containers[0].image", "Required value",
                 id="a strategic merge patch blanking the image"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web", headers=MERGE, json={
        "metadata": {"finalizers": ["bad finalizer"]}}),
                 "metadata.finalizers[0]", "name part must consist",
                 id="a merge patch adding a bad finalizer"),
    pytest.param(lambda c, s: c.patch(f"{DEPLOYS}/web?fieldManager=kubectl&force=true", headers=APPLY,
                                      json=deployment(containers=[{"name": 1, "image": "nginx"}])),
                 "spec.template.spec.containers[0].name", "must be a string",
                 id="a server-side apply of name: 1"),
]


@pytest.mark.parametrize(("write", "field", "says"), WRITES)
async def test_a_write_that_would_break_a_stored_deployment_changes_nothing(
        api: Api, write: Callable[[httpx.AsyncClient, dict[str, Any]], Awaitable[httpx.Response]],
        field: str, says: str) -> None:
    created = await api.http.post(DEPLOYS, json=deployment())
    assert created.status_code == 201, created.text
    observed = await api.http.patch(f"{DEPLOYS}/web/status", headers=MERGE, json={"status": {"replicas": 1}})
    assert observed.status_code == 200, observed.text
    stored = (await api.http.get(f"{DEPLOYS}/web")).json()
    refused(await write(api.http, stored), field, says)
    assert (await api.http.get(f"{DEPLOYS}/web")).json() == stored


async def test_every_kind_keeps_an_object_status_and_qualified_finalizers(api: Api) -> None:
    """Not only workloads: a ConfigMap (no status subresource) is held to the same rules."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "b"}}
    strict = {"fieldValidation": "Strict"}
    refused(await api.http.post(CONFIGMAPS, params=strict, json={**config, "status": "x"}),
            "status", "unknown field")  # a ConfigMap has no status at all
    refused(await api.http.post(CONFIGMAPS, json=with_meta(config, finalizers=["cleanup"])),
            "metadata.finalizers[0]", "name is neither a standard finalizer name nor is it fully qualified")
    created = await api.http.post(CONFIGMAPS, json=with_meta(config, finalizers=["example.com/cleanup"]))
    assert created.status_code == 201, created.text
