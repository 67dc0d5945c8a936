"""Karmada's cluster proxy: ``/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}``.

A request there is forwarded to the member cluster ``name`` as ``{path}`` — any verb, the
query and body unchanged — and its answer streamed back as it comes (a watch or a
``follow`` of pod logs stays open as long as the caller and the member keep it open), so
kubectl can be pointed at one member through the plane (``fleetkeeper kubeconfig
--cluster NAME``). Only the caller allowed the ``proxy`` verb on ``clusters/proxy``
reaches it (the admin; RBAC can grant it); a Pull agent is refused. A WebSocket upgrade there
(``kubectl exec``, ``attach``, ``cp``, ``port-forward``) is authorized the same way and relayed
frame by frame (:mod:`~fleetkeeper.apiserver.proxy_ws`).

The member is reached with the cluster's own credentials, never the caller's: the caller's
``Authorization`` and impersonation headers stay here, as do the hop-by-hop headers
(RFC 9110 §7.6.1). The request body is bounded like any other (``413`` past the server's
limit); the answer is not, as it is the member's. A Pull cluster answers ``503`` (the plane
does not reach its API: its agent does), an unknown cluster ``404``, a member that does not
answer ``503`` naming the cluster.

How a member is reached is a seam, :class:`MemberTransport`: given the stored Cluster it
returns a :class:`Connection` (the API root, the credentials, an httpx transport or TLS
settings). :class:`HttpsMembers` serves ``https://`` endpoints with the ``secretRef``
Secret's ``token`` and ``caBundle``, ``insecureSkipTLSVerification``, ``proxyURL`` and
``proxyHeader`` as Karmada reads them; a process serving members in-process adds its own
(``fleetkeeper up``'s simulated members are called through
:class:`~fleetkeeper.apiserver.transport.InProcessTransport`, without a socket).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.websockets import WebSocket

from fleetkeeper import errors
from fleetkeeper.api.limits import read_body
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.auth import Attributes, User, authorize
from fleetkeeper.apiserver.proxy_ws import (
    IDLE_TIMEOUT,
    CallerSocket,
    Dialer,
    Refused,
    dial_network,
    refuse,
    relay,
)
from fleetkeeper.apiserver.rbac import RbacIndex
from fleetkeeper.errors import ServiceUnavailable
from fleetkeeper.store.interface import StoreProtocol

GROUP = "cluster.karmada.io"
PREFIX = f"/apis/{GROUP}/v1alpha1/clusters/"
CLUSTERS = GroupKind(GROUP, "Cluster")
SECRETS = GroupKind("", "Secret")
#: headers that belong to one connection, not to the request (RFC 9110 §7.6.1)
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
    "trailer", "transfer-encoding", "upgrade",
})
#: request headers that stay here: the caller's identity, and what httpx sets itself
CALLERS = frozenset({"authorization", "cookie", "host", "content-length"})
#: how long a member may take to accept a connection, and to answer one that is not a stream
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0


@dataclass(frozen=True)
class Connection:
    """How to reach one member's API: its root URL, the headers carrying its credentials, and
    either an httpx transport (in-process members) or the TLS and proxy settings of a socket."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    transport: httpx.AsyncBaseTransport | None = None
    verify: ssl.SSLContext | bool = True
    proxy: httpx.Proxy | None = None
    #: how WebSockets reach the member when not over the network (in-process members)
    dialer: Dialer | None = None


class MemberTransport(Protocol):
    """Reaches the members whose ``spec.apiEndpoint`` it knows."""

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        """The connection to ``cluster`` (a stored Cluster), or None when its endpoint is not
        one this transport serves; raise :class:`ServiceUnavailable` when it is but cannot be
        reached (saying why)."""
        ...


class HttpsMembers:
    """``https://`` members, with the credentials of the Secret ``spec.secretRef`` names."""

    def __init__(self, store: StoreProtocol) -> None:
        self._store = store

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        spec = cluster.get("spec") or {}
        endpoint = str(spec.get("apiEndpoint") or "")
        if not endpoint.startswith("https://"):
            return None
        name = str((cluster.get("metadata") or {}).get("name") or "")
        token, ca = await self._secret(name, spec.get("secretRef"))
        verify: ssl.SSLContext | bool = not spec.get("insecureSkipTLSVerification")
        if verify and ca:
            try:
                verify = ssl.create_default_context(cadata=ca.decode("ascii", "replace"))
            except (ssl.SSLError, ValueError):
                raise ServiceUnavailable(f"cluster {name!r}: the caBundle of its secretRef is not a PEM "
                                         "certificate") from None
        proxy = None
        if spec.get("proxyURL"):
            extra = {str(k): str(v) for k, v in (spec.get("proxyHeader") or {}).items()}
            proxy = httpx.Proxy(str(spec["proxyURL"]), headers=extra or None)
        credentials = (("Authorization", f"Bearer {token}"),) if token else ()
        return Connection(endpoint.rstrip("/"), credentials, verify=verify, proxy=proxy)

    async def _secret(self, cluster: str, ref: Any) -> tuple[str, bytes]:
        """(token, CA bundle) of the cluster's secretRef, as Karmada stores them."""
        if not isinstance(ref, dict) or not ref.get("name"):
            raise ServiceUnavailable(f"cluster {cluster!r} has an https:// apiEndpoint but no secretRef")
        where = f"{ref.get('namespace') or ''}/{ref['name']}"
        try:
            secret = await self._store.get(SECRETS, str(ref.get("namespace") or ""), str(ref["name"]))
        except errors.NotFound:
            raise ServiceUnavailable(f"cluster {cluster!r}: its secretRef {where} does not exist") from None
        data = secret.get("data") or {}
        try:
            token = base64.b64decode(str(data.get("token") or ""), validate=True).decode().strip()
            ca = base64.b64decode(str(data.get("caBundle") or ""), validate=True)
        except (binascii.Error, UnicodeDecodeError):
            raise ServiceUnavailable(f"cluster {cluster!r}: secret {where}: token and caBundle must be "
                                     "base64") from None
        return token, ca


class ClusterProxy:
    """Forwards the proxy subresource's requests (see the module notes)."""

    def __init__(self, store: StoreProtocol, *, max_body_bytes: int, closing: asyncio.Event) -> None:
        self._store = store
        self._max_body = max_body_bytes
        self._closing = closing
        #: tried in order; the first that knows a cluster's endpoint reaches it
        self.transports: list[MemberTransport] = [HttpsMembers(store)]
        #: a relayed WebSocket where no frame moved this long is closed
        self.idle_timeout = IDLE_TIMEOUT

    async def forward(self, request: Request, user: User, rbac: RbacIndex | None) -> Response:
        """Forward ``request`` if ``user`` may ``proxy`` the cluster's ``clusters/proxy`` (the admin,
        or whom the stored RBAC grants it)."""
        name, path = split(request.scope.get("raw_path") or request.url.path.encode())
        authorize(user, Attributes(verb="proxy", group=GROUP, resource="clusters", namespace="", name=name,
                                   subresource="proxy"), rbac)
        connection = await self._connect(name)
        body = await read_body(request, self._max_body)
        query = request.scope.get("query_string") or b""
        url = connection.url + path + ("?" + query.decode("latin-1") if query else "")
        streaming = request.query_params.get("watch") in ("true", "1") or \
            request.query_params.get("follow") in ("true", "1")
        timeout = httpx.Timeout(CONNECT_TIMEOUT, read=None if streaming else READ_TIMEOUT)
        headers = [*forwarded(request.headers.items()), *connection.headers]
        try:  # a proxy URL httpx cannot use (socks5:// without socksio) fails here, not at send
            client = httpx.AsyncClient(transport=connection.transport, verify=connection.verify,
                                       proxy=connection.proxy, timeout=timeout, follow_redirects=False)
        except (ValueError, ImportError, httpx.HTTPError) as exc:
            raise ServiceUnavailable(f'cluster "{name}" is unreachable: {type(exc).__name__}: '
                                     f"{str(exc)[:200]}") from None
        try:
            outgoing = client.build_request(request.method, url, headers=headers, content=body)
            answer = await client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
            await client.aclose()
            raise ServiceUnavailable(f'cluster "{name}" is unreachable: {type(exc).__name__}: '
                                     f"{str(exc)[:200] or 'no answer'}") from None
        response = StreamingResponse(self._relay(answer, client), status_code=answer.status_code)
        response.raw_headers = [(key.lower().encode("latin-1"), value.encode("latin-1"))
                                for key, value in returned(answer.headers.multi_items())]
        return response

    async def upgrade(self, websocket: WebSocket, user: User, rbac: RbacIndex | None) -> None:
        """Relay a WebSocket to the member (:mod:`~fleetkeeper.apiserver.proxy_ws`) if ``user`` may
        ``proxy`` the cluster; a refusal raises the error a plain request would get."""
        name, path = split(websocket.scope.get("raw_path") or websocket.url.path.encode())
        authorize(user, Attributes(verb="proxy", group=GROUP, resource="clusters", namespace="", name=name,
                                   subresource="proxy"), rbac)
        connection = await self._connect(name)
        query = websocket.scope.get("query_string") or b""
        target = path + ("?" + query.decode("latin-1") if query else "")
        offered = [str(p) for p in websocket.scope.get("subprotocols") or []][:16]
        dialer = connection.dialer
        dial = dialer.dial if dialer is not None else partial(dial_network, connection)
        try:
            member = await dial(target, headers=connection.headers, subprotocols=offered)
        except ServiceUnavailable as exc:
            raise ServiceUnavailable(f'cluster "{name}" is unreachable: {exc.message}') from None
        except Refused as refused:  # the member's own answer (its 404, 400, 401) goes back as it is
            kept = [(k, v) for k, v in refused.headers if k.lower() in ("content-type", "warning")]
            await refuse(websocket, Response(refused.body, refused.status, headers=dict(kept)))
            return
        await websocket.accept(subprotocol=member.subprotocol)
        await relay(CallerSocket(websocket), member, closing=self._closing, idle=self.idle_timeout)

    async def _connect(self, name: str) -> Connection:
        try:
            cluster = await self._store.get(CLUSTERS, "", name)
        except errors.NotFound:
            raise errors.NotFound(f'clusters.{GROUP} "{name}" not found', kind="clusters", group=GROUP,
                                  name=name) from None
        spec = cluster.get("spec") or {}
        if spec.get("syncMode") == "Pull":
            raise ServiceUnavailable(f'cluster "{name}" is in Pull mode: the control plane does not reach '
                                     "its API (its agent does), so it cannot proxy to it")
        for transport in self.transports:
            found = await transport.connect(cluster)
            if found is not None:
                return found
        endpoint = spec.get("apiEndpoint") or "none"
        raise ServiceUnavailable(f'cluster "{name}": its apiEndpoint ({str(endpoint)[:200]}) is not one this '
                                 "server can reach")

    async def _relay(self, answer: httpx.Response, client: httpx.AsyncClient) -> AsyncIterator[bytes]:
        """The member's body as it comes, until it ends, the caller leaves or the server stops."""
        chunks = answer.aiter_raw()
        stopping = asyncio.ensure_future(self._closing.wait())
        chunk: asyncio.Future[bytes] | None = None
        try:
            while True:
                chunk = asyncio.ensure_future(anext(chunks))
                done, _ = await asyncio.wait({chunk, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if chunk not in done:
                    return
                try:
                    yield chunk.result()
                except (StopAsyncIteration, httpx.HTTPError):
                    return
        finally:
            stopping.cancel()
            with anyio.CancelScope(shield=True):  # the caller left: still close the member's side
                if chunk is not None and not chunk.done():
                    chunk.cancel()
                    await asyncio.gather(chunk, return_exceptions=True)
                with contextlib.suppress(Exception):
                    await answer.aclose()
                await client.aclose()

def split(raw_path: bytes) -> tuple[str, str]:
    """(cluster name, member path) of a proxy request's raw path; ``..`` may not climb out of
    the member's API root."""
    path = raw_path.decode("latin-1")
    name, _, rest = path[len(PREFIX):].partition("/")
    _, _, member = rest.partition("/")  # after "proxy"
    member = "/" + member
    if any(segment in ("..", ".") for segment in member.split("/")):
        raise errors.BadRequest("the proxied path may not contain '.' or '..' segments")
    return name, member


def forwarded(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The caller's headers a member is sent: not the hop-by-hop ones (nor those the
    ``Connection`` header names), not the caller's credentials or impersonation."""
    named = {token.strip().lower() for key, value in headers if key.lower() == "connection"
             for token in value.split(",")}
    return [(key, value) for key, value in headers
            if (low := key.lower()) not in HOP_BY_HOP and low not in CALLERS and low not in named
            and not low.startswith("impersonate-")]


def returned(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The member's answer headers the caller is sent (not the hop-by-hop ones)."""
    named = {token.strip().lower() for key, value in headers if key.lower() == "connection"
             for token in value.split(",")}
    return [(key, value) for key, value in headers
            if (low := key.lower()) not in HOP_BY_HOP and low not in named]


__all__ = [
    "GROUP", "PREFIX", "ClusterProxy", "Connection", "HttpsMembers", "MemberTransport", "forwarded",
    "returned", "split",
]
