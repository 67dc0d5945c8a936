"""What a member cluster's API server asks of whatever runs its containers: logs, exec and attach.

A kube-apiserver hands ``pods/NAME/log``, ``exec`` and ``attach`` to the kubelet of the pod's
node. A member served by this API server hands them to a :class:`ContainerRuntime` the member
implements (a simulated member tells its containers' logs from the pods' status and runs no
processes); the HTTP and WebSocket parts stay here (:mod:`~fleetkeeper.apiserver.podlogs`,
:mod:`~fleetkeeper.apiserver.podexec`), as do the refusals a kubelet makes on the pod object
alone: a container the pod does not have, a container not started yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from fleetkeeper import errors

#: one log line: when it was written (RFC 3339, ``""`` when unknown) and its text
LogLine = tuple[str, str]
#: the pod subresources a runtime serves
SUBRESOURCES = frozenset({"log", "exec", "attach"})


class ContainerRuntime(Protocol):
    """The containers of a member's pods, as its API server sees them."""

    def log(self, pod: Mapping[str, Any], container: str) -> Sequence[LogLine]:
        """The lines ``container`` of ``pod`` has written so far (none before it started); the
        same pod object gives the same lines."""
        ...

    def cannot_run(self, pod: Mapping[str, Any], container: str, *, action: str,
                   command: Sequence[str]) -> str:
        """Why ``action`` (``exec`` of ``command``, or ``attach``) cannot run in ``container``: the
        message the error channel carries (a runtime that runs no processes)."""
        ...


def containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod's (regular) containers."""
    spec = pod.get("spec") or {}
    found = spec.get("containers") if isinstance(spec, Mapping) else None
    return [c for c in found or [] if isinstance(c, Mapping)] if isinstance(found, list) else []


def pod_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def container_named(pod: Mapping[str, Any], asked: str | None, *, default_first: bool = False) -> str:
    """The container a request names: one of the pod's (``400`` otherwise); when it names none,
    the only one — or the first, with ``default_first`` (exec and attach, where kubectl names its
    default) — else ``400`` listing the choices."""
    names = [str(c.get("name")) for c in containers(pod)]
    if asked:
        if asked not in names:
            raise errors.BadRequest(f"container {asked[:100]} is not valid for pod {pod_name(pod)}")
        return asked
    if len(names) == 1 or (default_first and names):
        return names[0]
    raise errors.BadRequest(f"a container name must be specified for pod {pod_name(pod)}, "
                            f"choose one of: [{' '.join(names[:32])}]")


def waiting(pod: Mapping[str, Any], container: str) -> errors.BadRequest:
    """What a log request for a container that has not started is told (Kubernetes' words)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    state = next((s.get("state") or {} for s in statuses
                  if isinstance(s, Mapping) and s.get("name") == container), {})
    reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
    return errors.BadRequest(f'container "{container}" in pod "{pod_name(pod)}" '
                             f"is waiting to start: {reason}")


__all__ = ["SUBRESOURCES", "ContainerRuntime", "LogLine", "container_named", "containers", "pod_name",
           "waiting"]
