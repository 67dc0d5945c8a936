"""The published schemas: Kubernetes' kinds described by Kubernetes' schemas, Karmada's in plain
sentences, and ``/openapi/v2`` as JSON and as the protobuf kubectl reads."""

from __future__ import annotations

import re
from typing import Any

import orjson

from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.apiserver.openapi import OpenAPI, plain_text
from fleetkeeper.apiserver.openapi_v2 import PROTOBUF, PROTOBUF_ANSWER

from .helpers import Api

REF = "#/components/schemas/"


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return doc["components"]["schemas"][ref.removeprefix(REF)] if ref else schema


def test_a_deployment_is_described_down_to_its_containers() -> None:
    doc = orjson.loads(OpenAPI(SCHEME).document("apps", "v1")[0])  # type: ignore[index]
    deployment = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "version": "v1", "kind": "Deployment"}]
    assert "x-kubernetes-preserve-unknown-fields" not in deployment
    spec = resolve(doc, deployment["properties"]["spec"])
    assert spec["properties"]["replicas"]["type"] == "integer"
    assert spec["properties"]["replicas"]["description"].startswith("Number of desired pods.")
    pod = resolve(doc, resolve(doc, spec["properties"]["template"])["properties"]["spec"])
    containers = pod["properties"]["containers"]
    assert containers["type"] == "array" and "name" in resolve(doc, containers["items"])["required"]
    meta = resolve(doc, deployment["properties"]["metadata"])
    assert meta["properties"]["labels"]["additionalProperties"] == {"type": "string"}
    strategy = resolve(doc, spec["properties"]["strategy"])
    surge = resolve(doc, strategy["properties"]["rollingUpdate"])["properties"]["maxSurge"]
    assert surge["x-kubernetes-int-or-string"] is True


def test_karmada_descriptions_are_plain_sentences() -> None:
    assert plain_text("Set ``spec.replicas`` of :class:`~fleetkeeper.api.policy.Placement`\n"
                      "and :attr:`the grace <a.b.grace>`.\n\nSee **this**.") == \
        "Set spec.replicas of Placement and the grace.\n\nSee this."
    for group in ("policy.karmada.io", "work.karmada.io", "cluster.karmada.io"):
        text = OpenAPI(SCHEME).document(group, "v1alpha1")[0].decode()  # type: ignore[index]
        assert "``" not in text and ":class:" not in text and ":attr:" not in text
    doc = orjson.loads(OpenAPI(SCHEME).document("policy.karmada.io", "v1alpha1")[0])  # type: ignore[index]
    placement = doc["components"]["schemas"]["io.karmada.policy.v1alpha1.Placement"]["properties"]
    own = placement["clusterAffinity"]["description"]  # the field's own, in place of its type's
    assert own.startswith("The member clusters the workload may be") and "A cluster filter" not in own
    assert placement["clusterAffinity"]["allOf"][0]["$ref"].endswith(".ClusterAffinity")
    assert placement["clusterAffinities"]["description"]
    # kubectl explain prints a field's description and then its type's: the type keeps none
    assert "description" not in doc["components"]["schemas"]["io.karmada.policy.v1alpha1.ClusterAffinity"]
    assert doc["components"]["schemas"]["io.karmada.policy.v1alpha1.PropagationPolicy"]["description"]


#: every Karmada kind the plane serves, by group-version
KARMADA_KINDS = {
    ("policy.karmada.io", "v1alpha1"): ("PropagationPolicy", "ClusterPropagationPolicy", "OverridePolicy",
                                        "ClusterOverridePolicy", "ClusterTaintPolicy"),
    ("work.karmada.io", "v1alpha2"): ("ResourceBinding", "ClusterResourceBinding"),
    ("work.karmada.io", "v1alpha1"): ("Work",),
    ("cluster.karmada.io", "v1alpha1"): ("Cluster",),
    ("remedy.karmada.io", "v1alpha1"): ("Remedy",),
    ("apps.karmada.io", "v1alpha1"): ("WorkloadRebalancer",),
    ("config.karmada.io", "v1alpha1"): ("ResourceInterpreterCustomization",),
    ("networking.karmada.io", "v1alpha1"): ("MultiClusterIngress",),
    ("fleetkeeper.io", "v1alpha1"): ("TimelineEntry",),
}
#: reST or Python markup: roles, literals, links, emphasis
MARKUP = re.compile(r"``|:[a-z]+:`|`[^`]*`_?|\*\*")


def _undescribed(doc: dict[str, Any], name: str, path: str, seen: set[str]) -> list[str]:
    """The properties of kind ``name`` past its type and metadata (at any depth) without a description
    or with markup, as paths; Kubernetes' own types (``io.k8s.``) and raw objects are not walked into."""
    if name in seen or name.startswith("io.k8s."):
        return []
    seen.add(name)
    out = []
    for field, sub in (doc["components"]["schemas"][name].get("properties") or {}).items():
        if not path and field in ("apiVersion", "kind", "metadata"):
            continue
        text = sub.get("description") or ""
        if not text.strip() or MARKUP.search(text):
            out.append(f"{path}{field}: {text!r}")
        for inner in (sub, sub.get("items") or {}, sub.get("additionalProperties") or {}):
            if not isinstance(inner, dict):
                continue
            ref = inner.get("$ref") or (inner.get("allOf") or [{}])[0].get("$ref")
            if ref:
                out += _undescribed(doc, ref.removeprefix(REF), f"{path}{field}.", seen)
    return out


def test_every_field_of_the_karmada_kinds_says_what_it_means() -> None:
    api = OpenAPI(SCHEME)
    for (group, version), kinds in KARMADA_KINDS.items():
        doc = orjson.loads(api.document(group, version)[0])  # type: ignore[index]
        prefix = ".".join(reversed(group.split("."))) + f".{version}."
        for kind in kinds:
            assert doc["components"]["schemas"][prefix + kind].get("description"), kind
            missing = _undescribed(doc, prefix + kind, "", set())
            assert not missing, f"{kind}: " + "; ".join(missing)


def _fields(data: bytes) -> list[tuple[int, bytes | int]]:
    """The top-level fields of a protobuf message (varints and length-delimited only)."""
    out: list[tuple[int, bytes | int]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        if key & 7 == 0:
            value, i = _varint(data, i)
            out.append((key >> 3, value))
        else:
            size, i = _varint(data, i)
            out.append((key >> 3, data[i:i + size]))
            i += size
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


async def test_openapi_v2_as_json_and_as_protobuf(api: Api) -> None:
    swagger = (await api.http.get("/openapi/v2")).json()
    assert swagger["swagger"] == "2.0"
    deployment = swagger["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
    assert "io.karmada.policy.v1alpha1.PropagationPolicy" in swagger["definitions"]
    answer = await api.http.get("/openapi/v2", headers={"Accept": PROTOBUF})
    assert answer.headers["content-type"] == PROTOBUF_ANSWER
    top = dict(_fields(answer.content))
    assert top[1] == b"2.0"
    names = {dict(_fields(entry))[1] for _, entry in _fields(top[9])}  # type: ignore[arg-type]
    assert {b"io.k8s.api.apps.v1.Deployment", b"io.karmada.policy.v1alpha1.PropagationPolicy"} <= names
    again = await api.http.get("/openapi/v2", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304
