"""``fleetkeeper member-sim``'s fault injection: a small admin API on a port of its own.

A member that is down or black-holed must look like that to a client — refused or silent
connections — which no HTTP handler can do, so the member's public address belongs to a
relay (:class:`~fleetkeeper.cmd.member_wire.FrontDoor`) and faults are set through this API,
served only on a separate *admin port* so it stays reachable while the member is down
(:class:`MemberSite` routes by the port a connection came in on; the member's own port
answers ``/admin/…`` 404 and the admin port answers nothing else). The member's bearer token
is needed for every call:

* ``GET /admin/state`` — ``{"name", "state", "nodes"}``;
* ``POST /admin/state`` ``{"state": "down"|"blackhole"|"unhealthy"|"up"}``;
* ``POST /admin/nodes`` ``{"count": N}`` (at most :data:`MAX_NODES`);
* ``POST /admin/compact`` — forget the watch history and end every watch, as an API server
  restart does: clients resuming from an older revision get ``410 Gone`` and list again.

Bodies are JSON objects of at most :data:`MAX_BODY` bytes.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from fleetkeeper import errors
from fleetkeeper.api.limits import read_body
from fleetkeeper.cmd.member_wire import FrontDoor
from fleetkeeper.members.simulated.api_store import ClusterStore
from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.faults import ApiState

#: the largest admin request body
MAX_BODY = 4096
#: the most nodes ``POST /admin/nodes`` sets
MAX_NODES = 5000
Handler = Callable[[Request], Awaitable[Response]]


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


class AdminApi:
    """The fault-injection API of one member (see the module notes)."""

    def __init__(self, cluster: SimulatedCluster, store: ClusterStore, *, token: str | None,
                 door: FrontDoor | None) -> None:
        self.cluster = cluster
        self.store = store
        self.door = door
        self._token = token
        guard = self._guarded
        self._app = Starlette(routes=[
            Route("/admin/state", guard(self._state), methods=["GET", "POST"]),
            Route("/admin/nodes", guard(self._nodes), methods=["POST"]),
            Route("/admin/compact", guard(self._compact), methods=["POST"]),
            Route("/{path:path}", guard(self._not_found), methods=["GET", "HEAD", "POST", "PUT", "PATCH",
                                                                    "DELETE"]),
        ])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def _guarded(self, handler: Handler) -> Handler:
        async def guarded(request: Request) -> Response:
            try:
                self._authenticate(request.headers.get("authorization") or "")
                return await handler(request)
            except errors.ApiError as exc:
                return _json(exc.to_status(), exc.code)

        return guarded

    def _authenticate(self, given: str) -> None:
        if self._token is None:
            return
        scheme, _, token = given.partition(" ")
        valid = hmac.compare_digest(token.strip().encode(), self._token.encode())
        if scheme.lower() != "bearer" or not valid:
            raise errors.Unauthorized("Unauthorized")

    async def _body(self, request: Request) -> dict[str, Any]:
        raw = await read_body(request, MAX_BODY)
        try:
            body = orjson.loads(raw or b"{}")
        except orjson.JSONDecodeError as exc:
            raise errors.BadRequest(f"the body must be a JSON object: {str(exc)[:100]}") from None
        if not isinstance(body, dict):
            raise errors.BadRequest("the body must be a JSON object")
        return body

    async def _not_found(self, request: Request) -> Response:
        raise errors.NotFound("the server could not find the requested resource")

    async def _state(self, request: Request) -> Response:
        if request.method == "POST":
            given = (await self._body(request)).get("state")
            try:
                state = ApiState(str(given))
            except ValueError:
                raise errors.BadRequest(f"state {str(given)[:40]!r}: expected one of down, blackhole, "
                                        "unhealthy, up") from None
            await self._set_state(state)
        return _json(self._view())

    async def _set_state(self, state: ApiState) -> None:
        if state in (ApiState.DOWN, ApiState.BLACKHOLE) and self.door is None:
            raise errors.BadRequest(f"state {state.value!r} needs the member's relay (run it with one)")
        if state is ApiState.UNHEALTHY:
            self.cluster.unhealthy()
        elif state is ApiState.UP:
            self.cluster.up()
        if self.door is not None:
            await self.door.set_state(state)

    async def _nodes(self, request: Request) -> Response:
        count = (await self._body(request)).get("count")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_NODES:
            raise errors.BadRequest(f"count {str(count)[:40]}: expected a whole number from 0 "
                                    f"to {MAX_NODES}")
        self.cluster.set_nodes(count)
        return _json(self._view())

    async def _compact(self, request: Request) -> Response:
        self.store.compact()
        return _json(self._view())

    def _view(self) -> dict[str, Any]:
        door = self.door
        state = door.state if door is not None and door.state is not ApiState.UP else self.cluster.state
        return {"name": self.cluster.name, "state": state.value,
                "nodes": len(self.cluster.engine.scheduler.nodes)}


class MemberSite:
    """One ASGI app for both ports: the admin API on ``admin_port``, the member's API elsewhere."""

    def __init__(self, api: ASGIApp, admin: ASGIApp, *, admin_port: int) -> None:
        self._api = api
        self._admin = admin
        self._admin_port = admin_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        port = (scope.get("server") or ("", 0))[1]
        on_admin = scope["type"] in ("http", "websocket") and port == self._admin_port
        await (self._admin if on_admin else self._api)(scope, receive, send)


__all__ = ["MAX_BODY", "MAX_NODES", "AdminApi", "MemberSite"]
