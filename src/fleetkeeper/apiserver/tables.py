"""``meta.k8s.io/v1`` Table responses: what ``kubectl get`` prints.

kubectl asks for ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1`` and prints
the columns the server chooses, so the columns here are Karmada's printer columns
(``kubectl get clusters`` → NAME VERSION MODE READY AGE). Each row carries the object's
metadata as a ``PartialObjectMetadata`` (``includeObject=Metadata``, the default), which
is how kubectl adds the NAMESPACE column for ``-A`` and prints ``--show-labels``.
Columns with ``priority: 1`` appear only with ``-o wide``.

Cells are computed from wire dicts with small extractors, so a missing field prints
as ``<none>`` instead of failing; ages are rendered like Kubernetes'
``duration.HumanDuration`` from the injected clock's ``now``.

A kind a CustomResourceDefinition defines prints NAME then the storage version's
``additionalPrinterColumns`` (each a JSONPath; ``date`` columns as ages), or NAME and AGE
when it declares none — as kube-apiserver prints custom resources.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from fleetkeeper.api.base import human_duration, millisecond_time, parse_time
from fleetkeeper.api.crd import PrinterColumn, custom_kind
from fleetkeeper.api.jsonpath import evaluate
from fleetkeeper.api.jsonpath_parse import JSONPathError
from fleetkeeper.api.scheme import GroupKind

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


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def field(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    """Extractor for a scalar at ``path`` (``None`` → ``<none>``)."""

    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = _get(obj, *path)
        return value if isinstance(value, (str, int, float, bool)) else None

    return extract


def condition(kind: str) -> Callable[[dict[str, Any], datetime], Cell]:
    """Extractor for the ``status`` of the condition of type ``kind``."""

    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        for item in _get(obj, "status", "conditions") or []:
            if isinstance(item, dict) and item.get("type") == kind:
                status = item.get("status")
                return status if isinstance(status, str) else None
        return None

    return extract


def _name(obj: dict[str, Any], now: datetime) -> Cell:
    return str(_get(obj, "metadata", "name") or "")


def _since(value: Any, now: datetime) -> str | None:
    """Kubernetes' ``translateTimestampSince``: a human duration, ``None`` when absent."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return human_duration((now - parse_time(value)).total_seconds())
    except ValueError:
        return "<unknown>"


def _age(obj: dict[str, Any], now: datetime) -> Cell:
    return _since(_get(obj, "metadata", "creationTimestamp"), now) or "<unknown>"


def _manifest_kinds(obj: dict[str, Any], now: datetime) -> Cell:
    manifests = _get(obj, "spec", "workload", "manifests") or []
    kinds = [str(m.get("kind")) for m in manifests if isinstance(m, dict) and m.get("kind")]
    return ",".join(kinds) or None


def _ready_of(obj: dict[str, Any], now: datetime) -> Cell:
    return f"{_get(obj, 'status', 'readyReplicas') or 0}/{_get(obj, 'spec', 'replicas') or 0}"


def _int_or_zero(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = _get(obj, *path)
        return value if isinstance(value, int) else 0

    return extract


def _count(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = _get(obj, *path)
        return len(value) if isinstance(value, (dict, list)) else 0

    return extract


NAME = Column("Name", _name, format="name", description="Name must be unique within a namespace.")
AGE = Column("Age", _age, type="date", description="Time since the object was created.")

_BINDING = (Column("Scheduled", condition("Scheduled")), Column("FullyApplied", condition("FullyApplied")))
_POLICY = (Column("Conflict-Resolution", field("spec", "conflictResolution")),
           Column("Priority", field("spec", "priority"), type="integer"))

#: (group, kind) → columns between NAME and AGE
COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("cluster.karmada.io", "Cluster"): (
        Column("Version", field("status", "kubernetesVersion")),
        Column("Mode", field("spec", "syncMode")),
        Column("Ready", condition("Ready")),
        Column("APIEndpoint", field("spec", "apiEndpoint"), priority=1),
    ),
    ("work.karmada.io", "ResourceBinding"): _BINDING,
    ("work.karmada.io", "ClusterResourceBinding"): _BINDING,
    ("policy.karmada.io", "PropagationPolicy"): _POLICY,
    ("policy.karmada.io", "ClusterPropagationPolicy"): _POLICY,
    ("work.karmada.io", "Work"): (
        Column("Workload-Kind", _manifest_kinds, priority=1),
        Column("Applied", condition("Applied")),
    ),
    ("apps", "Deployment"): (
        Column("Ready", _ready_of),
        Column("Up-to-date", _int_or_zero("status", "updatedReplicas"), type="integer"),
        Column("Available", _int_or_zero("status", "availableReplicas"), type="integer"),
    ),
    ("", "ConfigMap"): (Column("Data", _count("data"), type="integer"),),
    ("", "Secret"): (Column("Type", field("type")), Column("Data", _count("data"), type="integer")),
    ("coordination.k8s.io", "Lease"): (Column("Holder", field("spec", "holderIdentity")),),
}


# --- kinds whose whole table differs: Events (as Kubernetes prints them), the timeline, Namespaces,
# PriorityClasses


def _event_first(obj: dict[str, Any], now: datetime) -> Cell:
    return _since(obj.get("firstTimestamp"), now) or _since(obj.get("eventTime"), now) or "<unknown>"


def _event_last(obj: dict[str, Any], now: datetime) -> Cell:
    series = obj.get("series")
    if isinstance(series, dict) and series.get("lastObservedTime"):
        return _since(series.get("lastObservedTime"), now)
    return _since(obj.get("lastTimestamp"), now) or _event_first(obj, now)


def _event_object(obj: dict[str, Any], now: datetime) -> Cell:
    involved = obj.get("involvedObject") or {}
    return f"{str(involved.get('kind') or '').lower()}/{involved.get('name') or ''}"


def _event_source(obj: dict[str, Any], now: datetime) -> Cell:
    source = obj.get("source") or {}
    component, host = str(source.get("component") or ""), str(source.get("host") or "")
    if component:
        return component + (f", {host}" if host else "")
    controller, instance = obj.get("reportingComponent") or "", obj.get("reportingInstance") or ""
    return controller + (f", {instance}" if instance else "")


def _event_count(obj: dict[str, Any], now: datetime) -> Cell:
    series = obj.get("series")
    if isinstance(series, dict) and isinstance(series.get("count"), int):
        return int(series["count"])
    count = obj.get("count")
    return count if isinstance(count, int) and count > 0 else 1


def _message(obj: dict[str, Any], now: datetime) -> Cell:
    message = obj.get("message")
    return message.strip() if isinstance(message, str) else None


def _time(obj: dict[str, Any], now: datetime) -> Cell:
    """A timeline entry's time as ``2026-01-01T10:00:00.123Z`` (UTC, milliseconds)."""
    value = obj.get("time")
    return millisecond_time(value, iso=True) if isinstance(value, str) else None


def _subject(obj: dict[str, Any], now: datetime) -> Cell:
    subject = obj.get("subject") or {}
    namespace = subject.get("namespace")
    where = f"{namespace}/" if namespace else ""
    return f"{str(subject.get('kind') or '').lower()}/{where}{subject.get('name')}"


def _phase(obj: dict[str, Any], now: datetime) -> Cell:
    return str(_get(obj, "status", "phase") or "Active")


def _global_default(obj: dict[str, Any], now: datetime) -> Cell:
    return "true" if obj.get("globalDefault") else "false"


_NAME_WIDE = Column("Name", _name, priority=1, description="Name of the object.")

#: (group, kind) → every column, for kinds whose table is not NAME, …, AGE
FULL_COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("", "Event"): (
        Column("Last Seen", _event_last), Column("Type", field("type")), Column("Reason", field("reason")),
        Column("Object", _event_object),
        Column("Subobject", field("involvedObject", "fieldPath"), priority=1),
        Column("Source", _event_source, priority=1), Column("Message", _message),
        Column("First Seen", _event_first, priority=1),
        Column("Count", _event_count, type="integer", priority=1), _NAME_WIDE,
    ),
    ("fleetkeeper.io", "TimelineEntry"): (
        Column("Time", _time, description="When the decision was made (UTC)."),
        Column("Subject", _subject), Column("Action", field("action")), Column("Message", _message),
        Column("Reason", field("reason"), priority=1), Column("Component", field("component"), priority=1),
        _NAME_WIDE,
    ),
    ("", "Namespace"): (NAME, Column("Status", _phase), AGE),
    ("scheduling.k8s.io", "PriorityClass"): (
        NAME, Column("Value", field("value"), type="integer"), Column("Global-Default", _global_default), AGE,
        Column("PreemptionPolicy", field("preemptionPolicy")),
    ),
}


# --- kinds defined by CustomResourceDefinitions

_SIMPLE_PATH = re.compile(r"^(\.[A-Za-z0-9_-]+)+$")


def _lookup(obj: dict[str, Any], path: str) -> Any:
    """The value at a printer column's JSONPath (``None`` when absent)."""
    if _SIMPLE_PATH.match(path):
        return _get(obj, *path[1:].split("."))
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
            return _since(value, now)
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


__all__ = ["AGE", "COLUMNS", "FULL_COLUMNS", "NAME", "Column", "columns_for", "condition", "custom_columns",
           "field", "human_duration", "table"]
