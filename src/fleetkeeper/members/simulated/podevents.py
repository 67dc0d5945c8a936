"""What the scheduler and the kubelet of a simulated cluster say about a pod, in their words.

The reasons and messages are Kubernetes' own (kube-scheduler's ``Scheduled`` and
``FailedScheduling``, its preemption's ``Preempted``; the kubelet's container events with
the container's ``fieldPath``), so ``kubectl describe pod`` reads as it does on a real
cluster. A crash loop restarts the container each back-off — ``Pulled``, ``Created``,
``Started`` — then it exits: ``BackOff``, and ``Unhealthy`` when it has a readiness probe
(the probe finds nothing listening). Containers are the pod's ``spec.containers``; init
containers are not modelled.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper.members.simulated.events import WARNING, EventLog, Involved
from fleetkeeper.members.simulated.network import format_ip
from fleetkeeper.members.simulated.pods import Pod

SCHEDULER = "default-scheduler"
KUBELET = "kubelet"


def reference(pod: Pod, container: str = "") -> Involved:
    """The pod, or one of its containers."""
    return Involved("v1", "Pod", pod.namespace, pod.name, pod.uid,
                    f"spec.containers{{{container}}}" if container else "")


def _containers(pod: Pod) -> list[dict[str, Any]]:
    return [c for c in pod.spec.get("containers") or [] if isinstance(c, dict)]


def scheduled(log: EventLog, pod: Pod) -> None:
    log.record(reference(pod), "Scheduled", f"Successfully assigned {pod.namespace}/{pod.name} to {pod.node}",
               component=SCHEDULER)


def failed_scheduling(log: EventLog, pod: Pod) -> None:
    log.record(reference(pod), "FailedScheduling", pod.unschedulable, component=SCHEDULER, type=WARNING)


def preempted(log: EventLog, victim: Pod, *, by: Pod, node: str) -> None:
    log.record(reference(victim), "Preempted", f"Preempted by pod {by.uid} on node {node}",
               component=SCHEDULER)


def started(log: EventLog, pod: Pod) -> None:
    """The kubelet started the pod's containers (again, in a crash loop)."""
    host = pod.node or ""
    for container in _containers(pod):
        name = str(container.get("name", ""))
        ref = reference(pod, name)
        image = container.get("image", "")
        log.record(ref, "Pulled", f'Container image "{image}" already present on machine', component=KUBELET,
                   host=host)
        log.record(ref, "Created", f"Created container: {name}", component=KUBELET, host=host)
        log.record(ref, "Started", f"Started container {name}", component=KUBELET, host=host)


def crashed(log: EventLog, pod: Pod) -> None:
    """The containers exited and wait for their back-off; a readiness probe failed before."""
    host = pod.node or ""
    for container in _containers(pod):
        name = str(container.get("name", ""))
        ref = reference(pod, name)
        probe = container.get("readinessProbe")
        if isinstance(probe, dict):
            log.record(ref, "Unhealthy", f"Readiness probe failed: {_probe_failure(pod, container, probe)}",
                       component=KUBELET, host=host, type=WARNING)
        log.record(ref, "BackOff", f"Back-off restarting failed container {name} in pod "
                   f"{pod.name}_{pod.namespace}({pod.uid})", component=KUBELET, host=host, type=WARNING)


def killing(log: EventLog, pod: Pod) -> None:
    """The pod was deleted: the kubelet stops its running containers."""
    host = pod.node or ""
    for container in _containers(pod):
        name = str(container.get("name", ""))
        log.record(reference(pod, name), "Killing", f"Stopping container {name}", component=KUBELET,
                   host=host)


def _probe_failure(pod: Pod, container: dict[str, Any], probe: dict[str, Any]) -> str:
    """What the kubelet reports when a probe finds nothing listening."""
    address = format_ip(pod.ip) if pod.ip else ""
    for kind in ("httpGet", "tcpSocket", "grpc"):
        action = probe.get(kind)
        if isinstance(action, dict):
            port = _port(container, action.get("port"))
            refused = f"dial tcp {address}:{port}: connect: connection refused"
            if kind == "httpGet":
                scheme = str(action.get("scheme") or "HTTP").lower()
                return f'Get "{scheme}://{address}:{port}{action.get("path") or "/"}": {refused}'
            return refused
    return "command exited with code 1"


def _port(container: dict[str, Any], port: Any) -> str:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(port, str) and not port.isdigit():
        for declared in container.get("ports") or []:
            if isinstance(declared, dict) and declared.get("name") == port:
                return str(declared.get("containerPort"))
    return str(port)


__all__ = ["KUBELET", "SCHEDULER", "crashed", "failed_scheduling", "killing", "preempted", "reference",
           "scheduled", "started"]
