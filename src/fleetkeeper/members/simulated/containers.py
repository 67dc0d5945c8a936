"""What a simulated member's containers print, and why they cannot run a command.

A simulated container runs nothing, so its log is told from the pod's status — the same
lines for the same pod object: the container started (with its image), became ready, exited
and was restarted while its workload is crashed (``crashWorkload``, with each back-off),
and terminated; each line carries the time the status gives for it (``""`` where it gives
none). ``exec`` and ``attach`` are answered with why they cannot be: no process runs there.

:class:`SimulatedContainers` is what the member's API server asks for both (it has the shape
of :class:`fleetkeeper.apiserver.pods.ContainerRuntime`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleetkeeper.members.simulated.lifecycle import CRASH_BACKOFF_MAX, CRASH_BACKOFF_START

#: (when, text); when is RFC 3339 or ""
Line = tuple[str, str]


def _status_of(pod: Mapping[str, Any], container: str) -> Mapping[str, Any]:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if isinstance(status, Mapping) and status.get("name") == container:
            return status
    return {}


def _image_of(pod: Mapping[str, Any], container: str) -> str:
    for spec in (pod.get("spec") or {}).get("containers") or []:
        if isinstance(spec, Mapping) and spec.get("name") == container:
            return str(spec.get("image"))
    return ""


def _ready_since(pod: Mapping[str, Any]) -> str:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return str(condition.get("lastTransitionTime") or "")
    return ""


def log_lines(pod: Mapping[str, Any], container: str) -> list[Line]:
    """The container's log, told from the pod's status (see the module notes)."""
    status = _status_of(pod, container)
    state = status.get("state") or {}
    if not status or ("waiting" in state and state["waiting"].get("reason") == "ContainerCreating"):
        return []
    started = str((pod.get("status") or {}).get("startTime") or "")
    lines: list[Line] = [(started, f"container {container} started (image {_image_of(pod, container)})")]
    for restart in range(1, int(status.get("restartCount") or 0) + 1):
        backoff = min(CRASH_BACKOFF_MAX, CRASH_BACKOFF_START * 2 ** (restart - 1))
        lines.append(("", f"container {container} exited with code 1 (Error): its workload is crashed "
                          f"(fault crashWorkload); restart {restart}, back-off {backoff:g}s"))
    if status.get("ready"):
        lines.append((_ready_since(pod), f"container {container} is ready"))
    terminated = state.get("terminated")
    if terminated:
        lines.append((str(terminated.get("finishedAt") or ""),
                      f"container {container} terminated: {terminated.get('reason')} "
                      f"(exit code {terminated.get('exitCode')})"))
    return lines


class SimulatedContainers:
    """The containers of a simulated member's pods, as its API server asks for them."""

    def log(self, pod: Mapping[str, Any], container: str) -> Sequence[Line]:
        return log_lines(pod, container)

    def cannot_run(self, pod: Mapping[str, Any], container: str, *, action: str,
                   command: Sequence[str]) -> str:
        meta = pod.get("metadata") or {}
        where = (f"container {container!r} of simulated pod {meta.get('namespace')}/{meta.get('name')} "
                 "runs no processes")
        if action == "attach" or not command:
            return f"error attaching to container: {where}, so there is nothing to attach to"
        return f"error executing command in container: {where}, so {command[0][:100]!r} cannot be run"


__all__ = ["Line", "SimulatedContainers", "log_lines"]
