"""The columns of ``meta.k8s.io/v1`` Tables, and the extractors most of them are made of.

A :class:`Column` computes its cell from the object's wire dict and the clock's ``now``;
a missing field prints as ``<none>`` instead of failing, and ages are rendered like
Kubernetes' ``duration.HumanDuration``. The columns of each kind are in
:mod:`~fleetkeeper.apiserver.printers`, the Table itself in :mod:`~fleetkeeper.apiserver.tables`.
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


NAME = Column("Name", name_of, format="name", description="Name must be unique within a namespace.")
AGE = Column("Age", age, type="date", description="Time since the object was created.")


__all__ = ["AGE", "NAME", "Cell", "Column", "age", "condition", "count_of", "dig", "field", "int_or_zero",
           "name_of", "since"]
