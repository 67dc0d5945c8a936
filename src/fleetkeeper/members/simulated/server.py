"""A Kubernetes API in front of one simulated cluster, so it can be reached over HTTPS.

:class:`MemberServer` is an ASGI app that serves a
:class:`~fleetkeeper.members.simulated.SimulatedCluster` the way a kube-apiserver
serves a cluster — enough for lightkube, the other Python clients and kubectl:
``/version``, discovery (``server_discovery.py``), ``/readyz``/``/healthz``/``/livez``,
and for every served resource, namespaced or not, list (label and field selectors),
watch (``server_watch.py``: newline-delimited JSON events resuming from a
``resourceVersion``, ``410 Expired`` past the history, kubectl's *WatchList*, streamed until
the client leaves or the server closes), get,
create, update, server-side apply (``PATCH`` ``application/apply-patch+yaml`` with
``fieldManager`` and ``force``, creating when absent), JSON merge patches and delete;
``pods/NAME/log`` tells a container's log from the pod's status (``server_logs.py``); lists,
gets and watches answer kubectl's ``as=Table`` with kubectl's columns (``server_tables.py``);
``pods/NAME/exec`` and ``attach`` speak kubectl's WebSocket protocols but run nothing, and say
so on the error channel (``server_exec.py``).
Every write goes through the cluster's own server-side apply, so field ownership,
``generation`` and ``resourceVersion`` are the cluster's. Errors are ``Status``
objects. A minimal ``/openapi/v3`` lets kubectl leave validation to the server (which
ignores ``fieldValidation``: unknown fields are kept).

What it does not do (the cluster's controllers own status; this is a test double, not
a conformant server): writes to ``/status`` and ``/scale`` (405), JSON patches (415),
``dryRun``, paging (every list is one page). Strategic merge patches are applied as
JSON merge patches (lists are replaced, not merged by key). Every request but the
public health and version endpoints needs the bearer token when one is set.

**Faults over the wire.** A cluster that is down or black-holed must look like that to
a client — refused or silent connections — which an HTTP handler cannot do. The
public address therefore belongs to a relay (``server_wire.py``) and fault injection
is a small admin API, served only on a separate *admin port* so it stays reachable
while the member is down (a server made without one serves it on its only address):
``GET /admin/state``; ``POST /admin/state`` ``{"state": "down"|"blackhole"|"unhealthy"|"up"}``;
``POST /admin/nodes`` ``{"count": N}``; ``POST /admin/compact`` (forget the watch
history: resuming watches get 410).
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from fleetkeeper import errors
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated.cluster import SimulatedCluster, matcher
from fleetkeeper.members.simulated.faults import ApiState
from fleetkeeper.members.simulated.objects import GroupKind, Obj, ObjectKey
from fleetkeeper.members.simulated.server_discovery import Served, ServedResources, not_found, version_info
from fleetkeeper.members.simulated.server_exec import deny, serve_exec
from fleetkeeper.members.simulated.server_logs import pod_log
from fleetkeeper.members.simulated.server_tables import Printing
from fleetkeeper.members.simulated.server_watch import ChangeLog, ExpiredError, WatchResponse, event_line
from fleetkeeper.members.simulated.server_wire import FrontDoor
from fleetkeeper.members.simulated.server_write import FieldFilter, fields_filter, write

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
PUBLIC_PATHS = frozenset({"/readyz", "/healthz", "/livez", "/version"})
#: the longest a watch lasts when the client does not say (it re-watches from its last revision)
MAX_WATCH = 1800.0
Handler = Callable[[Request], Awaitable[Response]]


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


class MemberServer:
    """The ASGI app (see the module notes)."""

    def __init__(self, cluster: SimulatedCluster, *, token: str | None, admin_port: int | None = None,
                 door: FrontDoor | None = None) -> None:
        self.cluster = cluster
        self.door = door
        self.resources = ServedResources(cluster)
        self._token = token
        self._admin_port = admin_port
        self._logs: dict[GroupKind, ChangeLog] = {}
        self._closing = asyncio.Event()
        guard = self._guarded
        self._app = Starlette(routes=[
            Route("/version", guard(self._version)),
            *(Route(path, guard(self._health)) for path in ("/readyz", "/healthz", "/livez")),
            Route("/api", guard(self._core_versions)),
            Route("/apis", guard(self._group_list)),
            Route("/openapi/v3", guard(self._openapi_index)),
            Route("/openapi/v3/{rest:path}", guard(self._openapi_document)),
            Route("/api/{rest:path}", guard(self._core), methods=METHODS),
            Route("/apis/{rest:path}", guard(self._grouped), methods=METHODS),
            Route("/admin/state", guard(self._admin_state), methods=["GET", "POST"]),
            Route("/admin/nodes", guard(self._admin_nodes), methods=["POST"]),
            Route("/admin/compact", guard(self._admin_compact), methods=["POST"]),
            WebSocketRoute("/api/v1/namespaces/{namespace}/pods/{name}/{action}", self._exec),
        ])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            refused = self._refusal(scope)
            if refused is not None and scope["type"] == "websocket":
                await deny(WebSocket(scope, receive, send), refused)
                return
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self._app(scope, receive, send)

    async def _exec(self, websocket: WebSocket) -> None:
        """``pods/NAME/exec`` and ``attach``: the protocol, no process (``server_exec.py``)."""
        await serve_exec(websocket, self.cluster)

    def close(self) -> None:
        """End every open watch (so a server can stop without waiting for them)."""
        self._closing.set()
        for log in self._logs.values():
            log.break_with(None)

    # -- authentication and the admin port -----------------------------------------------
    def _refusal(self, scope: Scope) -> Response | None:
        path: str = scope["path"]
        on_admin = self._admin_port is not None and (scope.get("server") or ("", 0))[1] == self._admin_port
        if path.startswith("/admin/") != on_admin and self._admin_port is not None:
            return _json(errors.NotFound("the server could not find the requested resource").to_status(), 404)
        headers = dict(scope["headers"])
        given = headers.get(b"authorization", b"").decode("latin-1")
        if self._token is None or (not given and path in PUBLIC_PATHS):
            return None
        scheme, _, token = given.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self._token.encode()):
            return None
        return _json(errors.Unauthorized("Unauthorized").to_status(), 401)

    @staticmethod
    def _guarded(handler: Handler) -> Handler:
        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except errors.ApiError as exc:
                return _json(exc.to_status(), exc.code)

        return guarded

    # -- version, health, discovery ------------------------------------------------------
    async def _version(self, request: Request) -> Response:
        return _json(version_info(self.cluster.kubernetes_version))

    async def _health(self, request: Request) -> Response:
        code = await self.cluster.probe(request.url.path)
        return PlainTextResponse("ok" if code == 200 else f"{request.url.path[1:]} check failed", code)

    async def _core_versions(self, request: Request) -> Response:
        host = request.headers.get("host", "")
        return _json(self.resources.api_versions(host))

    async def _group_list(self, request: Request) -> Response:
        return _json(self.resources.group_list())

    async def _openapi_index(self, request: Request) -> Response:
        return _json(self.resources.openapi_index())

    async def _openapi_document(self, request: Request) -> Response:
        rest = request.path_params["rest"].strip("/")
        prefix, _, gv = rest.partition("/")
        document = self.resources.openapi_document(gv) if prefix in ("api", "apis") else None
        if document is None:
            raise errors.NotFound("the server could not find the requested resource")
        return _json(document)

    async def _core(self, request: Request) -> Response:
        version, *segments = request.path_params["rest"].strip("/").split("/")
        if version != "v1":
            raise errors.NotFound("the server could not find the requested resource")
        return await self._discovery_or_resource(request, "v1", segments)

    async def _grouped(self, request: Request) -> Response:
        parts = request.path_params["rest"].strip("/").split("/")
        if len(parts) == 1 and request.method == "GET":
            group = self.resources.group(parts[0])
            if group is None:
                raise errors.NotFound("the server could not find the requested resource")
            return _json(group)
        if len(parts) < 2:
            raise errors.NotFound("the server could not find the requested resource")
        return await self._discovery_or_resource(request, f"{parts[0]}/{parts[1]}", parts[2:])

    async def _discovery_or_resource(self, request: Request, gv: str, segments: list[str]) -> Response:
        if not segments or segments == [""]:
            listing = self.resources.resource_list(gv) if request.method == "GET" else None
            if listing is None:
                raise errors.NotFound("the server could not find the requested resource")
            return _json(listing)
        return await self._resource(request, gv, segments)

    # -- resources -----------------------------------------------------------------------
    async def _resource(self, request: Request, gv: str, segments: list[str]) -> Response:
        namespace, plural, rest = self._split(gv, segments)
        if len(rest) > 2:
            raise errors.NotFound("the server could not find the requested resource")
        name = rest[0] if rest else None
        subresource = rest[1] if len(rest) == 2 else None
        served = self.resources.find(gv, plural)
        method = request.method
        if served is None:
            if method != "PATCH" or name is None:
                raise errors.NotFound("the server could not find the requested resource")
            served = Served(gv, "", plural, namespace is not None)  # lenient: the body names the kind
        all_namespaces = served.namespaced and namespace is None and name is None and method == "GET"
        if served.namespaced != (namespace is not None) and not all_namespaces:
            raise errors.NotFound("the server could not find the requested resource")
        if subresource is not None and method != "GET":
            raise errors.MethodNotAllowed(
                f"{plural}/{subresource}: the simulated cluster's controllers own it; it cannot be written")
        if name is None:
            if method == "GET":
                return await self._collection(request, served, namespace)
            if method == "POST":
                return await write(request, self.cluster, served, namespace, None)
            raise errors.MethodNotAllowed(f"{method} on a collection is not supported")
        if method == "GET" and subresource == "log" and served.kind == "Pod":
            return await self._pod_log(request, served, namespace or "", name)
        if method == "GET":
            return await self._get(request, served, namespace, name)
        return await write(request, self.cluster, served, namespace, name)

    def _split(self, gv: str, segments: list[str]) -> tuple[str | None, str, list[str]]:
        """(namespace, plural, [name[, subresource]]) of a resource path."""
        if len(segments) >= 3 and segments[0] == "namespaces":
            namespace_sub = gv == "v1" and len(segments) == 3 and segments[2] in ("status", "finalize")
            if not namespace_sub:
                return segments[1], segments[2], segments[3:]
        return None, segments[0], segments[1:]

    async def _get(self, request: Request, served: Served, namespace: str | None, name: str) -> Response:
        printing = Printing.of(request, served, self.cluster.clock)
        ref = ObjectRef(served.group_version, served.kind, namespace or "", name)
        live = await self.cluster.get(ref)
        if live is None:
            raise not_found(served, name)
        return _json(printing.one(live))

    async def _pod_log(self, request: Request, served: Served, namespace: str, name: str) -> Response:
        """A pod's log, told from its status (``server_logs.py``)."""
        log = self._log(served)  # opened before the read, so following misses no change
        revision = self.cluster.engine.revisions.current
        live = await self.cluster.get(ObjectRef(served.group_version, served.kind, namespace, name))
        if live is None:
            raise not_found(served, name)

        def follow(key: ObjectKey) -> AsyncIterator[tuple[str, Obj]]:
            return log.follow(revision, matcher(None), lambda changed: changed == key)

        return pod_log(request, live, follow=follow, stream=lambda lines: WatchResponse(
            lines, timeout=MAX_WATCH, closing=self._closing, media_type="text/plain"))

    async def _collection(self, request: Request, served: Served, namespace: str | None) -> Response:
        params = request.query_params
        keep = fields_filter(params.get("fieldSelector"), served)
        printing = Printing.of(request, served, self.cluster.clock)  # a Table for kubectl get
        log = self._log(served)  # opened before the list, so a watch can resume from the list's revision
        watch = _truthy(params.get("watch"))
        wanted = params.get("resourceVersion") or ""
        initial = _truthy(params.get("sendInitialEvents")) or wanted in ("", "0")
        items: list[Obj] = []
        revision = self.cluster.engine.revisions.current
        if not watch or initial:
            found = await self.cluster.list(served.group_version, served.kind, namespace,
                                            label_selector=params.get("labelSelector"))
            revision = self.cluster.engine.revisions.current
            items = [self._versioned(o, served) for o in found if keep.keeps(o)]
        if not watch:
            return _json(printing.many(items, str(revision)))
        if not initial:
            if not wanted.isdigit():
                raise errors.BadRequest(f"resourceVersion {wanted!r}: not a revision of this server")
            revision = int(wanted)
        return self._watch(request, served, log, items if initial else None, revision, namespace, keep,
                           printing=printing)

    def _watch(self, request: Request, served: Served, log: ChangeLog, items: list[Obj] | None,
               revision: int, namespace: str | None, keep: FieldFilter, *,
               printing: Printing) -> WatchResponse:
        """Initial events (``items``, when the watch asked for them), then every change after ``revision``."""
        params = request.query_params
        matches = matcher(params.get("labelSelector"))
        bookmark = _truthy(params.get("sendInitialEvents"))

        def selected(key: ObjectKey) -> bool:
            return (namespace is None or key.namespace == namespace) and keep.keeps_key(key)

        async def lines() -> AsyncIterator[bytes]:
            for item in items or ():
                yield event_line("ADDED", printing.one(item))
            if bookmark:
                yield event_line("BOOKMARK", {
                    "kind": served.kind, "apiVersion": served.group_version,
                    "metadata": {"resourceVersion": str(revision),
                                 "annotations": {"k8s.io/initial-events-end": "true"}}})
            try:
                async for kind, obj in log.follow(revision, matches, selected):
                    if keep.keeps(obj):  # by the object's fields as it is now
                        yield event_line(kind, printing.one(self._versioned(obj, served)))
            except ExpiredError as exc:
                yield event_line("ERROR", errors.Gone(str(exc)).to_status())

        timeout = float(params.get("timeoutSeconds") or MAX_WATCH)
        return WatchResponse(lines(), timeout=min(timeout, MAX_WATCH), closing=self._closing)

    def _log(self, served: Served) -> ChangeLog:
        gk = GroupKind(served.group, served.kind)
        log = self._logs.get(gk)
        if log is None or log.broken:
            log = self._logs[gk] = ChangeLog(gk, self.cluster.engine.revisions.current)
            self.cluster.engine.hub.register(log)
        return log

    @staticmethod
    def _versioned(obj: Obj, served: Served) -> Obj:
        if obj.get("apiVersion") == served.group_version:
            return obj
        return {**obj, "apiVersion": served.group_version}

    # -- admin ---------------------------------------------------------------------------
    async def _admin_state(self, request: Request) -> Response:
        if request.method == "POST":
            body = orjson.loads(await request.body() or b"{}")
            try:
                state = ApiState(str(body.get("state")))
            except ValueError:
                raise errors.BadRequest(
                    f"state {body.get('state')!r}: expected one of down, blackhole, unhealthy, up") from None
            await self._set_state(state)
        return _json(self._admin_view())

    async def _set_state(self, state: ApiState) -> None:
        if state in (ApiState.DOWN, ApiState.BLACKHOLE) and self.door is None:
            raise errors.BadRequest(f"state {state.value!r} needs the server's relay (run it with one)")
        if state is ApiState.UNHEALTHY:
            self.cluster.unhealthy()
        elif state is ApiState.UP:
            self.cluster.up()
        if self.door is not None:
            await self.door.set_state(state)

    async def _admin_nodes(self, request: Request) -> Response:
        body = orjson.loads(await request.body() or b"{}")
        count = body.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise errors.BadRequest(f"count {count!r}: expected a non-negative integer")
        self.cluster.set_nodes(count)
        return _json(self._admin_view())

    async def _admin_compact(self, request: Request) -> Response:
        """Forget the watch history and end every watch, as an API server restart does: clients
        resuming from an older revision get ``410 Expired`` and list again."""
        for log in self._logs.values():
            log.break_with(None)
        self._logs.clear()
        return _json(self._admin_view())

    def _admin_view(self) -> dict[str, Any]:
        state = self.door.state if self.door is not None and self.door.state is not ApiState.UP \
            else self.cluster.state
        return {"name": self.cluster.name, "state": state.value,
                "nodes": len(self.cluster.engine.scheduler.nodes)}


__all__ = ["MAX_WATCH", "METHODS", "PUBLIC_PATHS", "MemberServer", "WatchResponse"]
