"""The unknown-field checker of the kinds kept unstructured, on its own: what it reports and what
it lets through."""

from __future__ import annotations

from typing import Any

import orjson

from fleetkeeper.api.builtin import Deployment, Pod, Service
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.apiserver.fieldcheck import checker_for, compile_schema, duplicate_fields, format_path


def unknown(model: type, obj: dict[str, Any]) -> list[str]:
    info = SCHEME.lookup(model.API_VERSION, model.KIND)  # type: ignore[attr-defined]
    assert info is not None
    checker = checker_for(info)
    assert checker is not None
    return [format_path(p) for p in checker.unknown(obj)]


def test_unknown_fields_nested_in_lists_are_named_with_their_index() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "nmae": "x"},
           "spec": {"containers": [{"name": "a", "image": "i"},
                                   {"name": "b", "image": "i", "ports": [{"containerPort": 80, "prot": 1}]}],
                    "volumes": [{"name": "v", "emptyDir": {"medim": "Memory"}}]}}
    assert unknown(Pod, pod) == ["metadata.nmae", "spec.containers[1].ports[0].prot",
                                 "spec.volumes[0].emptyDir.medim"]


def test_maps_with_free_keys_and_int_or_string_pass() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "d", "labels": {"any/key": "v"}, "annotations": {"a.b/c": "{}"}},
                  "spec": {"selector": {"matchLabels": {"x": "y"}},
                           "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                           "template": {"spec": {"nodeSelector": {"zone": "a"}, "containers": [
                               {"name": "c", "image": "i",
                                "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": 2}},
                                "livenessProbe": {"httpGet": {"port": "http"}}}]}}}}
    assert unknown(Deployment, deployment) == []


def test_status_is_checked_like_the_rest() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "hostnme": "x"}]}, "phase": "x"}}
    assert unknown(Service, service) == ["status.loadBalancer.ingress[0].hostnme", "status.phase"]


def test_preserve_unknown_fields_keeps_what_is_not_declared_but_checks_what_is() -> None:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"size": {"type": "integer"},
                                "template": {"type": "object", "properties": {"image": {"type": "string"}}}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "object", "additionalProperties": {"type": "object",
                                                            "properties": {"on": {"type": "boolean"}}}}}}
    node = compile_schema(schema)
    obj = {"spec": {"size": 1, "anything": {"deep": 1}, "template": {"image": "i", "imagee": "j"}},
           "status": {"whatever": [1]}, "port": "http", "tags": {"a": {"on": True}, "b": {"of": False}},
           "extra": 1}
    assert [format_path(p) for p in node.unknown(obj)] == ["spec.template.imagee", "tags.b.of", "extra"]


def test_duplicate_keys_of_a_json_body() -> None:
    body = (b'{"spec": {"paused": true, "paused": false,'
            b' "containers": [{"name": "a", "image": "x", "name": "b"}]}}')
    assert duplicate_fields(body) == ["spec.paused", "spec.containers[0].name"]
    assert duplicate_fields(orjson.dumps({"spec": {"paused": True}})) == []
    assert duplicate_fields(b"spec: {a: 1, a: 2}") == []  # YAML is not looked at


def test_an_embedded_resource_has_its_own_metadata_checked() -> None:
    embedded = {"type": "object", "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True}
    schema = {"type": "object", "properties": {"template": embedded}}
    obj = {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "lables": {}},
                        "spec": {"anything": 1}}}
    assert [format_path(p) for p in compile_schema(schema).unknown(obj)] == ["template.metadata.lables"]
