"""The REST client: the typed :class:`~fleetkeeper.client.interface.Client` over HTTPS.

Agents, the CLI and split deployments reach the control plane through the API server
with this client; it behaves like the local client (both pass
:mod:`fleetkeeper.client.testing`), so code written against the protocol runs either way.

* Transport: ``httpx`` (async). Over the network it verifies the server against the CA
  of the kubeconfig and sends a bearer token; in tests any ``httpx`` transport can be
  passed, e.g. :class:`fleetkeeper.apiserver.transport.InProcessTransport` to call an
  API server in the same process without sockets.
* Errors: every non-2xx answer carries a Kubernetes ``Status``, rebuilt into the same
  :class:`fleetkeeper.errors.ApiError` the server raised (``errors.from_status``).
* Writes of typed kinds ask for ``fieldValidation=Strict`` (unknown fields are errors, as
  with the local client); writes of the kinds kept as given (Deployments …, whose status
  a controller may reflect from a newer member) ask for ``Warn``, client-go's default, so a
  field this plane's schema does not know is dropped rather than failing the write. Every
  write names this client's field manager. ``patch_type="apply"`` is
  server-side apply with ``force=true``: the caller's intent wins, as a controller's must.
* Watches are reflector-like. Without a resourceVersion the server sends the current
  objects as ADDED, then a bookmark marking the end of them; afterwards the client
  tracks the last resourceVersion (from events and bookmarks, which it does not pass
  on) and, when the server ends a stream (its ``timeoutSeconds``), re-watches from
  there, so the caller sees one unbroken stream. An ``ERROR`` event with ``410`` raises
  :class:`fleetkeeper.errors.Gone` (the caller re-lists).
* A member cluster of the plane is read the same way through Karmada's cluster proxy:
  :meth:`RestClient.proxied` is a client of the member with this client's credentials, and
  :meth:`RestClient.lines` reads a text answer (a pod's log) line by line as it comes.
"""

from __future__ import annotations

import base64
import builtins
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx
import orjson
import yaml

from fleetkeeper import errors
from fleetkeeper.api.meta import Resource, Unstructured
from fleetkeeper.api.scheme import split_api_version
from fleetkeeper.client.interface import ObjectList, PatchType, WatchEvent
from fleetkeeper.clock import Clock, SystemClock

T = TypeVar("T", bound=Resource)

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
#: how long the server keeps one watch stream open before the client re-watches
WATCH_TIMEOUT_SECONDS = 290
#: re-watches in a row that deliver nothing before the client pauses a little
_IDLE_RECONNECTS = 3
#: where the plane's cluster proxy serves the member cluster named in it
PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"


@dataclass(frozen=True)
class Credentials:
    """What a client needs from a kubeconfig: where, which CA, which token."""

    server: str
    ca_pem: bytes | None = None
    token: str | None = None
    namespace: str = "default"
    insecure: bool = False


def read_kubeconfig(path: Path | str, *, context: str | None = None) -> Credentials:
    """The server, CA, token and namespace of ``context`` (default: the current context)."""
    return read_kubeconfigs([Path(path)], context=context)


def merge_kubeconfigs(paths: Sequence[Path]) -> dict[str, Any]:
    """Several kubeconfig files as one, merged as kubectl merges ``$KUBECONFIG``: the first file
    to name a cluster, user or context wins, and so does the first ``current-context``. A
    relative ``certificate-authority`` is taken from its own file's directory."""
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": [], "current-context": None}
    seen: dict[str, set[Any]] = {"clusters": set(), "users": set(), "contexts": set()}
    for path in paths:
        doc = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(doc, dict):
            raise ValueError(f"kubeconfig {path}: not a mapping")
        for section in ("clusters", "users", "contexts"):
            for item in doc.get(section) or []:
                if not isinstance(item, dict) or item.get("name") in seen[section]:
                    continue
                seen[section].add(item.get("name"))
                if section == "clusters":
                    item = _anchor_ca(item, Path(path).parent)
                merged[section].append(item)
        merged["current-context"] = merged["current-context"] or doc.get("current-context")
    return merged


def _anchor_ca(item: dict[str, Any], directory: Path) -> dict[str, Any]:
    cluster = item.get("cluster")
    if not isinstance(cluster, dict):
        return item
    ca = cluster.get("certificate-authority")
    if not isinstance(ca, str) or Path(ca).is_absolute():
        return item
    return {**item, "cluster": {**cluster, "certificate-authority": str(directory / ca)}}


def read_kubeconfigs(paths: Sequence[Path], *, context: str | None = None) -> Credentials:
    """:func:`read_kubeconfig` of the files ``paths`` merged (:func:`merge_kubeconfigs`)."""
    doc = merge_kubeconfigs(paths)
    where = ", ".join(str(p) for p in paths)
    wanted = context or doc.get("current-context")
    if not wanted:
        raise ValueError(f"kubeconfig {where}: no current-context; pass --context NAME")

    def pick(section: str, name: Any) -> dict[str, Any]:
        for item in doc.get(section) or []:
            if isinstance(item, dict) and item.get("name") == name:
                return dict(item.get(section[:-1]) or {})
        raise ValueError(f"kubeconfig {where}: no {section[:-1]} named {name!r}")

    ctx = pick("contexts", wanted)
    cluster = pick("clusters", ctx.get("cluster"))
    user = pick("users", ctx.get("user")) if ctx.get("user") else {}
    ca: bytes | None = None
    if cluster.get("certificate-authority-data"):
        ca = base64.b64decode(cluster["certificate-authority-data"])
    elif cluster.get("certificate-authority"):
        ca = Path(cluster["certificate-authority"]).read_bytes()
    return Credentials(server=str(cluster["server"]), ca_pem=ca, token=user.get("token"),
                       namespace=str(ctx.get("namespace") or "default"),
                       insecure=bool(cluster.get("insecure-skip-tls-verify", False)))


def _error(response: httpx.Response) -> errors.ApiError:
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return errors.from_status(body)
    return errors.from_status({"code": response.status_code,
                               "message": f"HTTP {response.status_code}: {response.text[:200]}"})


def _decode(model: type[T], data: dict[str, Any]) -> T:
    if model.API_VERSION:
        data["apiVersion"] = model.API_VERSION
    return model.from_dict(data)


def _encode(obj: Resource) -> dict[str, Any]:
    data = obj.to_dict()
    if not type(obj).NAMESPACED:
        data.get("metadata", {}).pop("namespace", None)
    return data


def _selectors(label_selector: str | None, field_selector: str | None) -> dict[str, str]:
    pairs = (("labelSelector", label_selector), ("fieldSelector", field_selector))
    return {key: value for key, value in pairs if value}


def _path(model: type[Resource], namespace: str | None, name: str | None = None,
          subresource: str | None = None) -> str:
    if not model.KIND:
        raise TypeError(f"{model.__name__} is not a kind; use SCHEME.model_for(api_version, kind)")
    group, version = split_api_version(model.API_VERSION)
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if model.NAMESPACED and namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{model.PLURAL}"
    if name is not None:
        path += f"/{quote(name, safe='')}"
    if subresource:
        path += f"/{quote(subresource, safe='')}"
    return path


class RestClient:
    """A :class:`~fleetkeeper.client.interface.Client` speaking Kubernetes REST (see the module notes)."""

    def __init__(
        self,
        server: str,
        *,
        token: str | None = None,
        ca_pem: bytes | None = None,
        insecure: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        field_manager: str = "fleetkeeper",
        clock: Clock | None = None,
    ) -> None:
        headers = {"Accept": "application/json", "User-Agent": f"{field_manager}/rest-client"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        verify: ssl.SSLContext | bool = True
        if insecure:
            verify = False
        elif ca_pem:
            verify = ssl.create_default_context(cadata=ca_pem.decode())
        self._http = httpx.AsyncClient(base_url=server.rstrip("/"), headers=headers, verify=verify,
                                       transport=transport, timeout=timeout)
        self._timeout = timeout
        self.field_manager = field_manager
        self._clock: Clock = clock or SystemClock()
        self._server = server.rstrip("/")
        self._options: dict[str, Any] = {"token": token, "ca_pem": ca_pem, "insecure": insecure,
                                         "transport": transport, "timeout": timeout,
                                         "field_manager": field_manager, "clock": clock}

    def proxied(self, cluster: str) -> RestClient:
        """A client of the member ``cluster`` through the plane's cluster proxy, with this
        client's credentials (close it when done)."""
        return RestClient(self._server + PROXY.format(quote(cluster, safe="")), **self._options)

    @classmethod
    def from_kubeconfig(cls, path: Path | str, *, context: str | None = None, **kwargs: Any) -> RestClient:
        """A client for the server, CA and token of a kubeconfig context."""
        creds = read_kubeconfig(path, context=context)
        return cls(creds.server, token=creds.token, ca_pem=creds.ca_pem, insecure=creds.insecure, **kwargs)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # ---------------------------------------------------------------- plumbing
    async def _call(self, method: str, path: str, *, body: Any = None, content_type: str = "application/json",
                    params: dict[str, str] | None = None) -> dict[str, Any]:
        content = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if content is not None else None
        try:
            response = await self._http.request(method, path, content=content, headers=headers, params=params)
        except httpx.TimeoutException as exc:
            message = f"{method} {path}: the API server did not answer in time: {exc}"
            raise errors.InternalError(message) from exc
        except httpx.TransportError as exc:
            raise errors.InternalError(f"{method} {path}: cannot reach the API server: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response)
        data = orjson.loads(response.content)
        if not isinstance(data, dict):
            raise errors.InternalError(f"{method} {path}: the API server answered with a non-object")
        return data

    def _write_params(self, model: type[Resource]) -> dict[str, str]:
        validation = "Warn" if issubclass(model, Unstructured) else "Strict"
        return {"fieldManager": self.field_manager, "fieldValidation": validation}

    # ---------------------------------------------------------------- reads
    async def get(self, model: type[T], name: str, namespace: str = "") -> T:
        return _decode(model, await self._call("GET", _path(model, namespace, name)))

    async def list(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ObjectList[T]:
        params = _selectors(label_selector, field_selector)
        data = await self._call("GET", _path(model, namespace), params=params)
        items = [_decode(model, item) for item in data.get("items") or []]
        revision = str((data.get("metadata") or {}).get("resourceVersion"))
        return ObjectList(items=items, resource_version=revision)

    # ---------------------------------------------------------------- writes
    async def create(self, obj: T) -> T:
        model = type(obj)
        if model.NAMESPACED and not obj.metadata.namespace:
            raise errors.Invalid(f'{model.KIND} "{obj.name}" is invalid: metadata.namespace: Required value',
                                 causes=[errors.Cause("metadata.namespace", "Required value",
                                                      "FieldValueRequired")], kind=model.KIND, name=obj.name)
        data = await self._call("POST", _path(model, obj.metadata.namespace), body=_encode(obj),
                                params=self._write_params(model))
        return _decode(model, data)

    async def update(self, obj: T) -> T:
        model = type(obj)
        data = await self._call("PUT", _path(model, obj.metadata.namespace, obj.name), body=_encode(obj),
                                params=self._write_params(model))
        return _decode(model, data)

    async def update_status(self, obj: T) -> T:
        model = type(obj)
        data = await self._call("PUT", _path(model, obj.metadata.namespace, obj.name, "status"),
                                body=_encode(obj), params=self._write_params(model))
        return _decode(model, data)

    async def finalize(self, obj: T) -> T:
        model = type(obj)
        data = await self._call("PUT", _path(model, obj.metadata.namespace, obj.name, "finalize"),
                                body=_encode(obj), params=self._write_params(model))
        return _decode(model, data)

    async def patch(
        self,
        model: type[T],
        name: str,
        namespace: str = "",
        *,
        patch: dict[str, Any] | builtins.list[Any],
        patch_type: PatchType = "merge",
        subresource: str | None = None,
    ) -> T:
        content_type = _PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise errors.UnsupportedMediaType(f"unknown patch type {patch_type!r}")
        params = self._write_params(model)
        if patch_type == "apply":
            params["force"] = "true"
        data = await self._call("PATCH", _path(model, namespace, name, subresource), body=patch,
                                content_type=content_type, params=params)
        return _decode(model, data)

    async def delete(
        self, model: type[T], name: str, namespace: str = "", *, resource_version: str | None = None
    ) -> None:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1",
                                   "propagationPolicy": "Background"}
        if resource_version:
            options["preconditions"] = {"resourceVersion": resource_version}
        await self._call("DELETE", _path(model, namespace, name), body=options)

    # ---------------------------------------------------------------- watch
    def watch(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> AsyncIterator[WatchEvent[T]]:
        """Events after ``resource_version``; without one, ADDED for each current object first."""
        since: str | None = None
        if resource_version not in (None, "", "0"):
            if not str(resource_version).isdigit():
                raise errors.BadRequest(f"resourceVersion {resource_version!r} is not a revision")
            since = str(resource_version)
        params = _selectors(label_selector, field_selector)
        return self._watch(model, _path(model, namespace), since, params)

    async def _watch(self, model: type[T], path: str, since: str | None, selectors: dict[str, str]
                     ) -> AsyncIterator[WatchEvent[T]]:
        idle = 0
        while True:
            params = {**selectors, "watch": "true", "allowWatchBookmarks": "true",
                      "timeoutSeconds": str(WATCH_TIMEOUT_SECONDS)}
            if since is None:
                params.update(sendInitialEvents="true", resourceVersionMatch="NotOlderThan")
            else:
                params["resourceVersion"] = since
            delivered = False
            async for kind, obj in self._stream(path, params):
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                if rv:
                    since = str(rv)
                if kind != "BOOKMARK":
                    delivered = True
                    yield WatchEvent(kind, _decode(model, obj))
            idle = 0 if delivered else idle + 1
            if idle >= _IDLE_RECONNECTS:
                await self._clock.sleep(1.0)

    async def lines(self, path: str, params: dict[str, str], *, follow: bool = False) -> AsyncIterator[str]:
        """The text answer of ``GET path`` line by line as it comes (``follow``: no read timeout)."""
        timeout = httpx.Timeout(self._timeout, read=None if follow else self._timeout)
        try:
            async with self._http.stream("GET", path, params=params, timeout=timeout,
                                         headers={"Accept": "*/*"}) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _error(response)
                async for line in response.aiter_lines():
                    yield line
        except httpx.TransportError as exc:
            raise errors.InternalError(f"GET {path}: the stream from the API server broke: {exc}") from exc

    async def _stream(self, path: str, params: dict[str, str]) -> AsyncIterator[tuple[Any, dict[str, Any]]]:
        timeout = httpx.Timeout(self._timeout, read=WATCH_TIMEOUT_SECONDS + 60.0)
        try:
            async with self._http.stream("GET", path, params=params, timeout=timeout) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _error(response)
                async for line in response.aiter_lines():
                    if not line.strip():
                        continue
                    event = orjson.loads(line)
                    kind, obj = event.get("type"), event.get("object") or {}
                    if kind == "ERROR":
                        raise errors.from_status(obj)
                    yield kind, obj
        except httpx.TransportError as exc:
            raise errors.InternalError(f"watch {path}: the stream from the API server broke: {exc}") from exc


__all__ = ["PROXY", "WATCH_TIMEOUT_SECONDS", "Credentials", "RestClient", "merge_kubeconfigs",
           "read_kubeconfig", "read_kubeconfigs"]
