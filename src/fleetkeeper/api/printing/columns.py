"""The columns of ``meta.k8s.io/v1`` Tables, and the extractors most of them are made of.

A :class:`Column` computes its cell from the object's wire dict and the clock's ``now``;
a missing field prints as ``<none>`` instead of failing, and ages are rendered like
Kubernetes' ``duration.HumanDuration``. The columns of built-in kinds are in
:mod:`~fleetkeeper.api.printing.kube`, the Table itself in :mod:`~fleetkeeper.api.printing.table`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fleetkeeper.api.base import human_duration, parse_time

Cell = str | int | float | bool | None


@dataclass(frozen=True)
class Column:
    name: str
    extract: Callable[[dict[str, Any], datetime], Cell]
    type: str = "string"
    priority: int = 0
    description: str = ""
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description or self.name, "priority": self.priority}


def dig(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def field(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    """Extractor for a scalar at ``path`` (``None`` → ``<none>``)."""

    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = dig(obj, *path)
        return value if isinstance(value, (str, int, float, bool)) else None

    return extract


def condition(kind: str) -> Callable[[dict[str, Any], datetime], Cell]:
    """Extractor for the ``status`` of the condition of type ``kind``."""

    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        for item in dig(obj, "status", "conditions") or []:
            if isinstance(item, dict) and item.get("type") == kind:
                status = item.get("status")
                return status if isinstance(status, str) else None
        return None

    return extract


def name_of(obj: dict[str, Any], now: datetime) -> Cell:
    return str(dig(obj, "metadata", "name") or "")


def since(value: Any, now: datetime) -> str | None:
    """Kubernetes' ``translateTimestampSince``: a human duration, ``None`` when absent."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return human_duration((now - parse_time(value)).total_seconds())
    except ValueError:
        return "<unknown>"


def age(obj: dict[str, Any], now: datetime) -> Cell:
    return since(dig(obj, "metadata", "creationTimestamp"), now) or "<unknown>"


def int_or_zero(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = dig(obj, *path)
        return value if isinstance(value, int) else 0

    return extract


def count_of(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = dig(obj, *path)
        return len(value) if isinstance(value, (dict, list)) else 0

    return extract


def or_none(value: Any) -> Cell:
    """A scalar as it is; absent or empty → ``<none>``."""
    return value if isinstance(value, (str, int, float, bool)) and value != "" else "<none>"


def message(obj: dict[str, Any], now: datetime) -> Cell:
    """An object's ``message`` without surrounding blanks."""
    text = obj.get("message")
    return text.strip() if isinstance(text, str) else None


def labels_text(value: Any) -> str:
    """A label map as Kubernetes' ``labels.FormatLabels`` prints it: ``a=1,b=2`` by key, ``<none>`` empty."""
    if not isinstance(value, dict) or not value:
        return "<none>"
    return ",".join(f"{k}={value[k]}" for k in sorted(value))


def _requirement(expression: Any) -> tuple[str, str]:
    if not isinstance(expression, dict):
        return "", ""
    key, operator = str(expression.get("key") or ""), expression.get("operator")
    values = ",".join(sorted(str(v) for v in expression.get("values") or []))
    text = {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
            "DoesNotExist": f"!{key}"}.get(str(operator), "")
    return key, text


def selector_text(selector: Any) -> str:
    """A ``LabelSelector`` as Kubernetes prints it (``app=web,tier in (a,b)``, by key; empty when none)."""
    if not isinstance(selector, dict):
        return ""
    labels = selector.get("matchLabels") or {}
    requirements = [(str(k), f"{k}={v}") for k, v in labels.items()] if isinstance(labels, dict) else []
    requirements += [_requirement(e) for e in selector.get("matchExpressions") or []]
    return ",".join(text for _, text in sorted(requirements, key=lambda r: r[0]) if text)


NAME = Column("Name", name_of, format="name", description="Name must be unique within a namespace.")
AGE = Column("Age", age, type="date", description="Time since the object was created.")


__all__ = ["AGE", "NAME", "Cell", "Column", "age", "condition", "count_of", "dig", "field", "int_or_zero",
           "labels_text", "message", "name_of", "or_none", "selector_text", "since"]
