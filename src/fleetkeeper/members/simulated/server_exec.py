"""``pods/NAME/exec`` and ``pods/NAME/attach`` of a simulated cluster: the protocol, no process.

kubectl opens exec and attach as a WebSocket speaking one of Kubernetes' channel protocols
(``v5.channel.k8s.io``, ``v4.channel.k8s.io``): every binary frame starts with its channel
(0 stdin, 1 stdout, 2 stderr, 3 errors, 4 terminal resizes) and the server ends the session
with a ``meta/v1`` ``Status`` on channel 3 — ``Success``, or ``Failure`` saying why. A
simulated container runs no processes, so this endpoint accepts the session as a kubelet
would and reports on channel 3 the failure a kubelet reports when the runtime cannot run the
command (``InternalError``, 500); kubectl prints that message and exits non-zero. What a
kubelet refuses before the upgrade is refused the same way here, as an HTTP ``Status``: an
unknown pod (404), a container the pod does not have, a pod not running, a missing
``command``, no channel protocol in common (400).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response
from starlette.websockets import WebSocket

from fleetkeeper import errors
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated.cluster import SimulatedCluster

#: the channel protocols spoken, most preferred first
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
ERROR_CHANNEL = 3
#: at most this many ``command`` arguments are read (the message names only the first)
MAX_ARGS = 256


async def serve_exec(websocket: WebSocket, cluster: SimulatedCluster) -> None:
    """Serve one exec or attach session (see the module notes)."""
    params = websocket.path_params
    namespace, name, action = params["namespace"], params["name"], params["action"]
    if action not in ("exec", "attach"):
        await _deny(websocket, errors.NotFound("the server could not find the requested resource"))
        return
    try:
        message = await _failure(websocket, cluster, namespace, name, action)
    except errors.ApiError as exc:
        await _deny(websocket, exc)
        return
    offered = list(websocket.scope.get("subprotocols") or [])
    chosen = next((p for p in offered if p in PROTOCOLS), None)
    if chosen is None:
        await _deny(websocket, errors.BadRequest(
            f"unable to upgrade connection: none of the offered protocols {offered[:8]} is supported; "
            f"supported: {', '.join(PROTOCOLS)}"))
        return
    await websocket.accept(subprotocol=chosen)
    status = errors.InternalError(f"Internal error occurred: {message}").to_status()
    await websocket.send_bytes(bytes([ERROR_CHANNEL]) + orjson.dumps(status))
    await websocket.close(1000)


async def _failure(websocket: WebSocket, cluster: SimulatedCluster, namespace: str, name: str,
                   action: str) -> str:
    """What channel 3 says for this session; raise what a kubelet refuses before upgrading."""
    pod = await cluster.get(ObjectRef("v1", "Pod", namespace, name))
    if pod is None:
        raise errors.NotFound(f'pods "{name[:253]}" not found', kind="pods", name=name[:253])
    container = _container(pod, websocket.query_params.get("container"))
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise errors.BadRequest(f"cannot {action} into a container in a completed pod; "
                                f"current phase is {phase}")
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.BadRequest(f"pod {name} does not have a host assigned")
    where = f"container {container!r} of simulated pod {namespace}/{name} runs no processes"
    if action == "attach":
        return f"error attaching to container: {where}, so there is nothing to attach to"
    command = websocket.query_params.getlist("command")[:MAX_ARGS]
    if not command:
        raise errors.BadRequest("you must specify at least 1 command")
    return f"error executing command in container: {where}, so {command[0][:100]!r} cannot be run"


def _container(pod: dict[str, Any], asked: str | None) -> str:
    """The container named (the first when none is: kubectl names its default)."""
    containers = (pod.get("spec") or {}).get("containers") or []
    names = [str(c.get("name")) for c in containers if isinstance(c, dict)]
    if asked is None:
        return names[0] if names else ""
    if asked not in names:
        raise errors.BadRequest(f"container {asked[:100]} is not valid for pod {pod['metadata']['name']}")
    return asked


async def _deny(websocket: WebSocket, exc: errors.ApiError) -> None:
    """Refuse the upgrade with ``exc`` as a ``Status`` (a close where the server cannot answer)."""
    await deny(websocket, Response(orjson.dumps(exc.to_status()), exc.code, media_type="application/json"))


async def deny(websocket: WebSocket, response: Response) -> None:
    """Refuse an upgrade with an HTTP answer, or close it where the server cannot send one."""
    try:
        await websocket.send_denial_response(response)
    except RuntimeError:
        await websocket.close(1008)


__all__ = ["PROTOCOLS", "deny", "serve_exec"]
