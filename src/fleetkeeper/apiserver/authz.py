"""What the API server keeps in memory to decide requests: the RBAC index and the ServiceAccounts.

:class:`Authorizer` is started before the first answer (:meth:`Authorizer.ensure`): it
reconciles the default ClusterRoles (:mod:`fleetkeeper.apiserver.rbac_defaults`), loads the
ServiceAccount token signing key (:mod:`fleetkeeper.apiserver.satokens`), lists Roles,
ClusterRoles, their bindings and the ServiceAccounts, and follows them with watches
(:mod:`fleetkeeper.apiserver.mirror`), so every replica sharing the store sees a binding or
an account change within milliseconds and a request never reads the store to be authorized.
A write made through this server is taken in at once too (:meth:`Authorizer.written`), so the
next request of the same client sees it; each object's resourceVersion is kept so a late
watch event never undoes a newer state. It also keeps each Pull agent's own RBAC grants in step
with the agents' tokens (:mod:`fleetkeeper.apiserver.agent_rbac`): granted at start and when a
token is issued, removed when it is revoked.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
import structlog
from starlette.datastructures import Headers

from fleetkeeper.api.scheme import GroupKind, Scheme
from fleetkeeper.apiserver import rbac_defaults, satokens
from fleetkeeper.apiserver.agent_rbac import AgentGrants
from fleetkeeper.apiserver.auth import Tokens, User
from fleetkeeper.apiserver.impersonate import impersonate
from fleetkeeper.apiserver.mirror import Mirror
from fleetkeeper.apiserver.rbac import GROUP, RbacIndex
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import Event, StoreProtocol

_log = structlog.get_logger("fleetkeeper.apiserver")
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
SERVICE_ACCOUNT = GroupKind("", "ServiceAccount")


def _key(obj: dict[str, Any]) -> tuple[str, str, int]:
    meta = obj.get("metadata") or {}
    version = str(meta.get("resourceVersion") or "0")
    number = int(version) if version.isdigit() else 0
    return str(meta.get("namespace") or ""), str(meta.get("name") or ""), number


class Authorizer:
    """The RBAC index and the ServiceAccounts' uids, following the store (see the module notes)."""

    def __init__(self, store: StoreProtocol, *, scheme: Scheme, clock: Clock,
                 tokens: Tokens | None = None) -> None:
        self._store = store
        self._tokens = tokens
        self._grants = AgentGrants(store, scheme=scheme, clock=clock,
                                   written=lambda kind, obj, deleted: self._take(kind, obj, deleted=deleted))
        self._agents_changed = asyncio.Event()
        self._granter: asyncio.Task[None] | None = None
        if tokens is not None:
            tokens.subscribe(self._agents_changed.set)
        self._scheme = scheme
        self._clock = clock
        self.index = RbacIndex()
        #: (namespace, name) → uid of every stored ServiceAccount
        self.accounts: dict[tuple[str, str], str] = {}
        self.signer: satokens.Signer | None = None
        self._versions: dict[tuple[str, str, str], int] = {}
        self._mirrors: list[Mirror] = []
        self._closer: asyncio.Task[None] | None = None
        self._started = False
        self._lock = asyncio.Lock()

    async def ensure(self, closing: asyncio.Event | None = None) -> None:
        """Start (once): defaults, signing key, listings, watches — until ``closing`` is set."""
        if self._started:
            return
        async with self._lock:
            if self._started:
                return
            await rbac_defaults.reconcile_defaults(self._store, self._scheme, clock=self._clock)
            self.signer = await satokens.load_signer(self._store, clock=self._clock, accounts=self.accounts)
            for kind in RBAC_KINDS:
                self._mirrors.append(self._mirror(GroupKind(GROUP, kind)))
            self._mirrors.append(self._mirror(SERVICE_ACCOUNT))
            for mirror in self._mirrors:
                await mirror.start()
            if self._tokens is not None:
                await self._grants.start(self._tokens.agents)
                loop = asyncio.get_running_loop()
                self._granter = loop.create_task(self._follow_agents(), name="agent-grants")
            self._started = True
            if closing is not None:
                loop = asyncio.get_running_loop()
                self._closer = loop.create_task(self._stop_on(closing), name="authz-close")

    async def _stop_on(self, closing: asyncio.Event) -> None:
        await closing.wait()
        await self.stop()

    async def _follow_agents(self) -> None:
        """Grant a new agent, and remove a revoked one's grants, as the tokens change."""
        assert self._tokens is not None
        while True:
            await self._agents_changed.wait()
            self._agents_changed.clear()
            try:
                await self._grants.sync(self._tokens.agents)
            except Exception as exc:  # the store is away: the next change (or start) tries again
                _log.warning("agent grants not in step", error=str(exc))
                self._agents_changed.set()
                await self._clock.sleep(1.0)

    async def stop(self) -> None:
        if self._granter is not None:
            self._granter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._granter
            self._granter = None
        for mirror in self._mirrors:
            await mirror.stop()
        self._mirrors.clear()
        self._started = False

    def authenticate(self, tokens: Tokens, headers: Headers) -> User:
        """The caller of a request: a signed token's (ServiceAccount, person) or one of ``tokens``
        (admin, agents), then whoever it impersonates."""
        authorization = headers.get("authorization")
        scheme, _, token = (authorization or "").strip().partition(" ")
        if self.signer is not None and scheme.lower() == "bearer" and satokens.looks_signed(token.strip()):
            user = self.signer.authenticate(token.strip())
        else:
            user = tokens.authenticate(authorization)
        return impersonate(headers, user, self.index)

    def _mirror(self, gk: GroupKind) -> Mirror:
        return Mirror(self._store, gk, clock=self._clock,
                      on_list=lambda items: self._listed(gk.kind, items),
                      on_event=lambda event: self._event(gk.kind, event))

    def _listed(self, kind: str, items: list[dict[str, Any]]) -> None:
        self._versions = {k: v for k, v in self._versions.items() if k[0] != kind}
        for obj in items:
            namespace, name, version = _key(obj)
            self._versions[(kind, namespace, name)] = version
        if kind == SERVICE_ACCOUNT.kind:
            self.accounts.clear()
            self.accounts.update({_key(obj)[:2]: str(obj["metadata"].get("uid") or "") for obj in items})
        else:
            self.index.replace(kind, items)

    def _event(self, kind: str, event: Event) -> None:
        self._take(kind, event.object, deleted=event.type == "DELETED")

    def written(self, kind: str, body: bytes | memoryview) -> None:
        """Take in an object this server just created or updated, from the response ``body`` (its
        watch event may come later)."""
        if not self._started or (kind not in RBAC_KINDS and kind != SERVICE_ACCOUNT.kind):
            return
        try:
            obj = orjson.loads(bytes(body))
        except orjson.JSONDecodeError:
            return
        if isinstance(obj, dict) and obj.get("kind") == kind:
            self._take(kind, obj, deleted=False)

    def _take(self, kind: str, obj: dict[str, Any], *, deleted: bool) -> None:
        namespace, name, version = _key(obj)
        key = (kind, namespace, name)
        if version and version < self._versions.get(key, 0):
            return  # older than what is known
        self._versions[key] = version
        if kind == SERVICE_ACCOUNT.kind:
            if deleted:
                self.accounts.pop((namespace, name), None)
            else:
                self.accounts[(namespace, name)] = str((obj.get("metadata") or {}).get("uid") or "")
        elif deleted:
            self.index.remove(kind, obj)
        else:
            self.index.put(kind, obj)

    async def __aenter__(self) -> Authorizer:
        await self.ensure()
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            await self.stop()


__all__ = ["RBAC_KINDS", "Authorizer"]
