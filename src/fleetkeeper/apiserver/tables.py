"""``meta.k8s.io/v1`` Table responses: what ``kubectl get`` prints.

kubectl asks for ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1`` and prints
the columns the server chooses: Karmada's printer columns for Karmada's kinds
(:mod:`~fleetkeeper.apiserver.printers`) and kubectl's for built-in ones
(:mod:`fleetkeeper.api.printing.kube`); the Table and its rows are
:func:`fleetkeeper.api.printing.table.table`. Columns with ``priority: 1`` appear only with
``-o wide``.

A kind a CustomResourceDefinition defines prints NAME then the storage version's
``additionalPrinterColumns`` (each a JSONPath; ``date`` columns as ages), or NAME and AGE
when it declares none — as kube-apiserver prints custom resources.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson

from fleetkeeper.api.base import human_duration
from fleetkeeper.api.crd import CustomKind, PrinterColumn
from fleetkeeper.api.jsonpath import evaluate
from fleetkeeper.api.jsonpath_parse import JSONPathError
from fleetkeeper.api.printing import table as printing
from fleetkeeper.api.printing.columns import AGE, NAME, Cell, Column, dig, since
from fleetkeeper.api.printing.kube import KUBE_COLUMNS
from fleetkeeper.apiserver.printers import COLUMNS, FULL_COLUMNS

# --- kinds defined by CustomResourceDefinitions

_SIMPLE_PATH = re.compile(r"^(\.[A-Za-z0-9_-]+)+$")


def _lookup(obj: dict[str, Any], path: str) -> Any:
    """The value at a printer column's JSONPath (``None`` when absent)."""
    if _SIMPLE_PATH.match(path):
        return dig(obj, *path[1:].split("."))
    try:
        return evaluate("{" + path + "}", obj) or None
    except (JSONPathError, ValueError):
        return None


def _printed(column: PrinterColumn) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = _lookup(obj, column.json_path)
        if value is None:
            return None
        if column.type == "date":
            return since(value, now)
        if column.type == "integer":
            return value if isinstance(value, int) and not isinstance(value, bool) else None
        if column.type == "number":
            return value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if column.type == "boolean":
            return value if isinstance(value, bool) else None
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        return orjson.dumps(value).decode() if isinstance(value, dict | list) else str(value)

    return extract


def custom_columns(custom: CustomKind | None) -> tuple[Column, ...] | None:
    """The columns of the kind a CRD defines (None: no CRD)."""
    if custom is None:
        return None
    version = custom.storage or (custom.served[0] if custom.served else None)
    if version is None or not version.printer_columns:
        return (NAME, AGE)
    printed = tuple(Column(c.name, _printed(c), type=c.type, priority=c.priority, description=c.description,
                           format=c.format) for c in version.printer_columns)
    return (NAME, *printed)


def columns_for(group: str, kind: str, custom: CustomKind | None = None) -> tuple[Column, ...]:
    """Every column of a kind: its own (:data:`FULL_COLUMNS`, kubectl's for a built-in kind, those of
    ``custom``, the CRD defining it) or NAME, Karmada's columns, AGE."""
    full = FULL_COLUMNS.get((group, kind)) or KUBE_COLUMNS.get((group, kind)) or custom_columns(custom)
    if full is not None:
        return full
    return (NAME, *COLUMNS.get((group, kind), ()), AGE)


def table(
    group: str, kind: str, objects: list[dict[str, Any]], *, now: datetime,
    resource_version: str = "", include_object: str = "Metadata", continue_token: str | None = None,
    custom: CustomKind | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table of ``objects`` (``custom``: the CRD defining their kind)."""
    return printing.table(columns_for(group, kind, custom), objects, now=now,
                          resource_version=resource_version, include_object=include_object,
                          continue_token=continue_token)


__all__ = ["AGE", "COLUMNS", "FULL_COLUMNS", "NAME", "Column", "columns_for", "custom_columns",
           "human_duration", "table"]
