"""Karmada's ``kube`` Lua library (spec B.4.4), implemented over wire values.

``local kube = require("kube")`` gives customization scripts four helpers. The sandbox
(:mod:`.lua`) converts Lua arguments to wire values, calls these functions, and turns a raised
:class:`fleetkeeper.errors.InterpreterError` into a Lua error at the script's call site:

* ``resourceAdd(q1, q2, ...)`` sums quantity strings (nil counts as 0) and prints the sum
  canonically in the format of the first non-zero operand: ``"100m" + "1.2"`` is ``"1300m"``;
* ``accuratePodRequirements(podTemplate)`` is the native replica-requirements rule;
* ``getPodDependencies(podTemplate, namespace)`` is the native pod-template dependency rule;
* ``getResourceQuantity(q)`` is the approximate float value of a quantity (``"1Gi"`` → 1073741824).

Pod templates arrive as Lua tables, so they go through the same empty-table repair as any result
converted into a typed object (no references: empty tables are dropped).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.quantity import Quantity, QuantityError
from fleetkeeper.interpreter.convert import fix_empty_tables
from fleetkeeper.interpreter.native.dependencies import pod_dependencies
from fleetkeeper.interpreter.native.requirements import replica_requirements


def _quantity(value: object, position: int) -> Quantity:
    if value is None:
        return Quantity(Fraction(0))
    if not isinstance(value, str):
        raise errors.InterpreterError(f"bad argument #{position} (string expected, got {_lua_type(value)})")
    try:
        return Quantity.parse(value)
    except QuantityError as exc:
        raise errors.InterpreterError(f"cannot parse '{value}': {exc}") from exc


def resource_add(*quantities: object) -> str:
    """``kube.resourceAdd``: the canonical sum of quantity strings."""
    total = Quantity(Fraction(0))
    for position, value in enumerate(quantities, start=1):
        total = total + _quantity(value, position)
    return str(total)


def _template(value: object) -> dict[str, Any]:
    fixed = fix_empty_tables(value, expect_object=True)
    if not isinstance(fixed, dict):
        raise errors.InterpreterError("fail to convert lua value to PodTemplateSpec: expected an object")
    return fixed


def accurate_pod_requirements(template: object) -> dict[str, Any] | None:
    """``kube.accuratePodRequirements``: what one replica of the template needs, or None."""
    return replica_requirements(_template(template), with_priority=False)


def get_pod_dependencies(template: object, namespace: str) -> list[dict[str, Any]]:
    """``kube.getPodDependencies``: ConfigMaps, Secrets, ServiceAccount and PVCs of the template."""
    spec = _template(template).get("spec")
    return pod_dependencies(spec if isinstance(spec, dict) else {}, namespace)


def get_resource_quantity(value: object) -> float:
    """``kube.getResourceQuantity``: the approximate numeric value of a quantity string."""
    number = _quantity(value, 1).approximate_float()
    if number < 0:
        raise errors.InterpreterError(f"int approximation unexpectedly returned a negative value: {value!r}")
    if math.isinf(number):
        raise errors.InterpreterError(f"int approximation unexpectedly returned an infinite value: {value!r}")
    return number


def _lua_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "table" if isinstance(value, dict | list) else type(value).__name__
