"""Kubernetes JSONPath as Karmada evaluates it (Karmada's ``Test_parseJSONValue`` vectors first)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fleetkeeper.api.jsonpath import JSONPathError, evaluate, go_float, go_json, parse

# Karmada's test document: a DeploymentList with two Deployments (keys already sorted, as Go prints them)
DEPLOYMENTS = json.dumps({
    "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
    "items": [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"creationTimestamp": "2024-11-27T07:59:13Z", "generation": 2,
                      "labels": {"app": "nginx"}, "name": name, "namespace": "default",
                      "resourceVersion": version},
         "spec": {"replicas": 2}, "status": {"availableReplicas": 2, "readyReplicas": 2, "replicas": 2}}
        for name, version in (("nginx-01", "1148"), ("nginx-02", "1149"))
    ],
}, sort_keys=True, separators=(",", ":"))
LIST: Any = json.loads(DEPLOYMENTS)


@pytest.mark.parametrize(("template", "document", "expected"), [
    pytest.param("{ .replicas }", {"replicas": 2}, "2", id="a status number prints as Go prints a float64"),
    pytest.param("{ @ }", LIST, DEPLOYMENTS, id="the current object prints as compact sorted JSON"),
    pytest.param("{ ['kind'] }", LIST, "List", id="the child operator reads a key"),
    pytest.param("{ ..resourceVersion }", LIST, "1148 1149", id="recursive descent finds every value"),
    pytest.param("{ .items[*].metadata.name }", LIST, "nginx-01 nginx-02", id="a wildcard yields every item"),
    pytest.param("{ .items[0].metadata.name }", LIST, "nginx-01", id="a subscript picks one item"),
    pytest.param('{ .items[?(@.metadata.name=="nginx-01")].metadata.name }', LIST, "nginx-01",
                 id="a filter keeps the matching items"),
    pytest.param("{range .items[*]}[{.metadata.name}, {.metadata.namespace}] {end}", LIST,
                 "[nginx-01, default] [nginx-02, default]", id="range iterates with literal text around"),
])
def test_karmada_vectors(template: str, document: Any, expected: str) -> None:
    # Karmada's test trims surrounding spaces before comparing; so does this one
    assert evaluate(template, document).strip(" ") == expected


@pytest.mark.parametrize(("template", "document", "expected"), [
    pytest.param("{.jobId}", {"jobId": "job-member1"}, "job-member1", id="a string prints raw"),
    pytest.param("{.healthy}", {"healthy": True}, "true", id="a boolean prints as true"),
    pytest.param("{.checkpoint}", {"checkpoint": 1734462491693}, "1.734462491693e+12",
                 id="a large integer prints in exponent form like Karmada"),
    pytest.param("{.missing}", {"missing": None}, "<nil>", id="null prints as Go's nil"),
    pytest.param("{.items[-1:].metadata.name}", LIST, "nginx-02", id="a negative slice counts from the end"),
    pytest.param("{.items[0,1].metadata.name}", LIST, "nginx-01 nginx-02", id="a union yields both"),
    pytest.param("{.items[0:2:2].metadata.name}", LIST, "nginx-01", id="a slice step skips items"),
    pytest.param("{.items[*].status}", LIST,
                 '{"availableReplicas":2,"readyReplicas":2,"replicas":2} '
                 '{"availableReplicas":2,"readyReplicas":2,"replicas":2}', id="objects print as JSON"),
    pytest.param("job={.jobId}!", {"jobId": "a"}, "job=a!", id="literal text is kept around an action"),
    pytest.param("{.a.b\\.c}", {"a": {"b.c": "dotted"}}, "dotted", id="an escaped dot is part of the key"),
    pytest.param("{.items[?(@.spec)].metadata.name}", LIST, "nginx-01 nginx-02",
                 id="an existence filter keeps items that have the field"),
    pytest.param('{"text"}', {}, "text", id="a quoted literal prints itself"),
    pytest.param("{.items[0:0]}", LIST, "", id="an empty slice prints nothing"),
    pytest.param("{.html}", {"html": {"a": "<&>"}}, '{"a":"\\u003c\\u0026\\u003e"}',
                 id="JSON output escapes HTML characters as Go does"),
])
def test_evaluation(template: str, document: Any, expected: str) -> None:
    assert evaluate(template, document) == expected


@pytest.mark.parametrize(("template", "document", "message"), [
    pytest.param("{ .replicas }", {"readyReplicas": 2}, "replicas is not found",
                 id="a missing key is an error"),
    pytest.param("{.items[5]}", LIST, "array index out of bounds", id="an index out of range is an error"),
    pytest.param("{.kind[0]}", LIST, "is not array or slice", id="indexing a string is an error"),
    pytest.param("{.items[?(@.spec.replicas==2)]}", LIST, "incompatible types",
                 id="comparing a float64 status number with an integer literal is Go's error too"),
    pytest.param("{end}", {}, "not in range", id="end without range is an error"),
])
def test_evaluation_errors(template: str, document: Any, message: str) -> None:
    with pytest.raises(JSONPathError, match=message):
        evaluate(template, document)


@pytest.mark.parametrize(("template", "message"), [
    pytest.param("{ %replicas }", "unrecognized character in action: U\\+0025", id="an unknown character"),
    pytest.param("{.replicas", "unclosed action", id="an action without its brace"),
    pytest.param("{.items[0}", "unterminated array", id="an array without its bracket"),
    pytest.param("{.items[x]}", "invalid array index x", id="an index that is not a number"),
    pytest.param("{....a}", "invalid multiple recursive descent", id="two recursive descents in a row"),
    pytest.param("{'abc}", "unterminated quoted string", id="a quote without its end"),
])
def test_parse_errors(template: str, message: str) -> None:
    with pytest.raises(JSONPathError, match=message):
        parse(template)


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param(2.0, "2", id="an integral float has no decimals"),
    pytest.param(1.5, "1.5", id="a fraction keeps its digits"),
    pytest.param(123456.0, "123456", id="six digits stay plain"),
    pytest.param(1000000.0, "1e+06", id="a million switches to exponent form"),
    pytest.param(1734462491693.0, "1.734462491693e+12", id="a timestamp in milliseconds"),
    pytest.param(0.0001, "0.0001", id="small values down to 1e-4 stay plain"),
    pytest.param(0.00001, "1e-05", id="below 1e-4 the exponent shows two digits"),
    pytest.param(-2.5, "-2.5", id="negative numbers keep their sign"),
    pytest.param(0.0, "0", id="zero"),
])
def test_go_float_formatting(value: float, expected: str) -> None:
    assert go_float(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param({"b": 1, "a": [True, None, "x"]}, '{"a":[true,null,"x"],"b":1}', id="sorted compact JSON"),
    pytest.param(1e21, "1e+21", id="JSON numbers switch to exponent form at 1e21"),
    pytest.param(1734462491693, "1734462491693", id="JSON keeps large integers plain"),
    pytest.param(1e-7, "1e-7", id="tiny JSON numbers drop the exponent's leading zero"),
])
def test_go_json(value: Any, expected: str) -> None:
    assert go_json(value) == expected
