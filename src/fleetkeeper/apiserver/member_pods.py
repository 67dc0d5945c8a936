"""A member's pod subresources on its API server: ``pods/NAME/log``, ``exec`` and ``attach``.

:class:`PodSubresources` routes them to the member's
:class:`~fleetkeeper.apiserver.pods.ContainerRuntime` after authorizing them as kube-apiserver
does (``get`` of ``pods/log``; ``create`` of ``pods/exec`` and ``pods/attach``, WebSockets
included): the log through :mod:`~fleetkeeper.apiserver.podlogs`, the sessions through
:mod:`~fleetkeeper.apiserver.podexec`. ``exec`` and ``attach`` asked without an upgrade are
refused (``400 Upgrade request required``); a refused upgrade is answered with its ``Status``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import Attributes, User, authenticated, authorize
from fleetkeeper.apiserver.member import MemberApi, pod_target
from fleetkeeper.apiserver.podexec import serve_exec
from fleetkeeper.apiserver.podlogs import pod_log
from fleetkeeper.apiserver.proxy_ws import answering_refusals
from fleetkeeper.apiserver.request import Target
from fleetkeeper.apiserver.state import Context, ServerState

SESSIONS = "/api/v1/namespaces/{namespace}/pods/{name}/{action}"


class PodSubresources:
    """A member's ``pods/NAME/log``, ``exec`` and ``attach`` (see the module notes)."""

    def __init__(self, state: ServerState, member: MemberApi, *,
                 authenticate: Callable[[HTTPConnection], User],
                 ready: Callable[[], Awaitable[None]]) -> None:
        self._state = state
        self._member = member
        self._authenticate = authenticate
        self._ready = ready

    def routes(self) -> list[BaseRoute]:
        return [WebSocketRoute(SESSIONS, self.session)]

    def target(self, version: str, rest: str) -> Target | None:
        """The pod subresource ``/api/{version}/{rest}`` addresses (None: another resource)."""
        return pod_target(self._state.scheme, version, rest)

    def _authorize(self, target: Target, user: User, verb: str) -> None:
        authz = self._state.authz
        authorize(user, Attributes(verb=verb, group="", resource="pods", namespace=target.namespace or "",
                                   name=target.name or "", subresource=target.subresource),
                  authz.index if authz is not None else None)

    async def request(self, target: Target, request: Request, user: User) -> Response:
        """``GET …/pods/NAME/log``; ``exec`` and ``attach`` without an upgrade are refused."""
        request.state.target = target  # for the request metrics
        if target.subresource != "log":
            raise errors.BadRequest("Upgrade request required")
        if request.method not in ("GET", "HEAD"):
            raise errors.MethodNotAllowed(f"{request.method} is not supported on pods/log")
        self._authorize(target, user, "get")
        ctx = Context(target, user, request.query_params, request.headers.get("accept") or "",
                      request.headers.get("user-agent") or "")
        return await pod_log(self._state, ctx, self._member.runtime)

    async def session(self, websocket: WebSocket) -> None:
        """``pods/NAME/exec`` or ``attach`` as a WebSocket."""
        async with answering_refusals(websocket):
            target = self.target("v1", SESSIONS.removeprefix("/api/v1/").format(**websocket.path_params))
            if target is None or target.subresource not in ("exec", "attach"):
                raise errors.NotFound("the server could not find the requested resource")
            user = self._authenticate(websocket)
            authenticated(user)
            self._authorize(target, user, "create")
            await self._ready()
            await serve_exec(websocket, self._state, self._member.runtime, namespace=target.namespace or "",
                             name=target.name or "", action=target.subresource)


__all__ = ["SESSIONS", "PodSubresources"]
