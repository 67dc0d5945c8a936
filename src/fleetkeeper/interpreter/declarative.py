"""Customization scripts per operation: Karmada's calling and result conventions (spec B.4.3).

Each operation calls one global Lua function and checks what comes back exactly as Karmada's
``luavm`` does, so a script that works (or fails) there works (or fails) here:

=====================  =========================================  =========================================
operation              Lua call                                   result
=====================  =========================================  =========================================
InterpretReplica       ``GetReplicas(obj)``                       number (truncated to int32), and a table
                                                                  (ReplicaRequirements) or nil
InterpretComponent     ``GetComponents(obj)``                     a list of components, or nil
ReviseReplica          ``ReviseReplica(obj, replicas)``           an object (references: the input)
Retain                 ``Retain(desired, observed)``              an object (references: both inputs)
AggregateStatus        ``AggregateStatus(obj, items)``            an object
InterpretStatus        ``ReflectStatus(obj)``                     a table: the status (``{}`` when empty)
InterpretHealth        ``InterpretHealth(obj)``                   a boolean — nil is an error
InterpretDependency    ``GetDependencies(obj)``, every script     a list of references, validated, merged
=====================  =========================================  =========================================

"An object" must carry a ``kind``. Status items reach Lua as Karmada serializes them:
``applied`` only when true, ``appliedMessage`` and ``health`` only when non-empty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.quantity import QuantityError, canonical
from fleetkeeper.interpreter.convert import fix_empty_tables
from fleetkeeper.interpreter.customization import Script
from fleetkeeper.interpreter.lua import LuaSandbox, LuaValue
from fleetkeeper.interpreter.native.dependencies import verify

Obj = dict[str, Any]

_REFERENCE_KEYS = ("apiVersion", "kind", "namespace", "name", "labelSelector")


class Declarative:
    """Runs customization scripts through a :class:`LuaSandbox`."""

    def __init__(self, sandbox: LuaSandbox) -> None:
        self.sandbox = sandbox

    def _call(self, script: Script, args: Sequence[Any], results: int, *, whole_object: bool = False
              ) -> list[LuaValue]:
        limits = self.sandbox.limits
        return self.sandbox.call(script.text, script.operation.function, args, results=results,
                                 name=script.name,
                                 max_bytes=limits.object_bytes if whole_object else limits.result_bytes)

    def get_replicas(self, script: Script, obj: Obj) -> tuple[int, Obj | None]:
        count, requires = self._call(script, [obj], 2)
        if count.type != "number":
            raise errors.ScriptError(f"{script.name}: result type {count.type} is not number")
        replicas = _int32(count.value, script.name)
        if requires.type == "nil":
            return replicas, None
        if requires.type != "table":
            raise errors.ScriptError(f"{script.name}: expect the returned requires type is table "
                                     f"but got {requires.type}")
        return replicas, _requirements(_typed(requires, script.name, expect_object=True), script.name)

    def get_components(self, script: Script, obj: Obj) -> list[Obj] | None:
        (value,) = self._call(script, [obj], 1)
        if value.type == "nil":
            return None
        if value.type != "table":
            raise errors.ScriptError(f"{script.name}: expected result type 'table' or 'nil' from "
                                     "GetComponents, "
                                     f"but got '{value.type}'")
        items = _typed(value, script.name, expect_object=False)
        if not isinstance(items, list):
            raise errors.ScriptError(f"{script.name}: failed to convert lua table for components: "
                                     "expected a list")
        return [_component(item, script.name) for item in items]

    def revise_replica(self, script: Script, obj: Obj, replicas: int) -> Obj:
        (value,) = self._call(script, [obj, replicas], 1, whole_object=True)
        return _unstructured(value, script.name, references=[obj])

    def retain(self, script: Script, desired: Obj, observed: Obj) -> Obj:
        (value,) = self._call(script, [desired, observed], 1, whole_object=True)
        return _unstructured(value, script.name, references=[desired, observed])

    def aggregate_status(self, script: Script, obj: Obj, items: Sequence[Mapping[str, Any]] | None) -> Obj:
        lua_items = None if items is None else [status_item(item) for item in items]
        (value,) = self._call(script, [obj, lua_items], 1, whole_object=True)
        return _unstructured(value, script.name, references=[])

    def reflect_status(self, script: Script, obj: Obj) -> Obj:
        (value,) = self._call(script, [obj], 1)
        if value.type != "table":
            raise errors.ScriptError(f"{script.name}: expect the returned replica type is table "
                                     f"but got {value.type}")
        status = _typed(value, script.name, expect_object=True)
        if not isinstance(status, dict):
            raise errors.ScriptError(f"{script.name}: the reflected status must be an object, got a list")
        return status

    def interpret_health(self, script: Script, obj: Obj) -> bool:
        (value,) = self._call(script, [obj], 1)
        if value.type != "boolean":
            raise errors.ScriptError(f"{script.name}: result type {value.type} is not bool")
        return bool(value.value)

    def get_dependencies(self, scripts: Sequence[Script], obj: Obj) -> list[Obj]:
        return merge_dependencies([self.dependencies_of(script, obj) for script in scripts])

    def dependencies_of(self, script: Script, obj: Obj) -> list[Obj]:
        """What one dependencyInterpretation script returns, validated (see :func:`merge_dependencies`)."""
        (value,) = self._call(script, [obj], 1)
        if value.type != "table":
            raise errors.ScriptError(f"{script.name}: expect the returned requires type is table "
                                     f"but got {value.type}")
        refs = _typed(value, script.name, expect_object=False)
        if not isinstance(refs, list):
            raise errors.ScriptError(f"{script.name}: json unmarshal obj failed: "
                                     "dependencies must be a list")
        try:
            return verify([_reference(ref, script.name) for ref in refs])
        except errors.InterpreterError as exc:
            raise errors.ScriptError(f"{script.name}: {exc}") from None


def merge_dependencies(results: Sequence[Sequence[Obj]]) -> list[Obj]:
    """Every script's dependencies, in script order, merged: duplicates dropped (not label
    selectors), sorted by apiVersion, kind, namespace and name."""
    merged: list[Obj] = []
    seen: set[tuple[str, ...]] = set()
    for refs in results:
        for ref in refs:
            key = tuple(str(ref.get(k, "")) for k in _REFERENCE_KEYS[:4])
            if "labelSelector" in ref:
                merged.append(ref)
            elif key not in seen:
                seen.add(key)
                merged.append(ref)
    return sorted(merged, key=lambda r: tuple(str(r.get(k, "")) for k in _REFERENCE_KEYS[:4]))


def status_item(item: Mapping[str, Any] | Any) -> Obj:
    """An AggregatedStatusItem as Karmada serializes it for Lua (empty fields omitted)."""
    to_dict = getattr(item, "to_dict", None)
    data: Mapping[str, Any] = to_dict() if callable(to_dict) else item
    out: Obj = {"clusterName": data.get("clusterName", "")}
    if data.get("status") is not None:
        out["status"] = data["status"]
    if data.get("applied"):
        out["applied"] = True
    for key in ("appliedMessage", "health"):
        if data.get(key):
            out[key] = data[key]
    return out


def _typed(value: LuaValue, name: str, *, expect_object: bool, references: Sequence[Any] = ()) -> Any:
    if value.error is not None:
        raise errors.ScriptError(f"{name}: encode lua result to json failed: {value.error}")
    return fix_empty_tables(value.value, expect_object=expect_object, references=references)


def _unstructured(value: LuaValue, name: str, *, references: Sequence[Any]) -> Obj:
    if value.type != "table":
        raise errors.ScriptError(f"{name}: expect the returned requires type is table but got {value.type}")
    obj = _typed(value, name, expect_object=True, references=references)
    if not isinstance(obj, dict):
        raise errors.ScriptError(f"{name}: json unmarshal obj failed: the result must be an object, "
                                 "got a list")
    if not obj.get("kind") or not isinstance(obj.get("kind"), str):
        raise errors.ScriptError(f"{name}: json unmarshal obj failed: Object 'Kind' is missing in the result")
    return obj


def _int32(value: Any, name: str) -> int:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise errors.ScriptError(f"{name}: result type {type(value).__name__} is not number")
    number = int(value)
    if not -(2**31) <= number < 2**31:
        raise errors.ScriptError(f"{name}: replicas {value} does not fit a 32-bit integer")
    return number


def _requirements(value: Any, name: str) -> Obj:
    """ReplicaRequirements from a script: known fields kept, quantities made canonical."""
    if not isinstance(value, dict):
        raise errors.ScriptError(f"{name}: json unmarshal obj failed: requirements must be an object")
    out: Obj = {}
    claim = value.get("nodeClaim")
    if claim is not None:
        if not isinstance(claim, dict):
            raise errors.ScriptError(f"{name}: json unmarshal obj failed: nodeClaim must be an object")
        out["nodeClaim"] = {k: claim[k] for k in ("hardNodeAffinity", "nodeSelector", "tolerations")
                            if k in claim}
    request = value.get("resourceRequest")
    if request is not None:
        out["resourceRequest"] = _resource_list(request, name)
    for key in ("namespace", "priorityClassName"):
        if value.get(key):
            out[key] = str(value[key])
    return out


def _resource_list(value: Any, name: str) -> Obj:
    if not isinstance(value, dict):
        raise errors.ScriptError(f"{name}: json unmarshal obj failed: resourceRequest must be an object")
    try:
        return {resource: canonical(amount) for resource, amount in value.items()}
    except QuantityError as exc:
        raise errors.ScriptError(f"{name}: json unmarshal obj failed: {exc}") from None


def _component(value: Any, name: str) -> Obj:
    if not isinstance(value, dict):
        raise errors.ScriptError(f"{name}: failed to convert lua table for components: expected objects")
    out: Obj = {"name": str(value.get("name", ""))}
    out["replicas"] = _int32(value.get("replicas", 0), name)
    requirements = value.get("replicaRequirements")
    if requirements is not None:
        req = _requirements(requirements, name)
        req.pop("namespace", None)
        out["replicaRequirements"] = req
    return out


def _reference(value: Any, name: str) -> Obj:
    if not isinstance(value, dict):
        raise errors.ScriptError(f"{name}: json unmarshal obj failed: a dependency must be an object")
    return {key: value[key] for key in _REFERENCE_KEYS if value.get(key) not in (None, "")}
