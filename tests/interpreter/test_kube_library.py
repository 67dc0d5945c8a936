"""The ``kube`` Lua library, called from scripts as Karmada's tests call it."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter.lua import LuaSandbox

from .conftest import FAST, FixedClock

TEMPLATE = {
    "spec": {
        "nodeSelector": {"foo": "foo1"},
        "tolerations": [{"key": "bar", "operator": "Exists"}],
        "containers": [
            {"resources": {"limits": {"cpu": "100m", "memory": "100M"}}},
            {"resources": {"limits": {"cpu": "1.2", "memory": "1.2G"}}},
        ],
    }
}


@pytest.fixture
def sandbox() -> LuaSandbox:
    return LuaSandbox(clock=FixedClock(), limits=FAST)


def run(sandbox: LuaSandbox, body: str, *args: Any) -> Any:
    script = 'local kube = require("kube")\nfunction F(...)\n' + body + "\nend"
    (value,) = sandbox.call(script, "F", list(args), results=1, name="kube-test")
    assert value.error is None, value.error
    return value.value


@pytest.mark.parametrize(
    ("args", "total"),
    [
        pytest.param('"100m", "1.2"', "1300m", id="milli plus a fraction"),
        pytest.param('"100M", "1.2G"', "1300M", id="mega plus giga"),
        pytest.param('nil, "1Gi"', "1Gi", id="nil counts as zero"),
        pytest.param('"1Gi", "1Gi", "1Gi"', "3Gi", id="any number of arguments"),
        pytest.param("", "0", id="no arguments sum to zero"),
    ],
)
def test_resource_add(sandbox: LuaSandbox, args: str, total: str) -> None:
    assert run(sandbox, f"return kube.resourceAdd({args})") == total


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param('"lots"', "cannot parse 'lots'", id="a string that is not a quantity"),
        pytest.param("1", "string expected, got number", id="a number"),
    ],
)
def test_resource_add_refuses_what_is_not_a_quantity(sandbox: LuaSandbox, args: str, message: str) -> None:
    with pytest.raises(errors.ScriptError, match=message):
        run(sandbox, f"local q = kube.resourceAdd({args})\nreturn q")


def test_accurate_pod_requirements(sandbox: LuaSandbox) -> None:
    assert run(sandbox, "local r = kube.accuratePodRequirements(...)\nreturn r", TEMPLATE) == {
        "nodeClaim": {"nodeSelector": {"foo": "foo1"}, "tolerations": [{"key": "bar", "operator": "Exists"}]},
        "resourceRequest": {"cpu": "1300m", "memory": "1300000000"},
    }


def test_accurate_pod_requirements_of_an_empty_template_are_nil(sandbox: LuaSandbox) -> None:
    assert run(sandbox, "return kube.accuratePodRequirements({}) == nil") is True


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param("kube.accuratePodRequirements()", "only accepts one argument", id="no argument"),
        pytest.param("kube.accuratePodRequirements({}, {})", "only accepts one argument", id="two arguments"),
        pytest.param("kube.accuratePodRequirements('x')", "table expected, got string", id="a string"),
        pytest.param(
            "kube.getPodDependencies({})", "only accepts two argument", id="dependencies without namespace"
        ),
        pytest.param("kube.getResourceQuantity('1', '2')", "only accepts one argument", id="two quantities"),
        pytest.param("kube.getResourceQuantity('-1')", "negative value", id="a negative quantity"),
    ],
)
def test_argument_checks(sandbox: LuaSandbox, call: str, message: str) -> None:
    with pytest.raises(errors.ScriptError, match=message):
        run(sandbox, f"local v = {call}\nreturn v")


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        pytest.param("test", "test", id="the given namespace"),
        pytest.param(None, "default", id="nil means the default namespace"),
        pytest.param(7, "7", id="a number is used as a string"),
    ],
)
def test_get_pod_dependencies(sandbox: LuaSandbox, namespace: Any, expected: str) -> None:
    template = {
        "spec": {"serviceAccountName": "test", "volumes": [{"name": "v", "configMap": {"name": "cm"}}]}
    }
    got = run(sandbox, "local t, ns = ...\nreturn kube.getPodDependencies(t, ns)", template, namespace)
    assert got == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": expected, "name": "cm"},
        {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": expected, "name": "test"},
    ]


@pytest.mark.parametrize(
    ("quantity", "value"),
    [
        pytest.param('"100m"', 0.1, id="milli"),
        pytest.param('"1Gi"', 1073741824, id="gibi"),
        pytest.param("nil", 0, id="nil is zero"),
    ],
)
def test_get_resource_quantity(sandbox: LuaSandbox, quantity: str, value: float) -> None:
    assert run(sandbox, f"return kube.getResourceQuantity({quantity})") == value
