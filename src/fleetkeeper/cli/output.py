"""``-o jsonpath=TEMPLATE`` and ``-o custom-columns=HEADER:PATH,…``, as kubectl prints them.

``fleetkeeper get`` takes kubectl's two templated outputs besides its tables, YAML and JSON:

* ``jsonpath=TEMPLATE`` evaluates a Kubernetes JSONPath template (:mod:`fleetkeeper.api.jsonpath`)
  against the object, or against the ``List`` of the objects when no name is given, and prints
  the result with no newline added; a missing key prints nothing;
* ``custom-columns=NAME:.metadata.name,READY:.status.conditions[0].status`` prints one row per
  object: each path may be written ``.a.b``, ``a.b``, ``{.a.b}`` or ``{a.b}``; a cell with no
  value is ``<none>``, several values are joined by commas, and values print as Go's
  ``fmt.Sprint`` does (``map[k:v]``, ``[a b]``). Columns are laid out as kubectl's tab writer
  does (three spaces between columns, ten characters at least).

A malformed spec is a ``ValueError`` in kubectl's words. Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fleetkeeper.api import jsonpath

#: the outputs ``get`` takes without an argument
PLAIN = ("table", "wide", "yaml", "json")
_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")
_MIN_WIDTH, _PADDING = 10, 3


@dataclass(frozen=True)
class Output:
    """How ``get`` prints: a plain format, a JSONPath template, or custom columns."""

    format: str
    template: str = ""
    columns: tuple[tuple[str, str], ...] = ()


def parse_output(value: str) -> Output:
    """``-o``'s value, checked (a template is parsed here, so a bad one fails before any request)."""
    if value in PLAIN:
        return Output(value)
    name, eq, spec = value.partition("=")
    if eq and name == "jsonpath":
        if not spec:
            raise ValueError("template format specified but no template given")
        _parse(spec)
        return Output("jsonpath", template=spec)
    if eq and name == "custom-columns":
        return Output("custom-columns", columns=_columns(spec))
    raise ValueError(f"unable to match a printer suitable for the output format {value!r}, allowed formats "
                     f"are: {','.join(PLAIN)},jsonpath=TEMPLATE,custom-columns=SPEC")


def _parse(template: str) -> None:
    try:
        jsonpath.parse(template)
    except jsonpath.JSONPathError as exc:
        raise ValueError(f"error parsing jsonpath {template}, {exc}") from None


def relaxed(path: str) -> str:
    """kubectl's ``RelaxedJSONPathExpression``: ``a.b``, ``.a.b``, ``{a.b}`` → ``{.a.b}``."""
    if not path:
        return path
    found = _RELAXED.match(path)
    if found is None:
        raise ValueError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                         "'{name1.name2}' or '{.name1.name2}'")
    return "{." + (found.group(1) or found.group(2)) + "}"


def _columns(spec: str) -> tuple[tuple[str, str], ...]:
    if not spec:
        raise ValueError("custom-columns format specified but no custom columns given")
    out: list[tuple[str, str]] = []
    for part in spec.split(","):
        header, colon, path = part.partition(":")
        if not colon:
            raise ValueError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        template = relaxed(path)
        _parse(template)
        out.append((header, template))
    return tuple(out)


def as_list(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``List`` kubectl prints (and evaluates a template against) for several objects."""
    return {"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}}


def print_jsonpath(template: str, document: Any) -> str:
    """What ``-o jsonpath=TEMPLATE`` prints for ``document``; ``ValueError`` when it cannot."""
    try:
        return jsonpath.print_template(template, document)
    except jsonpath.JSONPathError as exc:
        raise ValueError(f"error executing jsonpath {template!r}: {exc}") from None


def sprint(value: Any) -> str:
    """Go's ``fmt.Sprint`` of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return jsonpath.go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint(v) for v in value) + "]"
    return str(value)


def cell(template: str, obj: dict[str, Any]) -> str:
    """One custom-columns cell: ``<none>`` when nothing is found, else every value, comma-joined."""
    try:
        results = jsonpath.find_results(template, obj)
    except jsonpath.JSONPathError as exc:
        raise ValueError(f"error executing jsonpath {template!r}: {exc}") from None
    if not results or not results[0]:
        return "<none>"
    return ",".join(sprint(value) for found in results for value in found)


def tabulate(lines: Sequence[Sequence[str]]) -> str:
    """Rows as kubectl's tab writer lays them out: every column but the last padded to its widest
    cell plus three spaces, ten characters at least."""
    if not lines:
        return ""
    widths = [max(_MIN_WIDTH, max(len(line[i]) for line in lines) + _PADDING)
              for i in range(len(lines[0]) - 1)]
    return "\n".join("".join(c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)) + line[-1]
                     for line in lines)


def custom_rows(columns: Sequence[tuple[str, str]], objects: Iterable[dict[str, Any]], *,
                header: bool = True) -> list[list[str]]:
    """The header (unless ``header`` is false) and one row per object."""
    rows = [[name for name, _ in columns]] if header else []
    rows.extend([cell(template, obj) for _, template in columns] for obj in objects)
    return rows


__all__ = ["PLAIN", "Output", "as_list", "cell", "custom_rows", "parse_output", "print_jsonpath", "relaxed",
           "sprint", "tabulate"]
