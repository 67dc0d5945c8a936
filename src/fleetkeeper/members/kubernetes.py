"""``KubernetesMember``: a real member cluster, reached through lightkube.

The kubernetes backend of the :class:`~fleetkeeper.members.interface.Member` protocol.
Objects are wire dicts, of any kind: the plural and scope of a kind come from the
member's discovery (``kubernetes_discovery.py``, cached). What each call does:

* ``apply`` — server-side apply (``PATCH`` ``application/apply-patch+yaml``, field
  manager ``fleetkeeper``, ``force`` by default), without ``status`` (controllers in
  the member own it). An object of a namespace the member does not have is refused by
  the member (NotFound ``namespaces "NAME" not found``), as it is: the control plane's
  namespace sync creates the namespaces, and a Work waits for its namespace;
* ``get`` / ``delete`` — ``None`` / ``False`` when absent (or the kind is not served);
  deletion propagates in the background, as ``kubectl delete`` does;
* ``list`` — all namespaces unless one is given, sorted by namespace and name;
* ``watch`` — list, ``ADDED`` for each object, then a watch from the list's
  ``resourceVersion``. When the member answers ``410 Expired`` the stream lists again
  and reports the difference (``ADDED``/``MODIFIED``/``DELETED``), so a consumer never
  sees the gap. Status read-back rides on this;
* ``probe`` — ``GET`` a health path and return the HTTP status code, whatever it is;
* ``summary`` — ``gitVersion`` of ``/version`` (empty when the member does not say),
  API enablements from discovery, node and resource summaries from Nodes and Pods
  (``kubernetes_summary.py``).

Failures follow ``kubernetes_http.translated``: ``MemberUnreachable``,
``MemberTimeout``, or the ``ApiError`` the member's ``Status`` names.

**Where the configuration comes from.** :meth:`KubernetesMember.from_kubeconfig` (a
file and a context, read at once so a bad one is refused at registration) and
:meth:`KubernetesMember.from_endpoint` (``Cluster.spec.apiEndpoint`` and the
credentials the control plane reads from the Secret named by ``spec.secretRef``,
fetched on first use; see ``kubernetes_pool.py``). As member URLs (``open_member``):

* ``kube://CONTEXT`` — a context of the default kubeconfig (the first existing file of
  ``$KUBECONFIG``, else ``~/.kube/config``); ``kube://`` alone is its current context;
* ``kube:///path/to/kubeconfig#CONTEXT`` — a context of that file (``#CONTEXT`` may be
  left out: the file's current context). Characters outside a URL's are %-escaped.
  The kubeconfig is read within 1 MiB; its cluster's ``proxy-url`` is the member's proxy.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lightkube.config import models
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError
from lightkube.types import CascadeType

from fleetkeeper import errors
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.members import kubernetes_summary as summaries
from fleetkeeper.members.interface import FIELD_MANAGER, ClusterSummary, MemberEvent, ObjectRef
from fleetkeeper.members.kubeconfig import proxy_url, read_kubeconfig
from fleetkeeper.members.kubernetes_discovery import Resource
from fleetkeeper.members.kubernetes_http import Connection, translated
from fleetkeeper.members.kubernetes_selectors import label_pairs

#: a member's configuration, produced when first needed (credentials may be read then)
Connector = Callable[[], Awaitable[SingleConfig]]
#: how long a watch request lasts before the member ends it and it is renewed
WATCH_SECONDS = 290
DEFAULT_TIMEOUT = 30.0
Key = tuple[str, str]


@dataclass(frozen=True)
class Credentials:
    """How to reach a cluster at a known endpoint: Karmada's cluster Secret (keys ``token``
    and ``caBundle``) plus ``Cluster.spec.insecureSkipTLSVerification``."""

    token: str | None = None
    #: PEM of the CA(s) that sign the member's serving certificate (None: the system's)
    ca_bundle: bytes | None = None
    insecure_skip_tls_verify: bool = False

    def __repr__(self) -> str:  # never print the token
        return (f"Credentials(token={'***' if self.token else None}, ca_bundle={bool(self.ca_bundle)}, "
                f"insecure_skip_tls_verify={self.insecure_skip_tls_verify})")

    def config(self, server: str, name: str) -> SingleConfig:
        """The lightkube configuration of ``server`` with these credentials (as Karmada builds
        its cluster clients, skipping verification ignores the CA bundle)."""
        insecure = self.insecure_skip_tls_verify
        ca = base64.b64encode(self.ca_bundle).decode() if self.ca_bundle and not insecure else None
        cluster = models.Cluster(server=server, certificate_auth_data=ca, insecure=insecure)
        user = models.User(token=self.token) if self.token else models.User()
        config = KubeConfig.from_one(cluster=cluster, user=user, context_name=name).get()
        if config is None:  # from_one always sets a current context
            raise ValueError(f"cluster {name!r}: no configuration")
        return config


def default_kubeconfig(env: dict[str, str] | None = None) -> Path:
    """The first existing file of ``$KUBECONFIG``, else ``~/.kube/config``."""
    environ = os.environ if env is None else env
    for entry in environ.get("KUBECONFIG", "").split(os.pathsep):
        if entry.strip() and Path(entry).expanduser().is_file():
            return Path(entry).expanduser()
    return Path("~/.kube/config").expanduser()


def parse_kube_url(url: str) -> tuple[Path | None, str | None]:
    """``(kubeconfig file or None for the default, context or None for the current one)``."""
    if not url.startswith("kube://"):
        raise ValueError(f"member URL {url!r}: expected kube://CONTEXT or kube:///path/to/kubeconfig#CONTEXT")
    location, _, fragment = url[len("kube://"):].partition("#")
    if "?" in location:
        raise ValueError(f"member URL {url!r}: kube:// URLs take no parameters")
    if location.startswith("/"):
        return Path(unquote(location)), unquote(fragment) or None
    if fragment:
        raise ValueError(f"member URL {url!r}: a #CONTEXT goes with a file path (kube:///path#CONTEXT)")
    return None, unquote(location) or None


def read_context(path: Path | None, context: str | None) -> tuple[SingleConfig, str | None]:
    """One context of a kubeconfig file, read within ``MAX_KUBECONFIG_BYTES``, and its cluster's
    ``proxy-url`` (``ValueError`` when the file or the context is missing or unusable)."""
    file = (path or default_kubeconfig()).expanduser()
    try:
        doc = read_kubeconfig(file)
        config = KubeConfig.from_dict(doc, fname=file).get(context)
    except (ConfigError, OSError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"kubeconfig {file}: {exc}") from None
    if config is None:
        raise ValueError(f"kubeconfig {file}: no current context; name one")
    return config, proxy_url(doc, config.context.cluster)


def load_context(path: Path | None, context: str | None) -> SingleConfig:
    """One context of a kubeconfig file (:func:`read_context`)."""
    return read_context(path, context)[0]


def _plain(obj: Any) -> dict[str, Any]:
    return dict(obj)


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class KubernetesMember:
    """A real member cluster (see the module notes)."""

    def __init__(self, name: str, connect: Connector, *, clock: Clock | None = None,
                 timeout: float = DEFAULT_TIMEOUT, refreshable: bool = False,
                 proxy: str | None = None) -> None:
        self._name = name
        self._proxy = proxy
        self._connect = connect
        self._clock = clock or SystemClock()
        self._timeout = timeout
        #: credentials may change (a rotated token): forget the connection on 401
        self._refreshable = refreshable
        self._connection: Connection | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path | None = None, context: str | None = None, *, name: str | None = None,
                        clock: Clock | None = None, timeout: float = DEFAULT_TIMEOUT) -> KubernetesMember:
        """The cluster of a kubeconfig context, through its cluster's ``proxy-url`` if it has one
        (read now: ``ValueError`` when it is unusable)."""
        config, proxy = read_context(path, context)

        async def connect() -> SingleConfig:
            return config

        return cls(name or config.context_name, connect, clock=clock, timeout=timeout, proxy=proxy)

    @classmethod
    def from_endpoint(cls, name: str, server: str, credentials: Callable[[], Awaitable[Credentials]], *,
                      clock: Clock | None = None, timeout: float = DEFAULT_TIMEOUT) -> KubernetesMember:
        """The cluster at ``server`` (``https://…``); ``credentials`` are fetched on first use and
        again after the member refuses them (401), so a rotated token is picked up."""
        if not server.startswith(("https://", "http://")):
            raise ValueError(f"cluster {name!r}: apiEndpoint {server!r} is not an http(s) URL")

        async def connect() -> SingleConfig:
            return (await credentials()).config(server, name)

        return cls(name, connect, clock=clock, timeout=timeout, refreshable=True)

    @classmethod
    def from_url(cls, url: str, *, clock: Clock | None = None) -> KubernetesMember:
        """The cluster a ``kube://`` URL names (see the module notes)."""
        path, context = parse_kube_url(url)
        return cls.from_kubeconfig(path, context, clock=clock)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"KubernetesMember({self._name!r})"

    # -- connection ---------------------------------------------------------------------
    async def _conn(self) -> Connection:
        if self._connection is None:
            try:
                config = await self._connect()
                connection = Connection(config, clock=self._clock, timeout=self._timeout, proxy=self._proxy)
            except errors.MemberError:
                raise
            except (errors.ApiError, ValueError, ConfigError, OSError) as exc:
                raise errors.MemberUnreachable(f"member cluster {self._name!r}: no client: {exc}") from exc
            if self._connection is None:
                self._connection = connection
            else:
                await connection.close()
        return self._connection

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[Connection]:
        connection = await self._conn()
        try:
            with translated(self._name):
                yield connection
        except errors.Unauthorized:
            if self._refreshable and self._connection is connection:
                self._connection = None
                await connection.close()
            raise

    async def _resource(self, connection: Connection, api_version: str, kind: str) -> Resource | None:
        return await connection.discovery.resource(api_version, kind)

    # -- Member: objects ----------------------------------------------------------------
    async def apply(self, manifest: dict[str, Any], *, field_manager: str = FIELD_MANAGER,
                    force: bool = True) -> dict[str, Any]:
        api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            raise errors.Invalid("apiVersion and kind are required")
        async with self._session() as conn:
            resource = await self._resource(conn, api_version, kind)
            if resource is None:
                raise errors.NotFound(f'the member does not serve {kind} in {api_version} (no matches for '
                                      f'kind "{kind}" in version "{api_version}")', kind=kind)
            body = {k: v for k, v in manifest.items() if k != "status"}
            meta = dict(body.get("metadata") or {})
            if resource.namespaced:
                meta["namespace"] = meta.get("namespace") or "default"
            else:
                meta.pop("namespace", None)
            body["metadata"] = meta
            with translated(self._name):
                live = await conn.objects.apply(resource.cls(body), field_manager=field_manager, force=force)
            return _plain(live)

    async def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        async with self._session() as conn:
            resource = await self._resource(conn, ref.api_version, ref.kind)
            if resource is None:
                return None
            try:
                with translated(self._name):
                    found = await conn.objects.get(resource.cls, ref.name,
                                                   namespace=_namespace(resource, ref))
            except errors.NotFound:
                return None
            return _plain(found)

    async def delete(self, ref: ObjectRef) -> bool:
        async with self._session() as conn:
            resource = await self._resource(conn, ref.api_version, ref.kind)
            if resource is None:
                return False
            try:
                with translated(self._name):
                    await conn.objects.delete(resource.cls, ref.name, namespace=_namespace(resource, ref),
                                              cascade=CascadeType.BACKGROUND)
            except errors.NotFound:
                return False
            return True

    async def list(self, api_version: str, kind: str, namespace: str | None = None, *,
                   label_selector: str | None = None) -> builtins.list[dict[str, Any]]:
        async with self._session() as conn:
            resource = await self._resource(conn, api_version, kind)
            if resource is None:
                return []
            items, _ = await self._list(conn, resource, namespace, label_selector)
            return items

    async def _list(self, conn: Connection, resource: Resource, namespace: str | None,
                    label_selector: str | None) -> tuple[builtins.list[dict[str, Any]], str]:
        scope = (namespace or "*") if resource.namespaced else None
        listing = conn.objects.list(resource.cls, namespace=scope, labels=label_pairs(label_selector))
        items = [_plain(obj) async for obj in listing]
        return sorted(items, key=_key), listing.resourceVersion

    def watch(self, api_version: str, kind: str, *, label_selector: str | None = None
              ) -> AsyncIterator[MemberEvent]:
        return self._watch(api_version, kind, label_selector)

    async def _watch(self, api_version: str, kind: str, label_selector: str | None
                     ) -> AsyncIterator[MemberEvent]:
        known: dict[Key, dict[str, Any]] = {}
        async with self._session() as conn:
            resource = await self._resource(conn, api_version, kind)
            if resource is None:
                raise errors.NotFound(f"the member does not serve {kind} in {api_version}", kind=kind)
            items, version = await self._list(conn, resource, None, label_selector)
        for item in items:
            known[_key(item)] = item
            yield MemberEvent("ADDED", item)
        while True:
            try:
                async for event in self._follow(resource, label_selector, version, known):
                    yield event
            except errors.Gone:
                async with self._session() as conn:
                    items, version = await self._list(conn, resource, None, label_selector)
                for event in _difference(known, items):
                    yield event

    async def _follow(self, resource: Resource, label_selector: str | None, version: str,
                      known: dict[Key, dict[str, Any]]) -> AsyncIterator[MemberEvent]:
        async with self._session() as conn:
            scope = "*" if resource.namespaced else None
            stream: Any = conn.objects.watch(
                resource.cls, namespace=scope, labels=label_pairs(label_selector), resource_version=version,
                server_timeout=WATCH_SECONDS)
            async with contextlib.aclosing(stream) as events:
                async for event_type, obj in events:
                    if event_type not in ("ADDED", "MODIFIED", "DELETED"):
                        continue  # bookmarks
                    item = _plain(obj)
                    if event_type == "DELETED":
                        known.pop(_key(item), None)
                    else:
                        known[_key(item)] = item
                    yield MemberEvent(event_type, item)

    # -- Member: health and status ------------------------------------------------------
    async def probe(self, path: str) -> int:
        async with self._session() as conn:
            response = await conn.http.get(path)
            return response.status_code

    async def summary(self) -> ClusterSummary:
        async with self._session() as conn:
            response = await conn.http.get("/version", headers={"Accept": "application/json"})
            version = ""
            if response.status_code == 200:
                with contextlib.suppress(ValueError, AttributeError):
                    version = str(response.json().get("gitVersion") or "")
            enablements = await conn.discovery.enablements()
        nodes = await self.list("v1", "Node")
        pods = await self.list("v1", "Pod")
        return ClusterSummary(
            kubernetes_version=version, api_enablements=enablements,
            node_summary=summaries.node_summary(nodes),
            resource_summary=summaries.resource_summary(nodes, pods),
        )

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()


def _namespace(resource: Resource, ref: ObjectRef) -> str | None:
    return (ref.namespace or "default") if resource.namespaced else None


def _difference(known: dict[Key, dict[str, Any]], items: builtins.list[dict[str, Any]]
                ) -> builtins.list[MemberEvent]:
    """The events that turn ``known`` into ``items`` (after a relist); updates ``known``."""
    events: builtins.list[MemberEvent] = []
    fresh = {_key(item): item for item in items}
    for key, item in fresh.items():
        before = known.get(key)
        if before is None:
            events.append(MemberEvent("ADDED", item))
        elif (before.get("metadata") or {}).get("resourceVersion") != (item.get("metadata") or {}).get(
                "resourceVersion"):
            events.append(MemberEvent("MODIFIED", item))
    for key in [k for k in known if k not in fresh]:
        events.append(MemberEvent("DELETED", known[key]))
    known.clear()
    known.update(fresh)
    return events


__all__ = [
    "DEFAULT_TIMEOUT", "WATCH_SECONDS", "Connector", "Credentials", "KubernetesMember", "default_kubeconfig",
    "load_context", "parse_kube_url", "read_context",
]
