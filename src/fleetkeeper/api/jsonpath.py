"""Kubernetes JSONPath, as client-go's ``util/jsonpath`` evaluates it for Karmada (pure).

State preservation reads values out of a workload's reflected
status with Kubernetes JSONPath templates and turns them into label values, so what
counts is the exact text Karmada produces. This is a port of client-go's parser and
evaluator with missing keys as errors (Karmada's setting):

* literal text, and ``{…}`` actions with ``.field`` (``\\.`` escapes a dot), ``['key']``,
  ``[n]``, ``[a:b:c]``, ``[*]``, unions ``[a,b]``, ``..`` recursive descent, ``*``,
  filters ``[?(@.x == "y")]`` (``==``, ``!=``, ``<``, ``>``, ``<=``, ``>=``, and existence),
  ``@``/``$``, quoted literals, and ``{range …}…{end}``;
* documents are decoded JSON with every number a float64, as in Go — so a filter
  comparing a status number with an integer literal is an error there and here;
* results print as Go prints them: objects and lists as compact JSON (sorted keys,
  ``<``/``>``/``&`` escaped), strings raw, booleans ``true``/``false``, null as
  ``<nil>``, and numbers in ``%v`` form — 2 is ``2`` and 1734462491693 is
  ``1.734462491693e+12``. The results of one action are joined by one space.

:func:`print_template` and :func:`find_results` read templates as kubectl's ``-o jsonpath=``
and ``-o custom-columns=`` do (``fleetkeeper get``): missing keys allowed, and numbers as the
API server sent them (an integer stays one).

Go iterates maps in random order; here map values are visited by sorted key, so results
are deterministic. It lives in ``api`` because both admission (syntax checks, with
:func:`parse`) and the failover controllers (evaluation) use it; the grammar is in
:mod:`fleetkeeper.api.jsonpath_parse`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from fleetkeeper.api.jsonpath_parse import JSONPathError, Node, Param, parse

# --------------------------------------------------------------------------- evaluation

def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    if isinstance(value, (list, str)):
        return list(value)
    return []


def _field(values: list[Any], name: str, *, missing_ok: bool) -> list[Any]:
    found = [v[name] for v in values if isinstance(v, dict) and name in v]
    if not found and values and not missing_ok:
        raise JSONPathError(f"{name} is not found")
    return found


def _array(values: list[Any], params: tuple[Param, ...]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if value is None:
            continue
        if not isinstance(value, list):
            raise JSONPathError(f"{_go_type(value)} is not array or slice")
        n = len(value)
        start = params[0].value if params[0].known else 0
        start += n if start < 0 else 0
        stop = params[1].value if params[1].known else n
        if stop < 0 or (stop == 0 and params[1].derived):
            stop += n
        if stop == start:
            return out
        if start >= n or start < 0:
            raise JSONPathError(f"array index out of bounds: index {start}, length {n}")
        if stop > n or stop < 0:
            raise JSONPathError(f"array index out of bounds: index {stop - 1}, length {n}")
        if start > stop:
            raise JSONPathError(f"starting index {start} is greater than ending index {stop}")
        step = params[2].value if params[2].known else 1
        if params[2].known and step <= 0:
            raise JSONPathError("step must be > 0")
        out.extend(value[start:stop:step])
    return out


def _recursive(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if isinstance(value, str):  # Go descends into a string's bytes, which have no fields
            out.extend([value] if value else [])
            continue
        children = _children(value) if value is not None else []
        if children:
            out.append(value)
            out.extend(_recursive(children))
    return out


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    raise JSONPathError(f"invalid type for comparison: {_go_type(value)}")


def _compare(left: Any, operator: str, right: Any) -> bool:
    """Go template comparisons: both sides of one basic kind, else an error."""
    if _kind(left) != _kind(right):
        raise JSONPathError("incompatible types for comparison")
    if operator in ("==", "!="):
        return bool(left == right) == (operator == "==")
    if isinstance(left, bool):
        raise JSONPathError("invalid type for comparison")
    checks = {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}
    if operator not in checks:
        raise JSONPathError(f"unrecognized filter operator {operator}")
    return bool(checks[operator])


def _filter(values: list[Any], left: list[Node], operator: str, right: list[Node], *,
            missing_ok: bool) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if not isinstance(value, list):
            raise JSONPathError(f"{_go_type(value)} is not array or slice and cannot be filtered")
        for item in value:
            if operator == "exists":
                try:
                    if _walk([item], left, missing_ok=missing_ok):
                        out.append(item)
                except JSONPathError:
                    pass
                continue
            lefts = _walk([item], left, missing_ok=missing_ok)
            if not lefts:
                continue
            rights = _walk([item], right, missing_ok=missing_ok)
            if not rights:
                continue
            if len(lefts) > 1 or len(rights) > 1:
                raise JSONPathError("can only compare one element at a time")
            if _compare(lefts[0], operator, rights[0]):
                out.append(item)
    return out


def _walk(values: list[Any], nodes: Sequence[Node], *, missing_ok: bool = False) -> list[Any]:
    for node in nodes:
        values = _step(values, node, missing_ok=missing_ok)
    return values


def _step(values: list[Any], node: Node, *, missing_ok: bool) -> list[Any]:
    kind = node.kind
    if kind == "field":
        return _field(values, node.value, missing_ok=missing_ok) if values else []
    if kind == "array":
        return _array(values, node.value)
    if kind == "wildcard":
        return [child for v in values if v is not None for child in _children(v)]
    if kind == "recursive":
        return _recursive(values)
    if kind == "union":
        return [found for member in node.value for found in _walk(values, member, missing_ok=missing_ok)]
    if kind == "filter":
        left, operator, right = node.value
        return _filter(values, left, operator, right, missing_ok=missing_ok)
    if kind in ("text", "int", "float", "bool"):
        return [node.value for _ in values] if kind != "text" else [node.value]
    raise JSONPathError(f"unrecognized identifier {node.value}")


def _blocks(nodes: Sequence[Node]) -> list[Any]:
    """Group ``{range …}…{end}`` into ``("range", path, body)``; other nodes stay as they are."""
    root: list[Any] = []
    frames: list[tuple[list[Node], list[Any], list[Any]]] = []  # (range path, body, enclosing list)
    current = root
    for node in nodes:
        head = node.value[0] if node.kind == "list" and node.value else None
        word = head.value if head is not None and head.kind == "identifier" else None
        if word == "range":
            body: list[Any] = []
            frames.append((node.value[1:], body, current))
            current = body
        elif word == "end":
            if not frames:
                raise JSONPathError("not in range, nothing to end")
            path, finished, current = frames.pop()
            current.append(("range", path, finished))
        else:
            current.append(node)
    if frames:
        raise JSONPathError("range without end")
    return root


def _render(blocks: Sequence[Any], document: Any, *, missing_ok: bool) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, tuple):
            _, path, body = block
            for item in _walk([document], path, missing_ok=missing_ok):
                parts.append(_render(body, item, missing_ok=missing_ok))
        elif block.kind == "text":
            parts.append(block.value)
        else:
            parts.append(" ".join(_text(v) for v in _walk([document], block.value, missing_ok=missing_ok)))
    return "".join(parts)


def evaluate(template: str, document: Any) -> str:
    """The text a JSONPath template prints for ``document`` (Karmada's ``parseJSONValue``)."""
    return _render(_blocks(parse(template)), _as_go(document), missing_ok=False)


def print_template(template: str, document: Any) -> str:
    """The text ``kubectl -o jsonpath=TEMPLATE`` prints for ``document``: a missing key prints
    nothing (kubectl allows missing keys) and numbers print as the API server sent them
    (integers stay integers)."""
    return _render(_blocks(parse(template)), document, missing_ok=True)


def find_results(template: str, document: Any) -> list[list[Any]]:
    """The values of each action of ``template`` in ``document``, missing keys allowed
    (client-go's ``FindResults``, what ``kubectl -o custom-columns`` reads a cell from)."""
    return _results(_blocks(parse(template)), document)


def _results(blocks: Sequence[Any], document: Any) -> list[list[Any]]:
    out: list[list[Any]] = []
    for block in blocks:
        if isinstance(block, tuple):
            _, path, body = block
            out.extend(found for item in _walk([document], path, missing_ok=True)
                       for found in _results(body, item))
        elif block.kind == "text":
            out.append([block.value])
        else:
            out.append(_walk([document], block.value, missing_ok=True))
    return out


def _as_go(value: Any) -> Any:
    """A decoded JSON document as Go sees it: every number a float64."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): _as_go(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_go(v) for v in value]
    return value


# --------------------------------------------------------------------------- Go formatting


def _go_type(value: Any) -> str:
    return {dict: "map[string]interface {}", list: "[]interface {}", str: "string", bool: "bool",
            float: "float64", int: "int"}.get(type(value), type(value).__name__)


def _digits(value: float) -> tuple[str, int]:
    """Shortest decimal digits of ``abs(value)`` and the decimal point position."""
    _, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    return text, len(digits) + exponent


def _format(value: float, style: str) -> str:
    """Go's ``strconv.FormatFloat(value, style, -1, 64)`` for ``style`` ``e`` or ``f``."""
    digits, point = _digits(value)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if style == "e":
        exponent = point - 1 if digits != "0" else 0
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}" if digits != "0" else f"{sign}0"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_float(value: float) -> str:
    """``fmt.Sprint(float64)``: shortest digits, exponent form below 1e-4 and from 1e+06 on."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    exponent = _digits(value)[1] - 1
    return _format(value, "e" if exponent < -4 or exponent >= 6 else "f")


def _json_float(value: float) -> str:
    """``encoding/json``'s float64: plain below 1e21, exponent form outside [1e-6, 1e21)."""
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
        text = _format(value, "e")
        return re.sub(r"e-0(\d)$", r"e-\1", text)
    return _format(value, "f") if value != 0 else "0"


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
                 "\f": "\\f", "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                 "\u2029": "\\u2029"}


def _json_string(text: str) -> str:
    out = []
    for ch in text:
        escaped = _JSON_ESCAPES.get(ch)
        out.append(escaped if escaped is not None else f"\\u{ord(ch):04x}" if ord(ch) < 0x20 else ch)
    return '"' + "".join(out) + '"'


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded document: compact, sorted keys, Go's escapes and floats."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _json_float(float(value))
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(k)}:{go_json(value[k])}" for k in sorted(value)) + "}"
    return "[" + ",".join(go_json(v) for v in value) + "]"


def _text(value: Any) -> str:
    """One result as ``PrintResults`` prints it."""
    if isinstance(value, (dict, list)):
        return go_json(value)
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


__all__ = ["JSONPathError", "evaluate", "find_results", "go_float", "go_json", "parse", "print_template"]
