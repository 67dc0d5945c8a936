"""Reading and writing fields of unstructured objects (wire dicts), the way the Go rules do.

Resource templates are unstructured: any group, version and kind, held as the JSON-like dicts
that travel on the wire. The native rules read them the way Go's typed conversion would:

* a missing field reads as the Go zero value (``0``, ``""``, ``{}``), so a Deployment with no
  ``status`` has ``status.replicas == 0``;
* a field of the wrong JSON type is an error naming the field, as Go's converter refuses it
  (``spec.replicas: expected an integer, got str``);
* integral floats (``3.0``, which YAML and Lua may produce) count as integers, as they do after
  ``json.Unmarshal`` into an int field.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from fleetkeeper import errors
from fleetkeeper.api.jsoncopy import json_copy

Obj = dict[str, Any]
T = TypeVar("T")


def wire(value: object) -> Obj:
    """An object as a wire dict: a mapping, or a model with ``to_dict()``."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        value = to_dict()
    if not isinstance(value, Mapping):
        raise errors.InterpreterError(f"expected an object (mapping), got {type(value).__name__}")
    return dict(value)


def deep(value: T) -> T:
    """A deep copy: the rules never modify their inputs (values are JSON-shaped)."""
    return json_copy(value)


def get(obj: Mapping[str, Any] | None, *path: str) -> Any:
    """The value at ``path``, or None when any step is missing or not a mapping."""
    cur: Any = obj
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def get_map(obj: Mapping[str, Any] | None, *path: str) -> Obj:
    """A mapping field; ``{}`` when absent; an error when it is something else."""
    value = get(obj, *path)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise errors.InterpreterError(f"{'.'.join(path)}: expected an object, got {_type(value)}")
    return dict(value)


def get_list(obj: Mapping[str, Any] | None, *path: str) -> list[Any]:
    """A list field; ``[]`` when absent; an error when it is something else."""
    value = get(obj, *path)
    if value is None:
        return []
    if not isinstance(value, list):
        raise errors.InterpreterError(f"{'.'.join(path)}: expected a list, got {_type(value)}")
    return value


def get_int(obj: Mapping[str, Any] | None, *path: str, default: int = 0) -> int:
    """An integer field; ``default`` when absent."""
    value = get(obj, *path)
    if value is None:
        return default
    return as_int(value, ".".join(path))


def get_opt_int(obj: Mapping[str, Any] | None, *path: str) -> int | None:
    """An integer field, or None when absent (Go's ``*int32``)."""
    value = get(obj, *path)
    return None if value is None else as_int(value, ".".join(path))


def get_str(obj: Mapping[str, Any] | None, *path: str) -> str:
    """A string field; ``""`` when absent."""
    value = get(obj, *path)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise errors.InterpreterError(f"{'.'.join(path)}: expected a string, got {_type(value)}")
    return value


def as_int(value: object, where: str) -> int:
    """``value`` as an integer; integral floats count."""
    if isinstance(value, bool):
        raise errors.InterpreterError(f"{where}: expected an integer, got bool")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise errors.InterpreterError(f"{where}: expected an integer, got {_type(value)}")


def ensure_map(obj: Obj, *path: str) -> Obj:
    """The mapping at ``path``, created (and replaced if not a mapping) on the way."""
    cur = obj
    for key in path:
        nxt = cur.get(key)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[key] = nxt
        cur = nxt
    return cur


def set_field(obj: Obj, value: Any, *path: str) -> None:
    """``unstructured.SetNestedField``."""
    ensure_map(obj, *path[:-1])[path[-1]] = value


def remove_field(obj: Obj, *path: str) -> None:
    """``unstructured.RemoveNestedField``: no error when absent."""
    parent = get(obj, *path[:-1]) if len(path) > 1 else obj
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def meta(obj: Mapping[str, Any], key: str) -> str:
    """A string from ``metadata`` (name, namespace), ``""`` when absent."""
    value = get(obj, "metadata", key)
    return value if isinstance(value, str) else ""


def generation(obj: Mapping[str, Any]) -> int:
    return get_int(obj, "metadata", "generation")


def format_time(when: datetime) -> str:
    """A ``metav1.Time`` on the wire: RFC 3339 in UTC, whole seconds."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp; an error names the bad value."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise errors.InterpreterError(f"invalid timestamp {text!r}: expected RFC 3339") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _type(value: object) -> str:
    return type(value).__name__
