"""``pods/NAME/log`` of a simulated cluster: what its containers would have printed.

A simulated container runs nothing, so its log is told from the pod's status, the same
answer for the same pod on the same clock: the container started (with its image), became
ready, exited and was restarted while its workload is crashed (``crashWorkload``), and
terminated. Kubernetes' query parameters are honoured: ``container`` (needed when the pod has
several), ``tailLines``, ``timestamps`` (each line then starts with its RFC 3339 time where the
status says when it happened) and ``follow`` — the lines so far, then each new one as the pod
changes (a line not told before: a restart, ready again after healing), until the pod
terminates or is deleted, the client leaves or the watch bound ends.

A container that has not started answers ``400`` with Kubernetes' words
(``container "c" in pod "p" is waiting to start: ContainerCreating``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.members.simulated.lifecycle import CRASH_BACKOFF_MAX, CRASH_BACKOFF_START
from fleetkeeper.members.simulated.objects import Obj, ObjectKey

#: at most this many lines of ``tailLines``
MAX_TAIL = 100_000
Line = tuple[str, str]  # (when, text); when may be ""


def container_of(pod: Obj, asked: str | None) -> dict[str, Any]:
    """The container a log request names (the only one when it names none)."""
    containers = [c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)]
    name = pod["metadata"]["name"]
    if asked:
        for container in containers:
            if container.get("name") == asked:
                return container
        raise errors.BadRequest(f"container {asked[:100]} is not valid for pod {name}")
    if len(containers) != 1:
        names = " ".join(str(c.get("name")) for c in containers)
        raise errors.BadRequest(f"a container name must be specified for pod {name}, "
                                f"choose one of: [{names}]")
    return containers[0]


def _status_of(pod: Obj, container: str) -> dict[str, Any]:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            return dict(status)
    return {}


def _ready_since(pod: Obj) -> str:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return str(condition.get("lastTransitionTime") or "")
    return ""


def log_lines(pod: Obj, container: dict[str, Any]) -> list[Line]:
    """The container's log, told from the pod's status (see the module notes)."""
    name, status = str(container.get("name")), _status_of(pod, str(container.get("name")))
    state = status.get("state") or {}
    started = (pod.get("status") or {}).get("startTime") or ""
    if not status or ("waiting" in state and state["waiting"].get("reason") == "ContainerCreating"):
        return []
    lines: list[Line] = [(str(started), f"container {name} started (image {container.get('image')})")]
    for restart in range(1, int(status.get("restartCount") or 0) + 1):
        backoff = min(CRASH_BACKOFF_MAX, CRASH_BACKOFF_START * 2 ** (restart - 1))
        lines.append(("", f"container {name} exited with code 1 (Error): its workload is crashed "
                          f"(fault crashWorkload); restart {restart}, back-off {backoff:g}s"))
    if status.get("ready"):
        since = _ready_since(pod)
        lines.append((since, f"container {name} is ready"))
    terminated = state.get("terminated")
    if terminated:
        lines.append((str(terminated.get("finishedAt") or ""),
                      f"container {name} terminated: {terminated.get('reason')} "
                      f"(exit code {terminated.get('exitCode')})"))
    return lines


def _waiting(pod: Obj, container: dict[str, Any]) -> errors.BadRequest:
    state = _status_of(pod, str(container.get("name"))).get("state") or {}
    reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
    return errors.BadRequest(f'container "{container.get("name")}" in pod "{pod["metadata"]["name"]}" '
                             f"is waiting to start: {reason}")


def _render(lines: list[Line], *, timestamps: bool) -> bytes:
    return b"".join((f"{when} {text}\n" if timestamps and when else f"{text}\n").encode()
                    for when, text in lines)


def _tail(request: Request) -> int | None:
    raw = request.query_params.get("tailLines")
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) > MAX_TAIL:
        raise errors.BadRequest(f"tailLines: must be a whole number of at most {MAX_TAIL}, got {raw[:20]!r}")
    return int(raw)


Follow = Callable[[ObjectKey], AsyncIterator[tuple[str, Obj]]]


def pod_log(request: Request, pod: Obj, *, follow: Follow,
            stream: Callable[[AsyncIterator[bytes]], Response]) -> Response:
    """The answer to ``GET …/pods/NAME/log``: the lines so far, or (``follow``) a stream of them."""
    container = container_of(pod, request.query_params.get("container"))
    lines = log_lines(pod, container)
    if not lines:
        raise _waiting(pod, container)
    tail = _tail(request)
    timestamps = request.query_params.get("timestamps") in ("true", "1")
    shown = lines[-tail:] if tail else [] if tail == 0 else lines
    if request.query_params.get("follow") not in ("true", "1"):
        return Response(_render(shown, timestamps=timestamps), media_type="text/plain")

    async def more() -> AsyncIterator[bytes]:
        yield _render(shown, timestamps=timestamps)
        told = set(lines)
        async for kind, changed in follow(ObjectKey("", "Pod", pod["metadata"]["namespace"],
                                                     pod["metadata"]["name"])):
            if kind == "DELETED":
                return
            new = [line for line in log_lines(changed, container) if line not in told]
            if new:
                yield _render(new, timestamps=timestamps)
                told.update(new)
            if ((_status_of(changed, str(container.get("name"))).get("state") or {}).get("terminated")):
                return

    return stream(more())


__all__ = ["MAX_TAIL", "container_of", "log_lines", "pod_log"]
