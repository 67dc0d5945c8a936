"""``pods/NAME/exec`` and ``pods/NAME/attach`` of a member: kubectl's WebSocket protocols.

kubectl opens exec and attach as a WebSocket speaking one of Kubernetes' channel protocols
(``v5.channel.k8s.io``, ``v4.channel.k8s.io``): every binary frame starts with its channel (0 stdin,
1 stdout, 2 stderr, 3 errors, 4 terminal resizes) and the server ends the session with a
``meta/v1`` ``Status`` on channel 3 — ``Success``, or ``Failure`` saying why. The member's
:class:`~fleetkeeper.apiserver.pods.ContainerRuntime` runs no processes, so the session is
accepted as a kubelet would accept it and channel 3 carries the failure a kubelet reports when
the runtime cannot run the command (``InternalError``, 500) in the runtime's words; kubectl
prints that message and exits non-zero. What a kubelet refuses before the upgrade is refused the
same way here, as an HTTP ``Status``: an unknown pod (404), a container the pod does not have, a
pod finished or not yet on a node, a missing ``command``, no channel protocol in common (400).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.websockets import WebSocket

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.pods import ContainerRuntime, container_named, pod_name
from fleetkeeper.apiserver.state import ServerState

POD = GroupKind("", "Pod")
#: the channel protocols spoken, most preferred first
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
ERROR_CHANNEL = 3
#: at most this many ``command`` arguments are read (the message names only the first)
MAX_ARGS = 256
#: at most this many offered subprotocols are named in a refusal
MAX_NAMED = 8


def _check_runnable(pod: Mapping[str, Any], action: str) -> None:
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise errors.BadRequest(f"cannot {action} into a container in a completed pod; "
                                f"current phase is {phase}")
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.BadRequest(f"pod {pod_name(pod)} does not have a host assigned")


async def serve_exec(websocket: WebSocket, state: ServerState, runtime: ContainerRuntime, *,
                     namespace: str, name: str, action: str) -> None:
    """Serve one exec or attach session (see the module notes); raises the ``ApiError`` a kubelet
    answers before upgrading (the caller refuses the upgrade with it)."""
    pod = await state.store.get(POD, namespace, name)
    container = container_named(pod, websocket.query_params.get("container"), default_first=True)
    _check_runnable(pod, action)
    command = websocket.query_params.getlist("command")[:MAX_ARGS]
    if action == "exec" and not command:
        raise errors.BadRequest("you must specify at least 1 command")
    offered = list(websocket.scope.get("subprotocols") or [])
    chosen = next((p for p in offered if p in PROTOCOLS), None)
    if chosen is None:
        named = [p[:64] for p in offered[:MAX_NAMED]]
        raise errors.BadRequest(f"unable to upgrade connection: none of the offered protocols {named} is "
                                f"supported; supported: {', '.join(PROTOCOLS)}")
    message = runtime.cannot_run(pod, container, action=action, command=command)
    await websocket.accept(subprotocol=chosen)
    status = errors.InternalError(f"Internal error occurred: {message}").to_status()
    await websocket.send_bytes(bytes([ERROR_CHANNEL]) + orjson.dumps(status))
    await websocket.close(1000)


__all__ = ["ERROR_CHANNEL", "MAX_ARGS", "PROTOCOLS", "serve_exec"]
