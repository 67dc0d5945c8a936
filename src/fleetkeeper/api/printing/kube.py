"""The columns kubectl prints for built-in kinds, as kube-apiserver serves them.

Every table here is a kind's whole row, NAME to the last ``-o wide`` column (``priority: 1``):
Nodes print STATUS, ROLES, AGE, VERSION and with ``-o wide`` their addresses and system info;
Pods READY, STATUS, RESTARTS, AGE and IP, NODE, NOMINATED NODE, READINESS GATES; workloads their
replica counts and CONTAINERS, IMAGES, SELECTOR; Services TYPE … PORT(S) and SELECTOR; Events
LAST SEEN, TYPE, REASON, OBJECT, MESSAGE. A field an object does not have prints as kubectl
prints it then (``<none>``, ``<unknown>``, ``0``), never as an error.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fleetkeeper.api.base import human_duration, parse_time
from fleetkeeper.api.printing.columns import (
    AGE,
    NAME,
    Cell,
    Column,
    condition,
    count_of,
    dig,
    field,
    int_or_zero,
    labels_text,
    message,
    name_of,
    or_none,
    selector_text,
    since,
)

Extractor = Callable[[dict[str, Any], datetime], Cell]


def _ratio(ready: tuple[str, ...], total: tuple[str, ...]) -> Extractor:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        return f"{dig(obj, *ready) or 0}/{dig(obj, *total) or 0}"

    return extract


def _wide_template(*spec: str, selector: tuple[str, ...] | None = ("spec", "selector")) -> tuple[Column, ...]:
    """CONTAINERS and IMAGES of the pod template at ``spec`` (and SELECTOR, unless None)."""

    def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for c in dig(obj, *spec, "containers") or [] if isinstance(c, dict)]

    wide = (Column("Containers", lambda obj, now: ",".join(str(c.get("name") or "") for c in containers(obj)),
                   priority=1, description="Names of each container in the template."),
            Column("Images", lambda obj, now: ",".join(str(c.get("image") or "") for c in containers(obj)),
                   priority=1, description="Images referenced by each container in the template."))
    if selector is None:
        return wide
    path = selector
    return (*wide, Column("Selector", lambda obj, now: selector_text(dig(obj, *path)), priority=1))


# --- Nodes

def _node_status(obj: dict[str, Any], now: datetime) -> Cell:
    ready = condition("Ready")(obj, now)
    shown = ["Unknown" if ready is None else "Ready" if ready == "True" else "NotReady"]
    if dig(obj, "spec", "unschedulable"):
        shown.append("SchedulingDisabled")
    return ",".join(shown)


def _node_roles(obj: dict[str, Any], now: datetime) -> Cell:
    roles: set[str] = set()
    for key, value in (dig(obj, "metadata", "labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key[len("node-role.kubernetes.io/"):]:
            roles.add(key[len("node-role.kubernetes.io/"):])
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or "<none>"


def _address(kind: str) -> Extractor:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        for address in dig(obj, "status", "addresses") or []:
            if isinstance(address, dict) and address.get("type") == kind and address.get("address"):
                return str(address["address"])
        return "<none>"

    return extract


def _node_info(name: str) -> Extractor:
    def extract(obj: dict[str, Any], now: datetime) -> Cell:
        return str(dig(obj, "status", "nodeInfo", name) or "<unknown>")

    return extract


_NODE = (
    NAME, Column("Status", _node_status, description="The status of the node"),
    Column("Roles", _node_roles, description="The roles of the node"), AGE,
    Column("Version", field("status", "nodeInfo", "kubeletVersion")),
    Column("Internal-IP", _address("InternalIP"), priority=1),
    Column("External-IP", _address("ExternalIP"), priority=1),
    Column("OS-Image", _node_info("osImage"), priority=1),
    Column("Kernel-Version", _node_info("kernelVersion"), priority=1),
    Column("Container-Runtime", _node_info("containerRuntimeVersion"), priority=1),
)


# --- Pods

def _containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in dig(obj, "status", "containerStatuses") or [] if isinstance(c, dict)]


def _pod_ready(obj: dict[str, Any], now: datetime) -> Cell:
    statuses = _containers_of(obj)
    total = len(dig(obj, "spec", "containers") or []) or len(statuses)
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _ended(terminated: dict[str, Any]) -> str:
    if terminated.get("reason"):
        return str(terminated["reason"])
    signal = terminated.get("signal")
    return f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode') or 0}"


def _init_status(obj: dict[str, Any]) -> str | None:
    """``Init:…`` while an init container has not finished well, else None."""
    total = len(dig(obj, "spec", "initContainers") or [])
    statuses = [c for c in dig(obj, "status", "initContainerStatuses") or [] if isinstance(c, dict)]
    for i, c in enumerate(statuses):
        terminated, waiting = dig(c, "state", "terminated"), dig(c, "state", "waiting")
        if isinstance(terminated, dict) and not terminated.get("exitCode"):
            continue
        if isinstance(terminated, dict):
            return f"Init:{_ended(terminated)}"
        if isinstance(waiting, dict) and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return f"Init:{waiting['reason']}"
        return f"Init:{i}/{total}"
    return None


def _pod_status(obj: dict[str, Any], now: datetime) -> Cell:
    """What kubectl's STATUS says: the first container's waiting or termination reason, an init
    container's progress, the pod's reason or phase; Terminating while it is deleted."""
    if dig(obj, "metadata", "deletionTimestamp"):
        return "Unknown" if dig(obj, "status", "reason") == "NodeLost" else "Terminating"
    shown = str(dig(obj, "status", "reason") or dig(obj, "status", "phase") or "Unknown")
    scheduled = [c for c in dig(obj, "status", "conditions") or [] if isinstance(c, dict)
                 and c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"]
    shown = "SchedulingGated" if scheduled else shown
    initializing = _init_status(obj)
    if initializing is not None:
        return initializing
    running = False
    for c in reversed(_containers_of(obj)):
        waiting, terminated = dig(c, "state", "waiting", "reason"), dig(c, "state", "terminated")
        if waiting:
            shown = str(waiting)
        elif isinstance(terminated, dict):
            shown = _ended(terminated)
        elif c.get("ready") and dig(c, "state", "running") is not None:
            running = True
    if shown == "Completed" and running:
        return "Running" if condition("Ready")(obj, now) == "True" else "NotReady"
    return shown


def _restarts(obj: dict[str, Any], now: datetime) -> Cell:
    """The containers' restarts, and how long ago the last one ended (``3 (2m ago)``) when known."""
    count, last = 0, None
    for c in _containers_of(obj):
        count += int(c.get("restartCount") or 0)
        ended = dig(c, "lastState", "terminated", "finishedAt")
        if isinstance(ended, str) and ended and (last is None or parse_time(ended) > parse_time(last)):
            last = ended
    return f"{count} ({since(last, now)} ago)" if count and last else count


def _pod_ip(obj: dict[str, Any], now: datetime) -> Cell:
    ips = [i for i in dig(obj, "status", "podIPs") or [] if isinstance(i, dict) and i.get("ip")]
    return str(ips[0]["ip"]) if ips else or_none(dig(obj, "status", "podIP"))


def _readiness_gates(obj: dict[str, Any], now: datetime) -> Cell:
    gates = [g.get("conditionType") for g in dig(obj, "spec", "readinessGates") or [] if isinstance(g, dict)]
    if not gates:
        return "<none>"
    return f"{sum(1 for g in gates if condition(str(g))(obj, now) == 'True')}/{len(gates)}"


_POD = (
    NAME, Column("Ready", _pod_ready, description="How many of the pod's containers are ready."),
    Column("Status", _pod_status, description="The aggregate status of the pod's containers."),
    Column("Restarts", _restarts, description="How often the pod's containers restarted, and when last."),
    AGE,
    Column("IP", _pod_ip, priority=1),
    Column("Node", lambda obj, now: or_none(dig(obj, "spec", "nodeName")), priority=1),
    Column("Nominated Node", lambda obj, now: or_none(dig(obj, "status", "nominatedNodeName")), priority=1),
    Column("Readiness Gates", _readiness_gates, priority=1),
)


# --- Services, Jobs, CronJobs

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


def _job_status(obj: dict[str, Any], now: datetime) -> Cell:
    held = {kind for kind in ("Complete", "Failed", "Suspended", "FailureTarget", "SuccessCriteriaMet")
            if condition(kind)(obj, now) == "True"}
    finished = [kind for kind in ("Complete", "Failed") if kind in held]
    if finished:
        return finished[0]
    if dig(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    waiting = ("Suspended", "FailureTarget", "SuccessCriteriaMet")
    return next((kind for kind in waiting if kind in held), "Running")


def _job_completions(obj: dict[str, Any], now: datetime) -> Cell:
    wanted = dig(obj, "spec", "completions")
    succeeded = dig(obj, "status", "succeeded") or 0
    if wanted is not None:
        return f"{succeeded}/{wanted}"
    parallelism = dig(obj, "spec", "parallelism")
    several = isinstance(parallelism, int) and parallelism > 1
    return f"{succeeded}/1 of {parallelism}" if several else f"{succeeded}/1"


def _job_duration(obj: dict[str, Any], now: datetime) -> Cell:
    started, completed = dig(obj, "status", "startTime"), dig(obj, "status", "completionTime")
    if not isinstance(started, str) or not started:
        return ""
    try:
        end = parse_time(completed) if isinstance(completed, str) and completed else now
        return human_duration((end - parse_time(started)).total_seconds())
    except ValueError:
        return "<unknown>"


def _created_at(obj: dict[str, Any], now: datetime) -> Cell:
    value = dig(obj, "metadata", "creationTimestamp")
    return str(value) if value else "<unknown>"


# --- Events (core/v1 as kubectl prints them)

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


def _labels(*path: str) -> Extractor:
    return lambda obj, now: labels_text(dig(obj, *path))


def _last_schedule(obj: dict[str, Any], now: datetime) -> Cell:
    return since(dig(obj, "status", "lastScheduleTime"), now) or "<none>"


def _phase(obj: dict[str, Any], now: datetime) -> Cell:
    return str(dig(obj, "status", "phase") or "Active")


_DATA = Column("Data", count_of("data"), type="integer")
#: NAME as the last, ``-o wide`` column (Events)
NAME_WIDE = Column("Name", name_of, priority=1, format="name", description="Name of the object.")


def _counts(*columns: tuple[str, tuple[str, ...]]) -> tuple[Column, ...]:
    return tuple(Column(name, int_or_zero(*path), type="integer") for name, path in columns)


#: (group, kind) → every column of a built-in kind, in kubectl's order
KUBE_COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("", "Node"): _NODE,
    ("", "Pod"): _POD,
    ("apps", "Deployment"): (
        NAME, Column("Ready", _ratio(("status", "readyReplicas"), ("spec", "replicas"))),
        *_counts(("Up-to-date", ("status", "updatedReplicas")),
                 ("Available", ("status", "availableReplicas"))),
        AGE, *_wide_template("spec", "template", "spec")),
    ("apps", "ReplicaSet"): (
        NAME, *_counts(("Desired", ("spec", "replicas")), ("Current", ("status", "replicas")),
                       ("Ready", ("status", "readyReplicas"))),
        AGE, *_wide_template("spec", "template", "spec")),
    ("apps", "StatefulSet"): (
        NAME, Column("Ready", _ratio(("status", "readyReplicas"), ("spec", "replicas"))), AGE,
        *_wide_template("spec", "template", "spec", selector=None)),
    ("apps", "DaemonSet"): (
        NAME, *_counts(("Desired", ("status", "desiredNumberScheduled")),
                       ("Current", ("status", "currentNumberScheduled")),
                       ("Ready", ("status", "numberReady")),
                       ("Up-to-date", ("status", "updatedNumberScheduled")),
                       ("Available", ("status", "numberAvailable"))),
        Column("Node Selector", _labels("spec", "template", "spec", "nodeSelector")),
        AGE, *_wide_template("spec", "template", "spec")),
    ("batch", "Job"): (
        NAME, Column("Status", _job_status), Column("Completions", _job_completions),
        Column("Duration", _job_duration), AGE, *_wide_template("spec", "template", "spec")),
    ("batch", "CronJob"): (
        NAME, Column("Schedule", field("spec", "schedule")),
        Column("Timezone", lambda obj, now: or_none(dig(obj, "spec", "timeZone"))),
        Column("Suspend", lambda obj, now: "True" if dig(obj, "spec", "suspend") else "False"),
        Column("Active", count_of("status", "active"), type="integer"),
        Column("Last Schedule", _last_schedule),
        AGE, *_wide_template("spec", "jobTemplate", "spec", "template", "spec",
                             selector=("spec", "jobTemplate", "spec", "selector"))),
    ("", "Service"): (
        NAME, Column("Type", field("spec", "type")),
        Column("Cluster-IP", lambda obj, now: or_none(dig(obj, "spec", "clusterIP"))),
        Column("External-IP", _external_ip), Column("Port(s)", _service_ports), AGE,
        Column("Selector", _labels("spec", "selector"), priority=1)),
    ("", "Event"): (
        Column("Last Seen", _event_last), Column("Type", field("type")), Column("Reason", field("reason")),
        Column("Object", _event_object),
        Column("Subobject", field("involvedObject", "fieldPath"), priority=1),
        Column("Source", _event_source, priority=1), Column("Message", message),
        Column("First Seen", _event_first, priority=1),
        Column("Count", _event_count, type="integer", priority=1), NAME_WIDE),
    ("", "Namespace"): (NAME, Column("Status", _phase), AGE),
    ("", "ConfigMap"): (NAME, _DATA, AGE),
    ("", "Secret"): (NAME, Column("Type", field("type")), _DATA, AGE),
    ("coordination.k8s.io", "Lease"): (NAME, Column("Holder", field("spec", "holderIdentity")), AGE),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        NAME, Column("Created At", _created_at, type="date")),
    ("scheduling.k8s.io", "PriorityClass"): (
        NAME, Column("Value", field("value"), type="integer"),
        Column("Global-Default", lambda obj, now: "true" if obj.get("globalDefault") else "false"), AGE,
        Column("PreemptionPolicy", field("preemptionPolicy"))),
}


def kube_columns(group: str, kind: str) -> tuple[Column, ...]:
    """Every column of a built-in kind; NAME and AGE for a kind kubectl has no table for."""
    return KUBE_COLUMNS.get((group, kind)) or (NAME, AGE)


__all__ = ["KUBE_COLUMNS", "NAME_WIDE", "kube_columns"]
