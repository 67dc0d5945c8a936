"""What leaves the Lua sandbox is bounded: results over ``Limits.result_bytes`` (a whole object:
``Limits.object_bytes``) encoded as JSON are a ScriptError naming the limit, measured before the
host builds the Python value; values handed to the ``kube`` library and error messages too."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import Interpreter, Limits
from fleetkeeper.interpreter.lua import LuaSandbox

from .conftest import FAST, FixedClock

KIB = 1024
RESULT = Limits().result_bytes
OBJECT = Limits().object_bytes
#: a Lua function building a string of n bytes without string.rep (which the sandbox refuses)
BYTES = """
local function bytes(n)
  local parts = {}
  for i = 1, n // 64 do parts[i] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" end
  return table.concat(parts)
end
"""


def ric(customizations: dict[str, str], kind: str = "Widget") -> dict[str, Any]:
    return {
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "big"},
        "spec": {"target": {"apiVersion": "example.io/v1", "kind": kind},
                 "customizations": {field: {"luaScript": BYTES + script}
                                    for field, script in customizations.items()}},
    }


def widget(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "example.io/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"}, **fields}


def interpreter(**customizations: str) -> Interpreter:
    return Interpreter([ric(customizations)], clock=FixedClock(),
                       limits=Limits(instructions=50_000_000, memory=48 * KIB * KIB))


def test_the_limits_are_half_a_mebibyte_for_values_and_a_stored_object_for_objects() -> None:
    assert (RESULT, OBJECT) == (512 * KIB, 1536 * KIB)


@pytest.mark.parametrize(("size", "fits"), [
    pytest.param(RESULT - 64 * KIB, True, id="a status just under the limit is reflected"),
    pytest.param(RESULT + 64 * KIB, False, id="a status just over the limit is refused"),
])
def test_a_reflected_status_is_bounded(size: int, fits: bool) -> None:
    interp = interpreter(statusReflection=f"function ReflectStatus(o) return {{blob = bytes({size})}} end")
    if fits:
        assert len(interp.reflect_status(widget())["blob"]) == size
    else:
        with pytest.raises(errors.ScriptError, match=f"size limit of {RESULT} bytes"):
            interp.reflect_status(widget())


def test_a_status_repeating_one_string_is_refused_by_its_encoded_size_not_its_lua_size() -> None:
    # 64 references to one 16 KiB string: 1 KiB of Lua table, 1 MiB once encoded (or converted)
    interp = interpreter(statusReflection="""
        function ReflectStatus(o)
          local s, t = bytes(16 * 1024), {}
          for i = 1, 64 do t[i] = s end
          return {copies = t}
        end""")
    with pytest.raises(errors.ScriptError, match=r"big\.statusReflection: .*size limit of 524288 bytes"):
        interp.reflect_status(widget())


def test_a_whole_object_may_be_as_large_as_a_stored_object_but_no_larger() -> None:
    interp = interpreter(retention="""
        function Retain(desired, observed)
          desired.spec = {blob = bytes(desired.spec.size)}
          return desired
        end""")
    kept = interp.retain(widget(spec={"size": 1024 * KIB}), widget())
    assert len(kept["spec"]["blob"]) == 1024 * KIB
    with pytest.raises(errors.ScriptError, match=f"size limit of {OBJECT} bytes"):
        interp.retain(widget(spec={"size": 1600 * KIB}), widget())


def test_aggregated_dependencies_and_requirements_are_bounded_too() -> None:
    interp = interpreter(
        statusAggregation="""
            function AggregateStatus(o, items) o.status = {b = bytes(1600 * 1024)} return o end""",
        dependencyInterpretation="""
            function GetDependencies(o)
              local refs = {}
              for i = 1, 20000 do
                refs[i] = {apiVersion = "v1", kind = "ConfigMap", namespace = "default", name = "cm" .. i}
              end
              return refs
            end""",
        replicaResource="""
            function GetReplicas(o) return 1, {nodeClaim = {nodeSelector = {k = bytes(600 * 1024)}}} end""",
    )
    with pytest.raises(errors.ScriptError, match=f"size limit of {OBJECT} bytes"):
        interp.aggregate_status(widget(), [])
    with pytest.raises(errors.ScriptError, match=f"size limit of {RESULT} bytes"):
        interp.get_dependencies(widget())
    with pytest.raises(errors.ScriptError, match=f"size limit of {RESULT} bytes"):
        interp.get_replicas(widget())


def test_a_string_result_over_the_limit_fails_before_it_is_decoded() -> None:
    interp = interpreter(healthInterpretation="function InterpretHealth(o) return bytes(600 * 1024) end")
    with pytest.raises(errors.ScriptError, match=f"size limit of {RESULT} bytes"):
        interp.interpret_health(widget())


def test_a_value_handed_to_the_kube_library_is_bounded_by_the_object_limit() -> None:
    interp = interpreter(replicaResource="""
        function GetReplicas(o)
          local kube = require("kube")
          local template = {spec = {containers = {{name = "c", image = bytes(1600 * 1024)}}}}
          return 1, kube.accuratePodRequirements(template)
        end""")
    with pytest.raises(errors.ScriptError, match=f"size limit of {OBJECT} bytes"):
        interp.get_replicas(widget())


def test_a_huge_error_message_is_cut_at_a_character_boundary() -> None:
    sandbox = LuaSandbox(clock=FixedClock(), limits=FAST)
    script = BYTES + 'function F() error("é" .. bytes(1024 * 1024), 0) end'
    with pytest.raises(errors.ScriptError) as caught:
        sandbox.call(script, "F", [], results=1, name="test")
    message = str(caught.value)
    assert len(message.encode()) < 2 * KIB
    assert message.startswith("test: é0123") and message.endswith("more bytes)")
    cut = LuaSandbox(clock=FixedClock(), limits=Limits(message_bytes=2))
    with pytest.raises(errors.ScriptError, match=r"^test: a \.\.\. \(4 more bytes\)$"):  # not half an é
        cut.call('function F() error("aéé", 0) end', "F", [], results=1, name="test")
