"""Random requests never make the API server answer 5xx, and it stays ready.

Bodies of every content type (JSON, YAML, protobuf, garbage), patches of every type (JSON,
merge, strategic, apply), names, label and field selectors, numeric query parameters
(huge, negative, malformed), deep nesting, huge-ish strings and random content types, against
one in-process API server over SQLite (the store ``fleetkeeper up`` uses) per test — its
examples share the server, so objects and versions that earlier examples left behind are part
of the input. A 4xx must be a Kubernetes ``Status``; after each test ``/readyz`` answers.

Each test is bounded in examples (hypothesis' ``max_examples``) and the whole module runs
in well under a minute; watches are read for a moment and closed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fleetkeeper.api.limits import MAX_DEPTH
from fleetkeeper.api.scheme import SCHEME, ResourceInfo
from fleetkeeper.apiserver import InProcessTransport, Tokens, build_app
from fleetkeeper.apiserver.protobuf import MAGIC
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store

from .helpers import ADMIN, AGENT

PATHS = [
    "/apis/cluster.karmada.io/v1alpha1/clusters",
    "/apis/cluster.karmada.io/v1alpha1/clusters/m1",
    "/apis/cluster.karmada.io/v1alpha1/clusters/m1/status",
    "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies",
    "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies/pp",
    "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/rb",
    "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works/w",
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/c",
    "/apis/apps/v1/namespaces/default/deployments/d",
    "/apis/apps/v1/namespaces/default/deployments/d/status",
    "/apis/apps/v1/namespaces/default/deployments/d/scale",
]
PATCH_TYPES = ["application/merge-patch+json", "application/json-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
CONTENT_TYPES = [
    "application/json", "application/yaml", *PATCH_TYPES, "application/vnd.kubernetes.protobuf", "text/plain",
    "", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json;;", "*/*", "text/yaml",
    "application/yml", "multipart/form-data; boundary=x",
]
KINDS = [("cluster.karmada.io/v1alpha1", "Cluster"), ("policy.karmada.io/v1alpha1", "PropagationPolicy"),
         ("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("work.karmada.io/v1alpha2", "ResourceBinding"),
         ("work.karmada.io/v1alpha1", "Work"), ("autoscaling/v1", "Scale"), ("v1", "Nope")]

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=16)
#: strings from a few kilobytes to a few hundred (over the object limit with a few of them)
huge_strings = st.builds(lambda n, c: c * n, st.integers(1_000, 600_000), st.sampled_from("xé\u2603\"\\"))
names = st.sampled_from(["m1", "pp", "rb", "c", "d", "w", "", "UPPER", "a" * 300, "x/y", "..", "a.b", "-a"]) \
    | st.text(max_size=20)
metadata = st.fixed_dictionaries({}, optional={
    "name": names, "generateName": names, "namespace": st.sampled_from(["default", "other", "", "Bad NS"]),
    "labels": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3) | json_values,
    "annotations": st.dictionaries(st.text(max_size=8), st.text(max_size=8) | huge_strings, max_size=2),
    "resourceVersion": st.sampled_from(["", "1", "999", "abc", "99999999999999999999999", "-1"]),
    "finalizers": st.lists(st.text(max_size=8), max_size=2) | json_values,
    "uid": st.text(max_size=8), "creationTimestamp": st.text(max_size=8) | json_values,
    "managedFields": json_values, "ownerReferences": json_values,
})
objects = st.builds(
    lambda kind, meta, spec, status: {"apiVersion": kind[0], "kind": kind[1], "metadata": meta,
                                      **({"spec": spec} if spec is not None else {}),
                                      **({"status": status} if status is not None else {})},
    st.sampled_from(KINDS), metadata | json_values, json_values, json_values,
)
pointers = st.sampled_from(["", "/", "/spec", "/metadata/labels", "/spec/x/0", "/a~1b", "nope", "/data/-",
                            "/metadata/name", "/status", "/spec/replicas", "/metadata/labels/a", "/x/~2"])
json_patches = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]), "path": pointers},
    optional={"value": json_values, "from": pointers}), max_size=6)
#: strategic directives, so that patches reach the strategic merge's every branch
strategic = st.fixed_dictionaries({}, optional={
    "$patch": st.sampled_from(["replace", "merge", "delete", "bogus"]) | json_values,
    "$retainKeys": json_values, "$setElementOrder/containers": json_values,
    "$deleteFromPrimitiveList/finalizers": json_values,
    "spec": st.fixed_dictionaries({}, optional={"template": st.fixed_dictionaries({}, optional={
        "spec": st.fixed_dictionaries({}, optional={"containers": json_values})}), "replicas": json_values}),
    "metadata": metadata,
})


#: field names of the kinds served, so that random objects reach the checks of each kind
FIELDS = [
    "metadata", "spec", "status", "name", "namespace", "labels", "annotations", "template", "containers",
    "initContainers", "image", "replicas", "selector", "matchLabels", "matchExpressions", "key",
    "operator", "values", "ports", "containerPort", "protocol", "resources", "limits", "requests", "cpu",
    "memory", "env", "value", "valueFrom", "volumes", "volumeMounts", "placement", "clusterAffinity",
    "clusterNames", "resourceSelectors", "apiVersion", "kind", "overrideRules", "overriders",
    "plaintext", "path", "op", "targetCluster", "weight", "replicaScheduling", "syncMode", "apiEndpoint",
    "secretRef", "taints", "effect", "tolerations", "conditions", "type", "reason", "message",
    "schedule", "jobTemplate", "rules", "subjects", "roleRef", "verbs", "apiGroups", "customizations",
    "target", "luaScript", "retention", "workload", "manifests", "clusters", "finalizers",
    "ownerReferences", "uid", "data", "stringData", "clusterIP", "backend", "service", "number",
    "minAvailable", "maxUnavailable", "scaleTargetRef", "minReplicas", "maxReplicas", "metrics",
    "involvedObject", "count", "subject", "action", "component", "propagateDeps", "failover",
    "spreadConstraints", "staticWeightList", "dynamicWeight", "tolerationSeconds", "workloads",
    "decisionConditions", "clusterAffinities", "affinityName", "resource", "replicaRequirements",
    "gracefulEvictionTasks", "aggregatedStatus", "health", "applied", "manifestStatuses", "suspension",
]
kind_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6),
                                                               inner, max_size=4),
    max_leaves=24)
SERVED = [info for info in SCHEME.infos() if info.kind != "CustomResourceDefinition"]


def collection_of(info: ResourceInfo) -> str:
    root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    return f"{root}/namespaces/default/{info.plural}" if info.namespaced else f"{root}/{info.plural}"


def dump(value: Any) -> bytes:
    """JSON text of ``value`` (stdlib: integers beyond 64 bits are part of the input space)."""
    return json.dumps(value).encode()


def nested_text(depth: int, style: str) -> str:
    """JSON (also YAML flow) or YAML block text nesting ``depth`` collections."""
    if style == "objects":
        return '{"a":' * depth + "1" + "}" * depth
    if style == "arrays":
        return "[" * depth + "1" + "]" * depth
    return "\n".join("  " * i + "a:" for i in range(depth)) + " 1"


depths = st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 3) | st.integers(90, 1100)
deep_bodies = st.builds(
    lambda depth, style, wrap: (wrap.replace("@", nested_text(depth, style)) if style != "block"
                                else nested_text(depth, style)).encode(),
    depths, st.sampled_from(["objects", "arrays", "block"]),
    st.sampled_from(["@", '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"x":@}',
                     '{"spec":@}', '[{"op":"add","path":"/x","value":@}]', '{"metadata":{"labels":@}}']))
#: merge-patch-shaped bodies, so some patches reach admission and the store
plausible = st.fixed_dictionaries({}, optional={
    "metadata": metadata, "spec": json_values, "status": json_values, "data": json_values})
protobuf_bodies = st.binary(max_size=64).map(lambda raw: MAGIC + raw) | st.binary(max_size=32)
bodies = (plausible.map(dump) | objects.map(dump) | json_values.map(dump) | json_patches.map(dump)
          | strategic.map(dump) | deep_bodies | protobuf_bodies | st.text(max_size=64).map(str.encode)
          | st.builds(lambda s: dump({"metadata": {"name": "c"}, "data": {"big": s}}), huge_strings))

label_keys = st.sampled_from(["app", "a.b/c", "example.com/x", "", "x" * 70, "-bad", "a/b/c", "tier"])
label_values = st.sampled_from(["web", "", "x" * 70, "a b", "(", ")", "a,b"]) | st.text(max_size=6)
label_requirement = st.one_of(
    st.builds(lambda k, op, v: f"{k}{op}{v}", label_keys, st.sampled_from(["=", "==", "!=", "=!", "==="]),
              label_values),
    st.builds(lambda k, op, vs: f"{k} {op} ({','.join(vs)})", label_keys,
              st.sampled_from(["in", "notin", "In"]), st.lists(label_values, max_size=3)),
    st.builds(lambda bang, k: f"{bang}{k}", st.sampled_from(["", "!", "!!"]), label_keys),
)
label_selectors = st.lists(label_requirement, max_size=3).map(",".join) | st.text(max_size=16)
field_keys = st.sampled_from(["metadata.name", "metadata.namespace", "spec.x", "status.phase", "",
                              "spec.syncMode", "involvedObject.name", "metadata.labels"])
field_selectors = st.lists(st.builds(lambda k, op, v: f"{k}{op}{v}", field_keys,
                                     st.sampled_from(["=", "==", "!=", "<", " in "]), label_values),
                           max_size=3).map(",".join) | st.text(max_size=16)
numbers = (st.integers(min_value=-(2**70), max_value=2**70).map(str)
           | st.sampled_from(["", "-0", "+1", "1e3", "0x10", " 1", "1 ", "\uff19", "\u0661", "9" * 30,
                              "9223372036854775807", "9223372036854775808", "-9223372036854775809"])
           | st.text(max_size=5))
continue_tokens = st.builds(lambda v: base64.urlsafe_b64encode(dump(v)).decode(),
                            st.fixed_dictionaries({"rv": json_values | st.integers(-(2**70), 2**70),
                                                   "start": json_values})) | st.text(max_size=12)
queries: st.SearchStrategy[dict[str, str]] = st.just({}) | st.dictionaries(
    st.sampled_from(["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "dryRun",
                     "fieldManager", "fieldValidation", "force", "includeObject", "timeoutSeconds",
                     "propagationPolicy", "gracePeriodSeconds", "orphanDependents", "resourceVersionMatch",
                     "sendInitialEvents", "allowWatchBookmarks"]),
    st.text(max_size=12) | st.sampled_from(["true", "All", "Strict", "Warn", "1", "-1", "a=b", "a in (b"])
    | numbers, max_size=4)
numeric_queries = st.dictionaries(
    st.sampled_from(["limit", "timeoutSeconds", "gracePeriodSeconds", "resourceVersion"]), numbers,
    min_size=1, max_size=3)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])

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
    ("/api/v1/namespaces",
     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karmada-es-member1"}}),
    ("/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works",
     {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": {"name": "w"},
      "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": "x", "namespace": "default"}}]}}}),
    ("/api/v1/namespaces/default/configmaps",
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}),
    ("/apis/apps/v1/namespaces/default/deployments",
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"app": "d"}},
      "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
               "template": {"metadata": {"labels": {"app": "d"}},
                            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}),
]
ITEMS = [p for p in PATHS if p.rsplit("/", 1)[-1] in ("m1", "pp", "rb", "c", "d", "w", "status", "scale")]
COLLECTIONS = [p for p in PATHS if p not in ITEMS]


class Server:
    """One API server over SQLite, with its own event loop, shared by a test's examples."""

    def __init__(self, directory: Path) -> None:
        self.loop = asyncio.new_event_loop()
        clock = SystemClock()
        self.store: Store = open_store(f"sqlite:///{directory / 'state.db'}", clock=clock)
        tokens = Tokens(admin=ADMIN)
        tokens.add_agent("member1", AGENT)
        self.app = build_app(self.store, clock=clock, tokens=tokens)
        transport = InProcessTransport(self.app)
        self.admin = httpx.AsyncClient(transport=transport, base_url="http://apiserver.test",
                                       headers={"Authorization": f"Bearer {ADMIN}"})
        self.agent = httpx.AsyncClient(transport=transport, base_url="http://apiserver.test",
                                       headers={"Authorization": f"Bearer {AGENT}"})

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        for client in (self.admin, self.agent):
            self.run(client.aclose())
        self.app.close()
        self.run(self.store.close())
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        self.run(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    opened = Server(tmp_path)
    try:
        yield opened
        ready = call(opened, "GET", "/readyz")
        assert (ready.status, ready.content) == (200, b"ok"), "the server is not ready after the fuzzing"
    finally:
        opened.close()


def reseed(server: Server) -> None:
    """Recreate the seed objects earlier examples deleted (409 for the ones still there)."""
    for path, obj in SEEDS:
        server.run(server.admin.post(path, content=dump(obj)))


@dataclass(frozen=True)
class Reply:
    status: int
    #: the body; of a watch, what it streamed in its first moment
    content: bytes


def call(server: Server, method: str, path: str, *, body: bytes = b"", content_type: str | None = "",
         params: dict[str, Any] | None = None, agent: bool = False, accept: str = "") -> Reply:
    headers = {"Content-Type": content_type} if content_type else {}
    if accept:
        headers["Accept"] = accept
    client = server.agent if agent else server.admin
    watch = (params or {}).get("watch") == "true"

    async def send() -> Reply:
        request = client.stream(method, path, content=body or None, headers=headers, params=params)
        async with request as response:
            if response.status_code == 200 and watch:
                return Reply(200, await _some_events(response))  # a watch streams until closed
            return Reply(response.status_code, await response.aread())

    return server.run(send())  # type: ignore[no-any-return]


async def _some_events(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(0.05):
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
    return b"".join(chunks)


def assert_client_error_at_worst(reply: Reply) -> None:
    assert reply.status < 500, reply.content[:2000]
    if reply.status >= 400:
        status = orjson.loads(reply.content)
        assert status["kind"] == "Status" and status["code"] == reply.status
    elif b'"type":"ERROR"' in reply.content:  # a watch tells its errors in the stream
        for line in reply.content.splitlines():
            with contextlib.suppress(orjson.JSONDecodeError):  # the moment may end mid-line
                event = orjson.loads(line)
                if event["type"] == "ERROR":
                    assert event["object"]["code"] < 500, line


@FUZZ
@given(path=st.sampled_from(ITEMS), content_type=st.sampled_from(PATCH_TYPES), body=bodies, params=queries,
       agent=st.booleans())
def test_random_patches_never_fail_the_server(server: Server, path: str, content_type: str, body: bytes,
                                              params: dict[str, str], agent: bool) -> None:
    reseed(server)
    response = call(server, "PATCH", path, body=body, content_type=content_type, params=params, agent=agent)
    assert_client_error_at_worst(response)


@FUZZ
@given(method=st.sampled_from(["POST", "PUT", "DELETE"]), item=st.sampled_from(ITEMS),
       collection=st.sampled_from(COLLECTIONS),
       content_type=st.sampled_from(CONTENT_TYPES) | st.text(max_size=20), body=bodies, params=queries,
       agent=st.booleans())
def test_random_writes_never_fail_the_server(server: Server, method: str, item: str, collection: str,
                                             content_type: str, body: bytes, params: dict[str, str],
                                             agent: bool) -> None:
    reseed(server)
    path = collection if method == "POST" else item
    with contextlib.suppress(httpx.InvalidURL, UnicodeEncodeError):  # a header httpx itself refuses to send
        assert_client_error_at_worst(call(server, method, path, body=body, content_type=content_type,
                                          params=params, agent=agent))


@FUZZ
@given(path=st.sampled_from(PATHS), params=queries, table=st.booleans(), watch=st.booleans(),
       agent=st.booleans())
def test_random_reads_and_watches_never_fail_the_server(server: Server, path: str, params: dict[str, str],
                                                        table: bool, watch: bool, agent: bool) -> None:
    if watch:
        params = {**params, "watch": "true"}
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io" if table else ""
    assert_client_error_at_worst(call(server, "GET", path, params=params, accept=accept, agent=agent))


@FUZZ
@given(obj=objects)
def test_valid_looking_objects_are_stored_or_refused_cleanly(server: Server, obj: dict[str, Any]) -> None:
    path = "/api/v1/namespaces/default/configmaps" if obj["kind"] == "ConfigMap" else PATHS[0]
    assert_client_error_at_worst(call(server, "POST", path, body=dump(obj), content_type="application/json"))


@FUZZ
@given(name=names | st.text(min_size=1, max_size=40),
       method=st.sampled_from(["GET", "PUT", "PATCH", "DELETE"]), collection=st.sampled_from(COLLECTIONS),
       sub=st.sampled_from(["", "/status", "/scale", "/x", "/status/x"]))
def test_random_names_in_paths_and_bodies_never_fail_the_server(server: Server, name: str, method: str,
                                                                collection: str, sub: str) -> None:
    kind = next(obj for path, obj in SEEDS if path == collection) if collection in dict(SEEDS) else {}
    body = dump({**kind, "metadata": {"name": name}})
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    assert_client_error_at_worst(call(server, "POST", collection, body=body, content_type="application/json"))
    path = f"{collection}/{urllib.parse.quote(name, safe='/')}{sub}"
    assert_client_error_at_worst(call(server, method, path, body=body, content_type=content_type))


@FUZZ
@given(path=st.sampled_from(COLLECTIONS), labels=label_selectors, fields=field_selectors,
       verb=st.sampled_from(["list", "watch", "deletecollection"]), agent=st.booleans())
def test_random_selectors_never_fail_the_server(server: Server, path: str, labels: str, fields: str,
                                                verb: str, agent: bool) -> None:
    reseed(server)
    params = {"labelSelector": labels, "fieldSelector": fields}
    if verb == "watch":
        params["watch"] = "true"
    method = "DELETE" if verb == "deletecollection" else "GET"
    assert_client_error_at_worst(call(server, method, path, params=params, agent=agent))


@FUZZ
@given(path=st.sampled_from(PATHS), params=numeric_queries,
       method=st.sampled_from(["GET", "DELETE", "WATCH"]), token=continue_tokens)
def test_numeric_query_parameters_and_continue_tokens_never_fail_the_server(
    server: Server, path: str, params: dict[str, str], method: str, token: str,
) -> None:
    reseed(server)
    if method == "WATCH":
        params = {**params, "watch": "true"}
    if path in COLLECTIONS and method == "GET":
        params = {**params, "continue": token}
    assert_client_error_at_worst(call(server, "GET" if method == "WATCH" else method, path, params=params))


@settings(FUZZ, max_examples=80)
@given(body=deep_bodies, method=st.sampled_from(["POST", "PUT", "PATCH"]),
       content_type=st.sampled_from(["application/json", "application/yaml", *PATCH_TYPES]),
       dry_run=st.booleans())
def test_deep_nesting_is_refused_cleanly_on_every_write(server: Server, body: bytes, method: str,
                                                        content_type: str, dry_run: bool) -> None:
    reseed(server)
    path = "/api/v1/namespaces/default/configmaps" + ("/c" if method != "POST" else "")
    if method == "PATCH" and content_type == "application/strategic-merge-patch+json":
        path = "/apis/apps/v1/namespaces/default/deployments/d"  # merged with merge keys
    response = call(server, method, path, body=body, content_type=content_type,
                    params={"dryRun": "All"} if dry_run else None)
    assert_client_error_at_worst(response)


@FUZZ
@given(info=st.sampled_from(SERVED), spec=kind_values, status=kind_values, extra=kind_values,
       then=st.sampled_from(["PUT", "PATCH", "STATUS", "DELETE"]), patch=kind_values)
def test_random_objects_of_every_kind_never_fail_the_server(server: Server, info: ResourceInfo, spec: Any,
                                                            status: Any, extra: Any, then: str,
                                                            patch: Any) -> None:
    obj = {"apiVersion": info.api_version, "kind": info.kind, "metadata": {"name": "fuzzed"}, "spec": spec,
           "status": status, **(extra if isinstance(extra, dict) else {})}
    collection = collection_of(info)
    created = call(server, "POST", collection, body=dump(obj), content_type="application/json")
    assert_client_error_at_worst(created)
    item = f"{collection}/fuzzed"
    if then == "PUT":
        reply = call(server, "PUT", item, body=dump({**obj, "spec": patch}), content_type="application/json")
    elif then == "STATUS":
        reply = call(server, "PATCH", f"{item}/status", body=dump({"status": patch}),
                     content_type="application/merge-patch+json")
    elif then == "PATCH":
        reply = call(server, "PATCH", item, body=dump({"spec": patch}),
                     content_type="application/strategic-merge-patch+json")
    else:
        reply = call(server, "DELETE", item)
    assert_client_error_at_worst(reply)
    call(server, "DELETE", item)
