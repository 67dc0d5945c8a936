"""Which columns ``kubectl get`` prints for the kinds the plane adds to Kubernetes'.

Karmada's kinds print Karmada's printer columns (``kubectl get clusters`` → NAME VERSION
MODE READY AGE, and ZONES … PROXY-URL with ``-o wide``); the timeline prints as a log.
Built-in kinds print what kubectl prints for them against kube-apiserver
(:mod:`fleetkeeper.api.printing.kube`, shared with the simulated members). Columns with
``priority: 1`` appear only with ``-o wide``. :data:`COLUMNS` go between NAME and AGE;
:data:`FULL_COLUMNS` are a kind's whole table.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fleetkeeper.api.base import millisecond_time
from fleetkeeper.api.printing.columns import AGE, NAME, Cell, Column, condition, dig, field, message, or_none
from fleetkeeper.api.printing.kube import NAME_WIDE


def _manifest_kinds(obj: dict[str, Any], now: datetime) -> Cell:
    manifests = dig(obj, "spec", "workload", "manifests") or []
    kinds = [str(m.get("kind")) for m in manifests if isinstance(m, dict) and m.get("kind")]
    return ",".join(kinds) or None


#: READY-FOR-FAILOVER: the FailoverReady condition the failover-readiness controller keeps (when on)
_BINDING = (Column("Scheduled", condition("Scheduled")), Column("FullyApplied", condition("FullyApplied")),
            Column("Ready-For-Failover", condition("FailoverReady")))
_POLICY = (Column("Conflict-Resolution", field("spec", "conflictResolution")),
           Column("Priority", field("spec", "priority"), type="integer"))


def _joined(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = dig(obj, *path)
        return ",".join(str(v) for v in value) if isinstance(value, list) and value else "<none>"

    return extract


def _ready_or_unknown(obj: dict[str, Any], now: datetime) -> Cell:
    return condition("Ready")(obj, now) or "Unknown"


#: (group, kind) → columns between NAME and AGE
COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("work.karmada.io", "ResourceBinding"): _BINDING,
    ("work.karmada.io", "ClusterResourceBinding"): _BINDING,
    ("policy.karmada.io", "PropagationPolicy"): _POLICY,
    ("policy.karmada.io", "ClusterPropagationPolicy"): _POLICY,
    ("work.karmada.io", "Work"): (
        Column("Workload-Kind", _manifest_kinds),
        Column("Applied", condition("Applied")),
    ),
    ("config.karmada.io", "ResourceInterpreterCustomization"): (
        Column("Target-API-Version", field("spec", "target", "apiVersion")),
        Column("Target-Kind", field("spec", "target", "kind")),
    ),
}


# --- kinds whose whole table differs: the timeline, Clusters

def _time(obj: dict[str, Any], now: datetime) -> Cell:
    """A timeline entry's time as ``2026-01-01T10:00:00.123Z`` (UTC, milliseconds)."""
    value = obj.get("time")
    return millisecond_time(value, iso=True) if isinstance(value, str) else None


def _subject(obj: dict[str, Any], now: datetime) -> Cell:
    subject = obj.get("subject") or {}
    namespace = subject.get("namespace")
    where = f"{namespace}/" if namespace else ""
    return f"{str(subject.get('kind') or '').lower()}/{where}{subject.get('name')}"


#: (group, kind) → every column, for kinds whose table is not NAME, …, AGE
FULL_COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("fleetkeeper.io", "TimelineEntry"): (
        Column("Time", _time, description="When the decision was made (UTC)."),
        Column("Subject", _subject), Column("Action", field("action")), Column("Message", message),
        Column("Reason", field("reason"), priority=1), Column("Component", field("component"), priority=1),
        NAME_WIDE,
    ),
    # Karmada's own table of Clusters (not a CRD: its aggregated API prints these)
    ("cluster.karmada.io", "Cluster"): (
        NAME, Column("Version", field("status", "kubernetesVersion")),
        Column("Mode", field("spec", "syncMode")),
        Column("Ready", _ready_or_unknown), AGE,
        Column("Zones", _joined("spec", "zones"), priority=1),
        Column("Region", lambda obj, now: or_none(dig(obj, "spec", "region")), priority=1),
        Column("Provider", lambda obj, now: or_none(dig(obj, "spec", "provider")), priority=1),
        Column("API-Endpoint", field("spec", "apiEndpoint"), priority=1),
        Column("Proxy-URL", lambda obj, now: or_none(dig(obj, "spec", "proxyURL")), priority=1),
    ),
}


__all__ = ["COLUMNS", "FULL_COLUMNS"]
