"""Random bodies, content types and query parameters never make the API server answer 5xx.

Each test keeps one in-process API server (and its event loop) for all of hypothesis'
examples, so state built by earlier examples (objects, versions) is part of the input.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import Api, close_api, open_api

PATHS = [
    "/apis/cluster.karmada.io/v1alpha1/clusters",
    "/apis/cluster.karmada.io/v1alpha1/clusters/m1",
    "/apis/cluster.karmada.io/v1alpha1/clusters/m1/status",
    "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies",
    "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies/pp",
    "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/rb",
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/c",
    "/apis/apps/v1/namespaces/default/deployments/d",
]
CONTENT_TYPES = [
    "application/json", "application/yaml", "application/merge-patch+json", "application/json-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain", "",
]
KINDS = [("cluster.karmada.io/v1alpha1", "Cluster"), ("policy.karmada.io/v1alpha1", "PropagationPolicy"),
         ("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("work.karmada.io/v1alpha2", "ResourceBinding"),
         ("v1", "Nope")]

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=16)
names = st.sampled_from(["m1", "pp", "rb", "c", "d", "", "UPPER", "a" * 300, "x/y"])
metadata = st.fixed_dictionaries({}, optional={
    "name": names, "namespace": st.sampled_from(["default", "other", "", "Bad NS"]),
    "labels": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3) | json_values,
    "resourceVersion": st.sampled_from(["", "1", "999", "abc"]),
    "finalizers": st.lists(st.text(max_size=8), max_size=2) | json_values,
})
objects = st.builds(
    lambda kind, meta, spec, status: {"apiVersion": kind[0], "kind": kind[1], "metadata": meta,
                                      **({"spec": spec} if spec is not None else {}),
                                      **({"status": status} if status is not None else {})},
    st.sampled_from(KINDS), metadata | json_values, json_values, json_values,
)
json_patches = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
     "path": st.sampled_from(["", "/", "/spec", "/metadata/labels", "/spec/x/0", "/a~1b", "nope"])},
    optional={"value": json_values, "from": st.sampled_from(["/spec", "/metadata", "x"])}), max_size=4)


def dump(value: Any) -> bytes:
    """JSON text of ``value`` (stdlib: integers beyond 64 bits are part of the input space)."""
    return json.dumps(value).encode()


#: merge-patch-shaped bodies, so some patches reach admission and the store
plausible = st.fixed_dictionaries({}, optional={
    "metadata": metadata, "spec": json_values, "status": json_values, "data": json_values})
bodies = (plausible.map(dump) | objects.map(dump) | json_values.map(dump) | json_patches.map(dump)
          | st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
queries: st.SearchStrategy[dict[str, str]] = st.just({}) | st.dictionaries(
    st.sampled_from(["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "dryRun",
                     "fieldManager", "fieldValidation", "force", "includeObject", "timeoutSeconds",
                     "propagationPolicy", "gracePeriodSeconds"]),
    st.text(max_size=12) | st.sampled_from(["true", "All", "Strict", "Warn", "1", "-1", "a=b", "a in (b"]),
    max_size=4)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


SEEDS = [
    ("/apis/cluster.karmada.io/v1alpha1/clusters",
     {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"},
      "spec": {"syncMode": "Push"}}),
    ("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies",
     {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy", "metadata": {"name": "pp"},
      "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}]}}),
    ("/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings",
     {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "metadata": {"name": "rb"},
      "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}}),
    ("/api/v1/namespaces/default/configmaps",
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}),
    ("/apis/apps/v1/namespaces/default/deployments",
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}),
]
ITEMS = [p for p in PATHS if p.rsplit("/", 1)[-1] in ("m1", "pp", "rb", "c", "d", "status")]
COLLECTIONS = [p for p in PATHS if p not in ITEMS]


@pytest.fixture
def server() -> Iterator[tuple[asyncio.AbstractEventLoop, Api]]:
    loop = asyncio.new_event_loop()
    api = loop.run_until_complete(open_api())
    try:
        yield loop, api
    finally:
        loop.run_until_complete(close_api(api))
        loop.close()


def reseed(server: tuple[asyncio.AbstractEventLoop, Api]) -> None:
    """Recreate the seed objects earlier examples deleted (409 for the ones still there)."""
    loop, api = server
    for path, obj in SEEDS:
        loop.run_until_complete(api.http.post(path, content=dump(obj)))


def call(server: tuple[asyncio.AbstractEventLoop, Api], method: str, path: str, *, body: bytes = b"",
         content_type: str = "", params: dict[str, Any] | None = None) -> httpx.Response:
    loop, api = server
    headers = {"Content-Type": content_type} if content_type else {}
    return loop.run_until_complete(
        api.http.request(method, path, content=body or None, headers=headers, params=params))


def assert_client_error_at_worst(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        status = response.json()
        assert status["kind"] == "Status" and status["code"] == response.status_code


@FUZZ
@given(path=st.sampled_from(ITEMS), content_type=st.sampled_from(CONTENT_TYPES[2:6]), body=bodies,
       params=queries)
def test_random_patches_never_fail_the_server(server: tuple[asyncio.AbstractEventLoop, Api], path: str,
                                              content_type: str, body: bytes, params: dict[str, str]) -> None:
    reseed(server)
    response = call(server, "PATCH", path, body=body, content_type=content_type, params=params)
    assert_client_error_at_worst(response)


@FUZZ
@given(method=st.sampled_from(["POST", "PUT", "DELETE"]), item=st.sampled_from(ITEMS),
       collection=st.sampled_from(COLLECTIONS), content_type=st.sampled_from(CONTENT_TYPES), body=bodies,
       params=queries)
def test_random_writes_never_fail_the_server(server: tuple[asyncio.AbstractEventLoop, Api], method: str,
                                             item: str, collection: str, content_type: str, body: bytes,
                                             params: dict[str, str]) -> None:
    reseed(server)
    path = collection if method == "POST" else item
    response = call(server, method, path, body=body, content_type=content_type, params=params)
    assert_client_error_at_worst(response)


@FUZZ
@given(path=st.sampled_from(PATHS), params=queries, table=st.booleans())
def test_random_reads_never_fail_the_server(server: tuple[asyncio.AbstractEventLoop, Api], path: str,
                                            params: dict[str, str], table: bool) -> None:
    params.pop("watch", None)
    loop, api = server
    headers = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"} if table else {}
    response = loop.run_until_complete(api.http.get(path, params=params, headers=headers))
    assert_client_error_at_worst(response)


@FUZZ
@given(obj=objects)
def test_valid_looking_objects_are_stored_or_refused_cleanly(server: tuple[asyncio.AbstractEventLoop, Api],
                                                             obj: dict[str, Any]) -> None:
    path = "/api/v1/namespaces/default/configmaps" if obj["kind"] == "ConfigMap" else PATHS[0]
    assert_client_error_at_worst(call(server, "POST", path, body=dump(obj),
                                      content_type="application/json"))
