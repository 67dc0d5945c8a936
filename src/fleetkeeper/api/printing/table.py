"""``meta.k8s.io/v1`` Table responses: what ``kubectl get`` prints, as a function of the objects.

kubectl asks for ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1`` and prints the
columns the server chooses. Each row carries the object as ``includeObject`` asks: its
metadata as a ``PartialObjectMetadata`` (``Metadata``, the default — how kubectl adds the
NAMESPACE column for ``-A`` and prints ``--show-labels``), the whole object (``Object``, for
``--sort-by``) or nothing (``None``). Columns with ``priority: 1`` appear only with ``-o wide``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.printing.columns import Column

INCLUDE_OBJECT = ("None", "Metadata", "Object")


def wants_table(accept: str | None) -> bool:
    """Whether ``Accept`` asks for a ``meta.k8s.io`` Table (kubectl get)."""
    for part in (accept or "").split(","):
        params = {p.strip() for p in part.split(";")[1:]}
        if "as=Table" in params and "g=meta.k8s.io" in params:
            return True
    return False


def include_object(value: str | None) -> str:
    """The ``includeObject`` parameter (``Metadata`` when absent); anything else is 400."""
    include = value or "Metadata"
    if include not in INCLUDE_OBJECT:
        raise errors.BadRequest(f"includeObject must be None, Metadata or Object, got {include[:64]!r}")
    return include


def _row_object(obj: dict[str, Any], include: str) -> dict[str, Any] | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def table(
    columns: Sequence[Column], objects: list[dict[str, Any]], *, now: datetime,
    resource_version: str = "", include_object: str = "Metadata", continue_token: str | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table of ``objects`` in ``columns``."""
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


__all__ = ["INCLUDE_OBJECT", "include_object", "table", "wants_table"]
