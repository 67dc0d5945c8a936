"""The cluster proxy's way to the simulated members a process serves in-process.

``fleetkeeper up`` runs its members (``simulated://NAME``) in its own event loop, so its
cluster proxy (:mod:`fleetkeeper.apiserver.proxy`) reaches them without a socket: each
member's Kubernetes API (:mod:`~fleetkeeper.cmd.member_api`: the plane's API server over the
member's store) is called through
:class:`~fleetkeeper.apiserver.transport.InProcessTransport`, streams included, and
WebSockets (``kubectl exec``) through :class:`~fleetkeeper.apiserver.asgi_socket.AsgiDialer`.
A member made down by a fault refuses the connection, as it would over the wire, and a black
hole leaves a request unanswered until the member's call timeout (then ``503`` naming the
timeout); its fault-injection API (``member-sim``'s) is not served this way. A CRD given to such a
member is served by it alone: the member's scheme has classes of its own for the kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.types import ASGIApp

from fleetkeeper.apiserver.asgi_socket import AsgiDialer
from fleetkeeper.apiserver.proxy import Connection
from fleetkeeper.apiserver.proxy_ws import Socket
from fleetkeeper.apiserver.transport import InProcessTransport
from fleetkeeper.clock import Clock
from fleetkeeper.cmd.member_api import member_app
from fleetkeeper.errors import ServiceUnavailable
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.faults import ApiState, refuses

#: how long a request to a black-holed member goes unanswered when the member sets no call timeout
BLACKHOLE_SECONDS = 30.0


class _Reachable(httpx.AsyncBaseTransport):
    """Calls one simulated member's API in-process, unless a fault makes it refuse connections
    (down: at once) or swallow them (a black hole: no answer, for the member's call timeout)."""

    def __init__(self, cluster: SimulatedCluster, server: ASGIApp) -> None:
        self._cluster = cluster
        self._inner = InProcessTransport(server)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        cluster = self._cluster
        if cluster.state is ApiState.BLACKHOLE:
            waited = cluster.call_timeout or BLACKHOLE_SECONDS
            await cluster.clock.sleep(waited)
            raise httpx.ReadTimeout(f"member cluster {cluster.name!r}: no answer within {waited:g}s",
                                    request=request)
        if refuses(cluster.state):
            raise httpx.ConnectError(f"member cluster {cluster.name!r}: connection refused", request=request)
        return await self._inner.handle_async_request(request)


class _ReachableSockets:
    """Opens WebSockets to one simulated member in-process, unless a fault makes it refuse them."""

    def __init__(self, cluster: SimulatedCluster, server: ASGIApp) -> None:
        self._cluster = cluster
        self._inner = AsgiDialer(server, f"{cluster.name}.simulated")

    async def dial(self, target: str, *, headers: Sequence[tuple[str, str]],
                   subprotocols: Sequence[str]) -> Socket:
        if refuses(self._cluster.state):
            raise ServiceUnavailable(f"member cluster {self._cluster.name!r}: connection refused")
        return await self._inner.dial(target, headers=headers, subprotocols=subprotocols)


class SimulatedMembers:
    """A :class:`~fleetkeeper.apiserver.proxy.MemberTransport` for ``simulated://NAME`` endpoints:
    the clusters of the fleet shared on ``clock``."""

    def __init__(self, clock: Clock) -> None:
        self._fleet = SimulatedFleet.for_clock(clock)
        self._servers: dict[str, tuple[_Reachable, _ReachableSockets]] = {}

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        endpoint = str((cluster.get("spec") or {}).get("apiEndpoint") or "")
        if not endpoint.startswith("simulated://"):
            return None
        parts = urlsplit(endpoint)
        name = parts.netloc or parts.path.lstrip("/")
        if name not in self._fleet:
            owner = (cluster.get("metadata") or {}).get("name")
            raise ServiceUnavailable(f'cluster "{owner}" is unreachable: its simulated member {name!r} '
                                     "does not run in this process")
        reached = self._servers.get(name)
        if reached is None:
            member = self._fleet[name]
            server = member_app(member, token=None).app
            reached = self._servers[name] = (_Reachable(member, server), _ReachableSockets(member, server))
        return Connection(f"http://{name}.simulated", transport=reached[0], dialer=reached[1])


__all__ = ["SimulatedMembers"]
