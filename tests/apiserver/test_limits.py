"""The limits kube-apiserver has, request by request: the stored-object size on every write
path, nesting depth, JSON patch operations and writes, and numeric query parameters — each
refused with a 4xx Status that names the limit, nothing stored changing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from fleetkeeper.api.limits import MAX_DEPTH, MAX_OBJECT_BYTES, MAX_PATCH_BYTES, MAX_PATCH_OPERATIONS
from fleetkeeper.apiserver import InProcessTransport, build_app
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

from .helpers import Api

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
JSON = "application/json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
INT64_MAX = 2**63 - 1


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


def refused(response: httpx.Response, code: int, *words: str) -> str:
    """The message of a ``code`` Status that names every one of ``words``."""
    assert response.status_code == code, response.text[:300]
    status = response.json()
    assert (status["kind"], status["code"]) == ("Status", code)
    for word in words:
        assert word in status["message"], status["message"]
    return str(status["message"])


async def send(api: Api, method: str, path: str, body: bytes | str, content_type: str = JSON,
               **params: str) -> httpx.Response:
    return await api.http.request(method, path, content=body, headers={"Content-Type": content_type},
                                  params=params)


# --------------------------------------------------------------------------- object size

PAD = "x" * MAX_OBJECT_BYTES
PADDED_STATUS = {"conditions": [{"type": "Available", "status": "True", "message": PAD}]}


@pytest.mark.parametrize(("method", "path", "content_type", "body", "params"), [
    ("POST", CONFIGMAPS, JSON, configmap("big", pad=PAD), {}),
    ("POST", CONFIGMAPS, JSON, configmap("big", pad=PAD), {"dryRun": "All"}),
    ("PUT", f"{CONFIGMAPS}/c", JSON, configmap("c", pad=PAD), {}),
    ("PATCH", f"{CONFIGMAPS}/c", MERGE, {"data": {"pad": PAD}}, {}),
    ("PATCH", f"{CONFIGMAPS}/c", MERGE, {"data": {"pad": PAD}}, {"dryRun": "All"}),
    ("PATCH", f"{CONFIGMAPS}/c", STRATEGIC, {"data": {"pad": PAD}}, {}),
    ("PATCH", f"{CONFIGMAPS}/c", JSON_PATCH, [{"op": "add", "path": "/data/pad", "value": PAD[:-100]}], {}),
    ("PATCH", f"{CONFIGMAPS}/c", APPLY, configmap("c", pad=PAD), {"fieldManager": "me"}),
    ("PATCH", f"{CONFIGMAPS}/new", APPLY, configmap("new", pad=PAD), {"fieldManager": "me"}),
    ("PUT", f"{DEPLOYS}/d/status", JSON, {**deployment("d"), "status": PADDED_STATUS}, {}),
    ("PATCH", f"{DEPLOYS}/d/status", MERGE, {"status": PADDED_STATUS}, {}),
], ids=["create", "create dry run", "update", "merge patch", "merge patch dry run", "strategic patch",
        "json patch", "apply over an object", "apply creating one", "status update", "status patch"])
async def test_an_object_over_the_limit_is_refused_on_every_write_path(
    api: Api, method: str, path: str, content_type: str, body: Any, params: dict[str, str],
) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c", a="b"))).status_code == 201
    assert (await api.http.post(DEPLOYS, json=deployment("d"))).status_code == 201
    before = (await api.http.get(CONFIGMAPS)).json()["items"], (await api.http.get(f"{DEPLOYS}/d")).json()
    encoded = orjson.dumps(body)  # JSON is YAML too
    name = path.split("/")[-1] if method != "POST" else "big"
    name = "d" if name == "status" else name
    refused(await send(api, method, path, encoded, content_type, **params), 413,
            f'"{name}" is too large', str(MAX_OBJECT_BYTES))
    after = (await api.http.get(CONFIGMAPS)).json()["items"], (await api.http.get(f"{DEPLOYS}/d")).json()
    assert after == before


async def test_a_scale_write_that_takes_an_object_over_the_limit_is_refused(api: Api) -> None:
    created = (await api.http.post(DEPLOYS, json=deployment("web"))).json()
    pad = MAX_OBJECT_BYTES - len(orjson.dumps(created)) - 200
    for _ in range(2):  # the second step lands 60 bytes under the limit exactly
        created = (await api.http.patch(f"{DEPLOYS}/web", content=orjson.dumps(
            {"metadata": {"annotations": {"pad": "x" * pad}}}), headers={"Content-Type": MERGE})).json()
        pad += MAX_OBJECT_BYTES - 60 - len(orjson.dumps(created))
    assert len(orjson.dumps(created)) == MAX_OBJECT_BYTES - 60
    scaled = await api.http.patch(f"{DEPLOYS}/web/scale", params={"fieldManager": "a-new-manager"},
                                  content=b'{"spec":{"replicas":3}}', headers={"Content-Type": MERGE})
    refused(scaled, 413, '"web" is too large')
    assert (await api.http.get(f"{DEPLOYS}/web")).json() == created


# --------------------------------------------------------------------------- nesting


def nested(depth: int) -> Any:
    """A value nesting ``depth`` objects and arrays."""
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"n": value}
    return value


def deep_json(depth: int) -> str:
    """JSON text nesting ``depth`` arrays, written out (deeper than any encoder would write)."""
    return "[" * depth + "1" + "]" * depth


OBJECT_N = '{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"n"}},"x":{}}}'
OBJECT_C = '{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c"}},"x":{}}}'


@pytest.mark.parametrize(("method", "path", "content_type", "template", "params"), [
    ("POST", CONFIGMAPS, JSON, OBJECT_N, {}),
    ("POST", CONFIGMAPS, JSON, OBJECT_N, {"dryRun": "All"}),
    ("PUT", f"{CONFIGMAPS}/c", JSON, OBJECT_C, {}),
    ("PATCH", f"{CONFIGMAPS}/c", MERGE, '{{"x":{}}}', {}),
    ("PATCH", f"{CONFIGMAPS}/c", MERGE, '{{"x":{}}}', {"dryRun": "All"}),
    ("PATCH", f"{DEPLOYS}/d", STRATEGIC, '{{"spec":{{"x":{}}}}}', {}),
    ("PATCH", f"{CONFIGMAPS}/c", JSON_PATCH, '[{{"op":"add","path":"/x","value":{}}}]', {}),
    ("PATCH", f"{CONFIGMAPS}/c", APPLY, OBJECT_C, {"fieldManager": "me"}),
], ids=["create", "create dry run", "update", "merge patch", "merge patch dry run", "strategic patch",
        "json patch", "apply"])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 250, 1023, 5000], ids=lambda d: f"{d} deep")
async def test_json_nested_deeper_than_the_limit_is_refused_with_400(
    api: Api, method: str, path: str, content_type: str, template: str, params: dict[str, str], depth: int,
) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c", a="b"))).status_code == 201
    assert (await api.http.post(DEPLOYS, json=deployment("d"))).status_code == 201
    response = await send(api, method, path, template.format(deep_json(depth)), content_type, **params)
    refused(response, 400, f"more than {MAX_DEPTH} levels deep")


WORKS = "/apis/work.karmada.io/v1alpha1/namespaces/default/works"


def work(name: str, value: Any) -> dict[str, Any]:
    """A Work whose manifest holds ``value`` at the 6th level (a manifest is raw JSON)."""
    return {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": {"name": name},
            "spec": {"workload": {"manifests": [{"x": value}]}}}


async def test_an_object_nested_to_the_limit_is_stored(api: Api) -> None:
    body = work("deep", nested(MAX_DEPTH - 5))  # object, spec, workload, manifests, manifest, x
    created = await api.http.post(WORKS, json=body)
    assert created.status_code == 201, created.text[:300]
    assert created.json()["spec"] == body["spec"]
    patched = await api.http.patch(f"{WORKS}/deep", content=orjson.dumps(work("deep", nested(MAX_DEPTH - 5))),
                                   headers={"Content-Type": MERGE})
    assert patched.status_code == 200, patched.text[:300]


@pytest.mark.parametrize(("style", "depth"), [("flow", MAX_DEPTH), ("flow", 500), ("flow", 3000),
                                              ("block", MAX_DEPTH), ("block", 500)],
                         ids=["flow 100 deep", "flow 500 deep", "flow 3000 deep", "block 100 deep",
                              "block 500 deep"])
async def test_yaml_nested_deeper_than_the_limit_is_refused_with_400(api: Api, depth: int,
                                                                      style: str) -> None:
    if style == "flow":
        value = "[" * depth + "1" + "]" * depth
    else:
        value = "\n" + "".join("  " * i + "- \n" for i in range(1, depth)) + "  " * depth + "- 1"
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: y}}\nx: {value}\n"
    response = await send(api, "POST", CONFIGMAPS, body, "application/yaml")
    refused(response, 400, f"more than {MAX_DEPTH} levels")


async def test_yaml_aliases_that_expand_beyond_the_body_limit_are_refused(api: Api) -> None:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: laughs}", f"a: &a [{'x' * 1000!r}]"]
    lines += [f"{c}: &{c} [{', '.join(['*' + p] * 10)}]" for p, c in zip("abcdef", "bcdefg", strict=True)]
    refused(await send(api, "POST", CONFIGMAPS, "\n".join(lines), "application/yaml"), 413, "aliases")
    assert (await api.http.get(f"{CONFIGMAPS}/laughs")).status_code == 404


# --------------------------------------------------------------------------- JSON patch


async def test_a_json_patch_of_more_operations_than_the_limit_is_refused(api: Api) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c", a="b"))).status_code == 201
    ops = [{"op": "test", "path": "/data/a", "value": "b"}] * (MAX_PATCH_OPERATIONS + 1)
    refused(await send(api, "PATCH", f"{CONFIGMAPS}/c", orjson.dumps(ops), JSON_PATCH), 413,
            str(MAX_PATCH_OPERATIONS), str(MAX_PATCH_OPERATIONS + 1))
    ops = ops[:MAX_PATCH_OPERATIONS]
    assert (await send(api, "PATCH", f"{CONFIGMAPS}/c", orjson.dumps(ops), JSON_PATCH)).status_code == 200


async def test_a_json_patch_bomb_stops_at_the_write_budget_naming_the_operation(api: Api) -> None:
    before = (await api.http.post(CONFIGMAPS, json=configmap("c", a="b"))).json()
    ops: list[dict[str, Any]] = [{"op": "add", "path": "/x", "value": {"v": "x" * 256}}]
    ops += [{"op": "copy", "from": "/x", "path": f"/x/k{i}"} for i in range(40)]
    message = refused(await send(api, "PATCH", f"{CONFIGMAPS}/c", orjson.dumps(ops), JSON_PATCH), 413,
                      str(MAX_PATCH_BYTES), "(copy at '/x/k")
    index = int(message.split("json patch operation ")[1].split()[0])
    assert 10 <= index <= 14  # 256 bytes doubled: the budget is spent after a dozen copies
    assert (await api.http.get(f"{CONFIGMAPS}/c")).json() == before


async def test_copies_that_nest_a_document_past_the_depth_limit_are_refused(api: Api) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c", a="b"))).status_code == 201
    ops: list[dict[str, Any]] = [{"op": "add", "path": "/x", "value": {"v": 1}}]
    ops += [{"op": "copy", "from": "/x", "path": "/x/v"} for _ in range(MAX_DEPTH)]
    refused(await send(api, "PATCH", f"{CONFIGMAPS}/c", orjson.dumps(ops), JSON_PATCH), 422,
            f"more than {MAX_DEPTH} levels deep")


# --------------------------------------------------------------------------- query parameters


@pytest.fixture
async def sqlite_api(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    clock = SystemClock()
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}", clock=clock)
    app = build_app(store, clock=clock)
    async with httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://apiserver.test") as http:
        yield http
    app.close()
    await store.close()


async def test_a_page_size_up_to_the_largest_int64_lists_from_sqlite(sqlite_api: httpx.AsyncClient) -> None:
    for name in ("a", "b"):
        assert (await sqlite_api.post(CONFIGMAPS, json=configmap(name))).status_code == 201
    for limit in (INT64_MAX, 2**62, 1):
        page = await sqlite_api.get(CONFIGMAPS, params={"limit": str(limit)})
        assert page.status_code == 200, page.text
        assert len(page.json()["items"]) == min(limit, 2)


@pytest.mark.parametrize(("path", "name", "value", "rule"), [
    (CONFIGMAPS, "limit", str(INT64_MAX + 1), f"at most {INT64_MAX}"),
    (CONFIGMAPS, "limit", "9" * 400, f"at most {INT64_MAX}"),
    (CONFIGMAPS, "limit", "-1", "at least 0"),
    (CONFIGMAPS, "limit", "ten", "expected an integer"),
    (CONFIGMAPS, "limit", "1e3", "expected an integer"),
    (CONFIGMAPS, "limit", "١٢", "expected an integer"),
    (CONFIGMAPS, "watch=true&timeoutSeconds", str(INT64_MAX + 1), f"at most {INT64_MAX}"),
    (CONFIGMAPS, "watch=true&resourceVersion", "99999999999999999999999", f"at most {INT64_MAX}"),
    (f"{CONFIGMAPS}/c", "gracePeriodSeconds", str(INT64_MAX + 1), f"at most {INT64_MAX}"),
    (f"{CONFIGMAPS}/c", "gracePeriodSeconds", "-5", "at least 0"),
], ids=["limit beyond int64", "limit of 400 digits", "negative limit", "limit in words", "limit in exponent",
        "limit in other digits", "watch timeout beyond int64", "watch version beyond int64",
        "grace period beyond int64", "negative grace period"])
async def test_numeric_query_parameters_out_of_range_are_400_naming_the_parameter(
    api: Api, path: str, name: str, value: str, rule: str,
) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c"))).status_code == 201
    method = "DELETE" if name == "gracePeriodSeconds" else "GET"
    params = {"watch": "true"} if name.startswith("watch=true&") else {}
    name = name.removeprefix("watch=true&")
    refused(await api.http.request(method, path, params={**params, name: value}), 400, f"'{name}'", rule)
    assert (await api.http.get(f"{CONFIGMAPS}/c")).status_code == 200


@pytest.mark.parametrize("grace", [INT64_MAX + 1, -1, "5", True, 1.5],
                         ids=["beyond int64", "negative", "a string", "a boolean", "a fraction"])
async def test_a_grace_period_in_delete_options_must_be_an_int64(api: Api, grace: Any) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c"))).status_code == 201
    body = orjson.dumps({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace})
    refused(await send(api, "DELETE", f"{CONFIGMAPS}/c", body), 400, "gracePeriodSeconds")
    assert (await api.http.get(f"{CONFIGMAPS}/c")).status_code == 200


@pytest.mark.parametrize("token", [
    "eyJydiI6OTIyMzM3MjAzNjg1NDc3NTgwOCwic3RhcnQiOlsiZGVmYXVsdCIsImMiXX0=",  # rv 2**63
    "eyJydiI6LTEsInN0YXJ0IjpbImRlZmF1bHQiLCJjIl19",  # rv -1
    "eyJydiI6IjEiLCJzdGFydCI6NX0=",  # start not a pair
    "not base64 at all",
], ids=["a revision beyond int64", "a negative revision", "a start that is not a pair", "garbage"])
async def test_forged_continue_tokens_are_400(api: Api, token: str) -> None:
    assert (await api.http.post(CONFIGMAPS, json=configmap("c"))).status_code == 201
    refused(await api.http.get(CONFIGMAPS, params={"limit": "1", "continue": token}), 400, "continue token")
