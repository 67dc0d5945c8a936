"""Which columns ``kubectl get`` prints for each kind the server knows by heart.

Karmada's kinds print Karmada's printer columns (``kubectl get clusters`` → NAME VERSION
MODE READY AGE, and ZONES … PROXY-URL with ``-o wide``), built-in kinds print what
kubectl prints for them against kube-apiserver (a Service's TYPE, CLUSTER-IP, EXTERNAL-IP,
PORT(S); a Pod's READY, STATUS, RESTARTS; …). Columns with ``priority: 1`` appear only
with ``-o wide``. :data:`COLUMNS` go between NAME and AGE; :data:`FULL_COLUMNS` are a
kind's whole table.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fleetkeeper.api.base import millisecond_time
from fleetkeeper.apiserver.columns import (
    AGE,
    NAME,
    Cell,
    Column,
    condition,
    count_of,
    dig,
    field,
    int_or_zero,
    name_of,
    since,
)


def _manifest_kinds(obj: dict[str, Any], now: datetime) -> Cell:
    manifests = dig(obj, "spec", "workload", "manifests") or []
    kinds = [str(m.get("kind")) for m in manifests if isinstance(m, dict) and m.get("kind")]
    return ",".join(kinds) or None


def _ready_of(obj: dict[str, Any], now: datetime) -> Cell:
    return f"{dig(obj, 'status', 'readyReplicas') or 0}/{dig(obj, 'spec', 'replicas') or 0}"


#: READY-FOR-FAILOVER: the FailoverReady condition the failover-readiness controller keeps (when on)
_BINDING = (Column("Scheduled", condition("Scheduled")), Column("FullyApplied", condition("FullyApplied")),
            Column("Ready-For-Failover", condition("FailoverReady")))
_POLICY = (Column("Conflict-Resolution", field("spec", "conflictResolution")),
           Column("Priority", field("spec", "priority"), type="integer"))

def _ratio(ready: tuple[str, ...], total: tuple[str, ...]) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        return f"{dig(obj, *ready) or 0}/{dig(obj, *total) or 0}"

    return extract


def _or_none(value: Any) -> Cell:
    return value if isinstance(value, (str, int, float, bool)) and value != "" else "<none>"


def _joined(*path: str) -> Callable[[dict[str, Any], datetime], Cell]:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        value = dig(obj, *path)
        if isinstance(value, dict):
            value = [f"{k}={v}" for k, v in value.items()]
        return ",".join(str(v) for v in value) if isinstance(value, list) and value else "<none>"

    return extract


def _ready_or_unknown(obj: dict[str, Any], now: datetime) -> Cell:
    return condition("Ready")(obj, now) or "Unknown"


def _service_ports(obj: dict[str, Any], now: datetime) -> Cell:
    ports = []
    for port in dig(obj, "spec", "ports") or []:
        if isinstance(port, dict):
            node = f":{port['nodePort']}" if port.get("nodePort") else ""
            ports.append(f"{port.get('port')}{node}/{port.get('protocol') or 'TCP'}")
    return ",".join(ports) or "<none>"


def _external_ip(obj: dict[str, Any], now: datetime) -> Cell:
    ips = [str(i.get("ip") or i.get("hostname")) for i in dig(obj, "status", "loadBalancer", "ingress") or []
           if isinstance(i, dict)]
    ips += [str(ip) for ip in dig(obj, "spec", "externalIPs") or []]
    if ips:
        return ",".join(ips)
    return "<pending>" if dig(obj, "spec", "type") == "LoadBalancer" else "<none>"


def _pod_ready(obj: dict[str, Any], now: datetime) -> Cell:
    statuses = [c for c in dig(obj, "status", "containerStatuses") or [] if isinstance(c, dict)]
    total = len(dig(obj, "spec", "containers") or []) or len(statuses)
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _pod_status(obj: dict[str, Any], now: datetime) -> Cell:
    if dig(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    for c in dig(obj, "status", "containerStatuses") or []:
        reason = dig(c, "state", "waiting", "reason") or dig(c, "state", "terminated", "reason")
        if isinstance(reason, str) and reason:
            return reason
    return str(dig(obj, "status", "reason") or dig(obj, "status", "phase") or "Unknown")


def _restarts(obj: dict[str, Any], now: datetime) -> Cell:
    return sum(int(c.get("restartCount") or 0) for c in dig(obj, "status", "containerStatuses") or []
               if isinstance(c, dict))


def _job_status(obj: dict[str, Any], now: datetime) -> Cell:
    for kind, shown in (("Complete", "Complete"), ("Failed", "Failed"), ("Suspended", "Suspended")):
        if condition(kind)(obj, now) == "True":
            return shown
    return "Running"


def _job_completions(obj: dict[str, Any], now: datetime) -> Cell:
    wanted = dig(obj, "spec", "completions")
    succeeded = dig(obj, "status", "succeeded") or 0
    if wanted is not None:
        return f"{succeeded}/{wanted}"
    return f"{succeeded}/1 of {dig(obj, 'spec', 'parallelism')}"


def _last_schedule(obj: dict[str, Any], now: datetime) -> Cell:
    return since(dig(obj, "status", "lastScheduleTime"), now) or "<none>"


def _created_at(obj: dict[str, Any], now: datetime) -> Cell:
    value = dig(obj, "metadata", "creationTimestamp")
    return str(value) if value else "<unknown>"


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
    ("apps", "StatefulSet"): (Column("Ready", _ratio(("status", "readyReplicas"), ("spec", "replicas"))),),
    ("apps", "ReplicaSet"): (
        Column("Desired", int_or_zero("spec", "replicas"), type="integer"),
        Column("Current", int_or_zero("status", "replicas"), type="integer"),
        Column("Ready", int_or_zero("status", "readyReplicas"), type="integer"),
    ),
    ("apps", "DaemonSet"): (
        Column("Desired", int_or_zero("status", "desiredNumberScheduled"), type="integer"),
        Column("Current", int_or_zero("status", "currentNumberScheduled"), type="integer"),
        Column("Ready", int_or_zero("status", "numberReady"), type="integer"),
        Column("Up-to-date", int_or_zero("status", "updatedNumberScheduled"), type="integer"),
        Column("Available", int_or_zero("status", "numberAvailable"), type="integer"),
        Column("Node Selector", _joined("spec", "template", "spec", "nodeSelector")),
    ),
    ("batch", "Job"): (Column("Status", _job_status), Column("Completions", _job_completions)),
    ("batch", "CronJob"): (
        Column("Schedule", field("spec", "schedule")),
        Column("Timezone", lambda obj, now: _or_none(dig(obj, "spec", "timeZone"))),
        Column("Suspend", lambda obj, now: "True" if dig(obj, "spec", "suspend") else "False"),
        Column("Active", count_of("status", "active"), type="integer"),
        Column("Last Schedule", _last_schedule),
    ),
    ("", "Service"): (
        Column("Type", field("spec", "type")),
        Column("Cluster-IP", lambda obj, now: _or_none(dig(obj, "spec", "clusterIP"))),
        Column("External-IP", _external_ip),
        Column("Port(s)", _service_ports),
    ),
    ("", "Pod"): (Column("Ready", _pod_ready), Column("Status", _pod_status),
                  Column("Restarts", _restarts, type="integer")),
    ("apps", "Deployment"): (
        Column("Ready", _ready_of),
        Column("Up-to-date", int_or_zero("status", "updatedReplicas"), type="integer"),
        Column("Available", int_or_zero("status", "availableReplicas"), type="integer"),
    ),
    ("", "ConfigMap"): (Column("Data", count_of("data"), type="integer"),),
    ("", "Secret"): (Column("Type", field("type")), Column("Data", count_of("data"), type="integer")),
    ("coordination.k8s.io", "Lease"): (Column("Holder", field("spec", "holderIdentity")),),
}


# --- kinds whose whole table differs: Events (as Kubernetes prints them), the timeline, Namespaces,
# PriorityClasses


def _event_first(obj: dict[str, Any], now: datetime) -> Cell:
    return since(obj.get("firstTimestamp"), now) or since(obj.get("eventTime"), now) or "<unknown>"


def _event_last(obj: dict[str, Any], now: datetime) -> Cell:
    series = obj.get("series")
    if isinstance(series, dict) and series.get("lastObservedTime"):
        return since(series.get("lastObservedTime"), now)
    return since(obj.get("lastTimestamp"), now) or _event_first(obj, now)


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
    return str(dig(obj, "status", "phase") or "Active")


def _global_default(obj: dict[str, Any], now: datetime) -> Cell:
    return "true" if obj.get("globalDefault") else "false"


_NAME_WIDE = Column("Name", name_of, priority=1, description="Name of the object.")

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
    # Karmada's own table of Clusters (not a CRD: its aggregated API prints these)
    ("cluster.karmada.io", "Cluster"): (
        NAME, Column("Version", field("status", "kubernetesVersion")),
        Column("Mode", field("spec", "syncMode")),
        Column("Ready", _ready_or_unknown), AGE,
        Column("Zones", _joined("spec", "zones"), priority=1),
        Column("Region", lambda obj, now: _or_none(dig(obj, "spec", "region")), priority=1),
        Column("Provider", lambda obj, now: _or_none(dig(obj, "spec", "provider")), priority=1),
        Column("API-Endpoint", field("spec", "apiEndpoint"), priority=1),
        Column("Proxy-URL", lambda obj, now: _or_none(dig(obj, "spec", "proxyURL")), priority=1),
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        NAME, Column("Created At", _created_at, type="date")),
    ("scheduling.k8s.io", "PriorityClass"): (
        NAME, Column("Value", field("value"), type="integer"), Column("Global-Default", _global_default), AGE,
        Column("PreemptionPolicy", field("preemptionPolicy")),
    ),
}


__all__ = ["COLUMNS", "FULL_COLUMNS"]
