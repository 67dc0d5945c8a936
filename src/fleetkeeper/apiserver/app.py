"""The API server as an ASGI application: Kubernetes REST over a Store.

:func:`build_app` wires the pieces over one :class:`~fleetkeeper.store.interface.StoreProtocol`::

    app = build_app(store, clock=SystemClock(), tokens=Tokens(admin="s3cr3t"))
    # serve it with fleetkeeper.apiserver.serve (uvicorn, HTTPS), or in-process with
    # fleetkeeper.apiserver.transport.InProcessTransport for httpx

Routing is deliberately small: a handful of fixed endpoints (health, ``/version``,
discovery, OpenAPI, ``/metrics`` for the admin, the self reviews of ``kubectl auth``) and
one endpoint per API root (``/api/v1/…``, ``/apis/{g}/{v}/…``)
whose rest is resolved against the scheme by :func:`fleetkeeper.apiserver.request.resolve`.
Every request is authenticated first (a bad token is ``401`` anywhere; anonymous
callers reach only the public read-only endpoints), then routed, then authorized on
its verb, resource, namespace and name (:mod:`fleetkeeper.apiserver.auth`). Every
failure — ours or the client's — leaves as a Kubernetes ``Status``; an unexpected
exception is logged and answered ``500`` without details.

The kinds CustomResourceDefinitions define are served like the others
(:mod:`fleetkeeper.apiserver.crds`): the stored CRDs are loaded before the first answer
and followed with a watch of the store, and a write to a CRD through this server is
served before its response leaves.

``tokens=None`` turns authentication off (every caller is admin): for tests and
local development behind loopback only.

A member cluster's store is served by a subclass (:mod:`~fleetkeeper.apiserver.member_app`):
Kubernetes' kinds only, no cluster proxy, and its pods' ``log``, ``exec`` and ``attach``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from fleetkeeper import errors
from fleetkeeper.api.crd import CRD, CUSTOM_KINDS, CustomKinds
from fleetkeeper.api.limits import read_body
from fleetkeeper.api.scheme import SCHEME, Scheme
from fleetkeeper.apiserver import handlers, health, patching, reviews, scale
from fleetkeeper.apiserver.auth import (
    ADMIN,
    Attributes,
    Tokens,
    User,
    authenticated,
    authorize,
    authorize_path,
)
from fleetkeeper.apiserver.crds import CrdServing
from fleetkeeper.apiserver.discovery import version_info
from fleetkeeper.apiserver.documents import Documents
from fleetkeeper.apiserver.fieldcheck import duplicate_fields
from fleetkeeper.apiserver.metrics import Children, labels_of
from fleetkeeper.apiserver.namespaces import Bootstrap
from fleetkeeper.apiserver.proxy import PREFIX as PROXY_PREFIX
from fleetkeeper.apiserver.proxy import ClusterProxy
from fleetkeeper.apiserver.proxy_ws import answering_refusals
from fleetkeeper.apiserver.rbac import RbacIndex
from fleetkeeper.apiserver.request import Target, decode_object, media_type, resolve
from fleetkeeper.apiserver.serviceaccounts import create_token
from fleetkeeper.apiserver.state import Context, ServerConfig, ServerState, json_response, status_response
from fleetkeeper.apiserver.watch import watch_response
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol

log = structlog.get_logger("fleetkeeper.apiserver")
Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, User], Awaitable[Response]]


class ApiServerApp:
    """The ASGI application (call :meth:`close` to end open watches before shutting down)."""

    def __init__(self, state: ServerState, *, kinds: CustomKinds = CUSTOM_KINDS) -> None:
        self.state = state
        self._bootstrap = Bootstrap(state)
        #: serves the kinds of the stored CRDs
        self._crds = CrdServing(state, kinds)
        self._requests = Children()
        #: Karmada's cluster proxy (add the transports of members served in-process to it)
        self.proxy = ClusterProxy(state.store, max_body_bytes=state.config.max_body_bytes,
                                  closing=state.closing)
        #: checks ``/readyz`` runs after its own (what the serving process waits for)
        self.ready_checks: list[health.Check] = []
        self._app = Starlette(routes=self._routes(), exception_handlers={HTTPException: _router_status})
        self._app.router.redirect_slashes = False
        #: web sites served beside the API, by path prefix (the dashboard; they do their own auth)
        self.sites: dict[str, ASGIApp] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path") or "")
        site = next((app for prefix, app in self.sites.items()
                     if path == prefix or path.startswith(prefix + "/")), None)
        await (site or self._app)(scope, receive, send)

    def close(self) -> None:
        """End every open watch (call from the server's event loop)."""
        self.state.closing.set()

    # ------------------------------------------------------------------ routing
    def _routes(self) -> list[BaseRoute]:
        get = ["GET", "HEAD"]
        every = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
        docs = Documents(self.state)
        fixed: list[tuple[str, Handler]] = [
            ("/healthz", self._health), ("/livez", self._health), ("/readyz", self._health),
            ("/version", self._version), ("/api", docs.api), ("/apis", docs.apis),
            ("/openapi/v3", docs.openapi_index), ("/openapi/v2", docs.openapi_v2),
        ]
        routes: list[BaseRoute] = [Route(path, self._guard(fn), methods=get) for path, fn in fixed]
        routes += [Route(path + "/", self._guard(fn), methods=get) for path, fn in fixed]
        routes += [
            *(Route(f"/{name}/{{check}}", self._guard(self._health_check), methods=get)
              for name in health.CHECKS),
            Route("/metrics", self._guard(self._metrics), methods=get),
            Route("/openapi/v3/{path:path}", self._guard(docs.openapi_doc), methods=get),
            Route("/api/{version}", self._guard(docs.core_resources), methods=get),
            Route("/api/{version}/", self._guard(docs.core_resources), methods=get),
            Route("/api/{version}/{rest:path}", self._guard(self._core_request), methods=every),
            Route("/apis/{group}", self._guard(docs.group), methods=get),
            Route("/apis/{group}/", self._guard(docs.group), methods=get),
            Route("/apis/{group}/{version}", self._guard(docs.resources), methods=get),
            Route("/apis/{group}/{version}/", self._guard(docs.resources), methods=get),
            Route("/apis/{}/{}/{}".format(*reviews.ACCESS_REVIEW), self._guard(self._access_review),
                  methods=["POST"]),
            Route("/apis/{}/{}/{}".format(*reviews.SELF_REVIEW), self._guard(self._self_review),
                  methods=["POST"]),
            Route("/apis/{}/{}/{}".format(*reviews.RULES_REVIEW), self._guard(self._rules_review),
                  methods=["POST"]),
            *self._proxy_routes(every),
            Route("/apis/{group}/{version}/{rest:path}", self._guard(self._request), methods=every),
            Route("/{path:path}", self._guard(self._not_found), methods=every),
        ]
        return routes

    def _proxy_routes(self, every: list[str]) -> list[BaseRoute]:
        """Karmada's cluster proxy."""
        return [
            Route(PROXY_PREFIX + "{name}/proxy", self._guard(self._proxy), methods=every),
            Route(PROXY_PREFIX + "{name}/proxy/{path:path}", self._guard(self._proxy), methods=every),
            WebSocketRoute(PROXY_PREFIX + "{name}/proxy/{path:path}", self._proxy_socket),
        ]

    def _guard(self, endpoint: Handler) -> Endpoint:
        """Authenticate, run, and turn every error into a ``Status``."""

        async def run(request: Request) -> Response:
            started = self.state.clock.monotonic()
            try:
                if self.state.authz is not None:
                    await self.state.authz.ensure(self.state.closing)
                user = self._authenticate(request)
                await self._bootstrap.ensure()
                await self._crds.ensure()
                response = await endpoint(request, user)
            except errors.ApiError as exc:
                response = status_response(exc)
            except Exception:
                log.exception("request failed", method=request.method, path=request.url.path)
                response = status_response(
                    errors.InternalError("an internal error occurred; see the server log"))
            if "rest" in request.path_params:
                self._count(request, response.status_code, self.state.clock.monotonic() - started)
            return response

        return run

    def _count(self, request: Request, code: int, seconds: float) -> None:
        """kube-apiserver's request metrics for a resource request (:mod:`~fleetkeeper.apiserver.metrics`)."""
        target: Target | None = getattr(request.state, "target", None)
        if target is None:  # refused before its handler resolved it (its credentials, say)
            params = request.path_params
            try:
                target = resolve(self.state.scheme, params.get("group", ""), params["version"],
                                 params["rest"].split("/"))
            except errors.ApiError:
                return  # no served resource: not counted
        labels = labels_of(target, request.method, request.query_params,
                           request.headers.get("content-type") or "")
        self._requests.observe(labels, code, seconds)

    def _authenticate(self, request: HTTPConnection) -> User:
        tokens, authz = self.state.tokens, self.state.authz
        if tokens is None:
            return ADMIN
        if authz is None:  # RBAC not followed (a member): its tokens only
            return tokens.authenticate(request.headers.get("authorization"))
        return authz.authenticate(tokens, request.headers)

    @property
    def _rbac(self) -> RbacIndex | None:
        return self.state.authz.index if self.state.authz is not None else None

    # ------------------------------------------------------------------ fixed endpoints
    async def _health(self, request: Request, user: User) -> Response:
        """``/healthz``, ``/livez``, ``/readyz``: their checks, as kube-apiserver lists them."""
        endpoint = request.url.path.strip("/")
        extra = self._checks(endpoint)
        return await health.root(self.state, endpoint, request.query_params, extra=extra)

    async def _health_check(self, request: Request, user: User) -> Response:
        endpoint = request.url.path.split("/")[1]
        extra = self._checks(endpoint)
        return await health.single(self.state, endpoint, request.path_params["check"], extra=extra)

    def _checks(self, endpoint: str) -> list[health.Check]:
        """The checks an endpoint runs after its own (``/readyz``: the process's)."""
        return list(self.ready_checks) if endpoint == "readyz" else []

    async def _version(self, request: Request, user: User) -> Response:
        return json_response(version_info(minor=self.state.config.kubernetes_minor))

    async def _metrics(self, request: Request, user: User) -> Response:
        """The process's Prometheus metrics (the controllers' reconciles when they run here); the
        admin only, as Kubernetes grants ``get /metrics``."""
        authenticated(user)
        authorize_path(user, "get", "/metrics", self._rbac)
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    async def _access_review(self, request: Request, user: User) -> Response:
        body = await self._review_body(request, user)
        return json_response(reviews.access_review(user, body, self._rbac), 201)

    async def _self_review(self, request: Request, user: User) -> Response:
        return json_response(reviews.self_review(user, await self._review_body(request, user)), 201)

    async def _rules_review(self, request: Request, user: User) -> Response:
        body = await self._review_body(request, user)
        return json_response(reviews.rules_review(user, body, self._rbac), 201)

    async def _review_body(self, request: Request, user: User) -> dict[str, Any]:
        authenticated(user)
        return decode_object(await self._body(request), media_type(request.headers.get("content-type")))

    async def _proxy(self, request: Request, user: User) -> Response:
        """A request to a member cluster, forwarded (:mod:`~fleetkeeper.apiserver.proxy`)."""
        return await self.proxy.forward(request, user, self._rbac)

    async def _proxy_socket(self, websocket: WebSocket) -> None:
        """A WebSocket to a member cluster, relayed (:mod:`~fleetkeeper.apiserver.proxy_ws`); a refused
        upgrade is answered with the ``Status`` a plain request would get."""
        async with answering_refusals(websocket):
            if self.state.authz is not None:
                await self.state.authz.ensure(self.state.closing)
            await self.proxy.upgrade(websocket, self._authenticate(websocket), self._rbac)

    async def _not_found(self, request: Request, user: User) -> Response:
        raise errors.NotFound("the server could not find the requested resource")

    # ------------------------------------------------------------------ resources
    async def _core_request(self, request: Request, user: User) -> Response:
        return await self._resource("", request.path_params["version"], request, user)

    async def _request(self, request: Request, user: User) -> Response:
        params = request.path_params
        return await self._resource(params["group"], params["version"], request, user)

    async def _resource(self, group: str, version: str, request: Request, user: User) -> Response:
        target = resolve(self.state.scheme, group, version, request.path_params["rest"].split("/"))
        request.state.target = target  # for the request metrics
        ctx = Context(target, user, request.query_params, request.headers.get("accept") or "",
                      request.headers.get("user-agent") or "")
        method = request.method
        if target.subresource == "scale":
            return await self._scale(ctx, request)
        if target.subresource == "token":
            self._authorize(ctx, "create")
            return await create_token(self.state, ctx, await self._body(request),
                                      media_type(request.headers.get("content-type")))
        if target.subresource == "finalize" and method != "PUT":
            raise errors.MethodNotAllowed(f"{method} is not supported on /finalize: PUT the Namespace")
        if method in ("GET", "HEAD"):
            return await self._read(ctx)
        if target.name is None and method in ("PUT", "PATCH"):
            raise errors.MethodNotAllowed(f"{method} needs an object name")
        if target.name is not None and method == "POST":
            raise errors.MethodNotAllowed("POST goes to the collection, not to an object")
        authenticated(user)
        response, name = await self._write(ctx, request)
        if self.state.authz is not None and response.status_code < 300 and not ctx.dry_run \
                and method != "DELETE":
            self.state.authz.written(target.info.kind, response.body)
        if target.info.group_kind == CRD and not ctx.dry_run:
            await self._crds.refresh(name)  # served before the client hears the CRD was written
        return response

    async def _write(self, ctx: Context, request: Request) -> tuple[Response, str | None]:
        """A create, update, patch or delete; the response and the name of the object written
        (``None`` for a deletecollection)."""
        target, method = ctx.target, request.method
        if method == "PATCH":
            self._authorize(ctx, "patch")
            return await patching.patch_object(self.state, ctx, await self._body(request),
                                               media_type(request.headers.get("content-type"))), target.name
        body = await self._body(request)
        if method == "DELETE":
            options = decode_object(body, "application/json") if body.strip() else None
            self._authorize(ctx, "delete" if target.name is not None else "deletecollection")
            if target.name is None:
                response = await handlers.delete_collection(self.state, ctx, options)
                await self._revoke_unjoined(ctx)
                return response, None
            response = await handlers.delete_object(self.state, ctx, options)
            await self._revoke_unjoined(ctx)
            return response, target.name
        obj = decode_object(body, media_type(request.headers.get("content-type")))
        if ctx.field_validation(self.state.config.default_field_validation) != "Ignore":
            ctx.duplicates = duplicate_fields(body)
        if method == "POST":
            name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
            self._authorize(ctx, "create", name=str(name or ""))
            return await handlers.create_object(self.state, ctx, obj), str(name) if name else None
        self._authorize(ctx, "update")
        return await handlers.update_object(self.state, ctx, obj), target.name

    async def _revoke_unjoined(self, ctx: Context) -> None:
        """Revoke the agent token of every Cluster this deletion removed or set terminating:
        an unjoined cluster's agent is out at once, and cannot register the cluster again."""
        info, tokens = ctx.target.info, self.state.tokens
        if tokens is None or ctx.dry_run or (info.group, info.plural) != ("cluster.karmada.io", "clusters"):
            return
        names = [ctx.target.name] if ctx.target.name is not None else list(tokens.agents)
        for name in names:
            try:
                obj = await self.state.store.get(info.group_kind, "", name)
            except errors.NotFound:
                obj = None
            if obj is None or (obj.get("metadata") or {}).get("deletionTimestamp"):
                await tokens.revoke(name)

    async def _scale(self, ctx: Context, request: Request) -> Response:
        method = request.method
        if method in ("GET", "HEAD"):
            self._authorize(ctx, "get")
            return await scale.get_scale(self.state, ctx)
        if method not in ("PUT", "PATCH"):
            raise errors.MethodNotAllowed(f"{method} is not supported on /scale")
        self._authorize(ctx, "update" if method == "PUT" else "patch")
        return await scale.write_scale(self.state, ctx, await self._body(request),
                                       media_type(request.headers.get("content-type")), method)

    async def _read(self, ctx: Context) -> Response:
        if ctx.target.name is not None:
            self._authorize(ctx, "get")
            return await handlers.get_object(self.state, ctx)
        if ctx.flag("watch"):
            self._authorize(ctx, "watch")
            return await watch_response(self.state, ctx)
        self._authorize(ctx, "list")
        return await handlers.list_objects(self.state, ctx)

    def _authorize(self, ctx: Context, verb: str, *, name: str | None = None) -> None:
        target = ctx.target
        authorize(ctx.user, Attributes(
            verb=verb, group=target.info.group, resource=target.info.plural, namespace=target.namespace or "",
            name=name if name is not None else (target.name or ""), subresource=target.subresource,
            field_selector=ctx.param("fieldSelector"),
        ), self._rbac)

    async def _body(self, request: Request) -> bytes:
        return await read_body(request, self.state.config.max_body_bytes)


_ROUTER_ERRORS: dict[int, type[errors.ApiError]] = {404: errors.NotFound, 405: errors.MethodNotAllowed}


async def _router_status(request: Request, exc: Exception) -> Response:
    """What the router itself refuses (a path no route matches, as one with a newline; a method
    a fixed endpoint does not serve), as a ``Status`` like every other answer."""
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    error = _ROUTER_ERRORS.get(code, errors.BadRequest)
    message = "the server could not find the requested resource" if code == 404 else \
        f"{request.method} is not supported here" if code == 405 else str(getattr(exc, "detail", exc))
    return status_response(error(message))


def build_app(
    store: StoreProtocol,
    *,
    clock: Clock,
    tokens: Tokens | None = None,
    scheme: Scheme = SCHEME,
    config: ServerConfig | None = None,
) -> ApiServerApp:
    """The API server over ``store``; ``tokens=None`` disables authentication (loopback dev only)."""
    state = ServerState(store, clock=clock, scheme=scheme, tokens=tokens, config=config or ServerConfig())
    return ApiServerApp(state)


__all__ = ["ApiServerApp", "build_app"]
