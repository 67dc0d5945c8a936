"""``meta.k8s.io/v1`` Table responses: what ``kubectl get`` prints.

kubectl asks for ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1`` and prints
the columns the server chooses: Karmada's printer columns for Karmada's kinds and
kubectl's for built-in ones (:mod:`~fleetkeeper.apiserver.printers`, made of the
:mod:`~fleetkeeper.apiserver.columns`). Each row carries the object's metadata as a
``PartialObjectMetadata`` (``includeObject=Metadata``, the default), which is how kubectl
adds the NAMESPACE column for ``-A`` and prints ``--show-labels``. Columns with
``priority: 1`` appear only with ``-o wide``.

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
from fleetkeeper.api.crd import PrinterColumn, custom_kind
from fleetkeeper.api.jsonpath import evaluate
from fleetkeeper.api.jsonpath_parse import JSONPathError
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.columns import AGE, NAME, Cell, Column, dig, since
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


def custom_columns(group: str, kind: str) -> tuple[Column, ...] | None:
    """The columns of a CRD-defined kind (None for other kinds)."""
    custom = custom_kind(GroupKind(group, kind))
    if custom is None:
        return None
    version = custom.storage or (custom.served[0] if custom.served else None)
    if version is None or not version.printer_columns:
        return (NAME, AGE)
    printed = tuple(Column(c.name, _printed(c), type=c.type, priority=c.priority, description=c.description,
                           format=c.format) for c in version.printer_columns)
    return (NAME, *printed)


def columns_for(group: str, kind: str) -> tuple[Column, ...]:
    """Every column of a kind: NAME first and AGE last, or the kind's own (:data:`FULL_COLUMNS`, a CRD's)."""
    full = FULL_COLUMNS.get((group, kind)) or custom_columns(group, kind)
    if full is not None:
        return full
    return (NAME, *COLUMNS.get((group, kind), ()), AGE)


def _row_object(obj: dict[str, Any], include: str) -> dict[str, Any] | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def table(
    group: str, kind: str, objects: list[dict[str, Any]], *, now: datetime,
    resource_version: str = "", include_object: str = "Metadata", continue_token: str | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table of ``objects``."""
    columns = columns_for(group, kind)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [c.extract(obj, now) for c in columns]}
        embedded = _row_object(obj, include_object)
        if embedded is not None:
            row["object"] = embedded
        rows.append(row)
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
            "columnDefinitions": [c.definition() for c in columns], "rows": rows}


__all__ = ["AGE", "COLUMNS", "FULL_COLUMNS", "NAME", "Column", "columns_for", "custom_columns",
           "human_duration", "table"]
