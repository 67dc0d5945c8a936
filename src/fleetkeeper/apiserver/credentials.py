"""Bearer tokens kept in the store, so every replica of a plane knows every token.

:class:`StoreTokens` is the API server's :class:`~fleetkeeper.apiserver.auth.Tokens` when
the plane's identity lives in its store (:mod:`fleetkeeper.apiserver.identity`): it lists
the credential Secrets of ``karmada-system`` once, then follows them with a watch, so a
token issued through one replica is accepted by all and one revoked through any is
refused by all as soon as the store tells them (a watch event: milliseconds, well under a
second). A request costs a hash and a dictionary look-up, never a store read. When the
watch breaks (the store restarts, history was compacted) it lists again and resumes;
until then the tokens known last stay in force (:class:`~fleetkeeper.apiserver.mirror.Mirror`
follows them, as it follows the RBAC kinds).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
from typing import Any

import structlog

from fleetkeeper import errors
from fleetkeeper.apiserver import identity
from fleetkeeper.apiserver.auth import ADMIN, AGENT_USER_PREFIX, Tokens, User, new_token
from fleetkeeper.apiserver.mirror import Mirror
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import Event, StoreProtocol

_log = structlog.get_logger("fleetkeeper.apiserver")
AGENT_GROUPS = ("system:fleetkeeper:agents", "system:authenticated")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class StoreTokens(Tokens):
    """The admin token and the agents' tokens, as the store's credential Secrets say (see the
    module notes). :meth:`start` before serving, :meth:`stop` after."""

    def __init__(self, store: StoreProtocol, *, admin: str, clock: Clock) -> None:
        super().__init__(admin=admin)
        self._store = store
        #: sha256 of an agent's token → its cluster
        self._clusters: dict[bytes, str] = {}
        self._mirror = Mirror(store, identity.SECRET, clock=clock, on_list=self._listed, on_event=self._apply,
                              namespace=identity.NAMESPACE, label_selector=identity.CREDENTIAL_LABEL)

    # ------------------------------------------------------------------ following the store
    async def start(self) -> None:
        """Read the tokens and follow their changes from then on."""
        await self._mirror.start()

    async def stop(self) -> None:
        await self._mirror.stop()

    def _listed(self, items: list[dict[str, Any]]) -> None:
        agents: dict[str, str] = {}
        for obj in items:
            self._take(obj, agents)
        self._set_agents(agents)

    def _apply(self, event: Event) -> None:
        agents = self.agents
        if event.type == "DELETED":
            cluster = _cluster_of(event.object)
            if cluster is not None and agents.pop(cluster, None) is not None:
                _log.info("agent token revoked", cluster=cluster)
        else:
            self._take(event.object, agents)
        self._set_agents(agents)

    def _take(self, obj: dict[str, Any], agents: dict[str, str]) -> None:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        token = identity.secret_value(obj, "token")
        if not token:
            return
        name = obj["metadata"].get("name")
        if labels.get(identity.CREDENTIAL_LABEL) == "admin" and name == identity.ADMIN_SECRET:
            self.admin = token.decode()
            return
        cluster = _cluster_of(obj)
        if cluster is not None:
            agents[cluster] = token.decode()

    def _set_agents(self, agents: dict[str, str]) -> None:
        before = set(self._agents)
        self._agents = agents
        self._clusters = {_digest(token): cluster for cluster, token in agents.items()}
        if set(agents) != before:
            self._changed()

    # ------------------------------------------------------------------ requests
    def authenticate(self, authorization: str | None) -> User:
        if not authorization:
            return super().authenticate(authorization)
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return super().authenticate(authorization)
        if hmac.compare_digest(token.encode(), self.admin.encode()):
            return ADMIN
        cluster = self._clusters.get(_digest(token))
        if cluster is None:
            raise errors.Unauthorized("Unauthorized: the bearer token is not valid")
        return User(AGENT_USER_PREFIX + cluster, AGENT_GROUPS, cluster=cluster)

    # ------------------------------------------------------------------ changes, through the store
    async def issue(self, cluster: str, *, rotate: bool = False) -> str:
        """The token of ``cluster``'s agent, created when it has none (or ``rotate``)."""
        name = identity.agent_secret_name(cluster)
        obj, created = await identity.ensure_secret(
            self._store, name, lambda: identity.agent_token_secret(cluster, new_token()))
        if rotate and not created:
            fresh = identity.agent_token_secret(cluster, new_token())
            fresh["metadata"]["resourceVersion"] = obj["metadata"]["resourceVersion"]
            obj = await self._store.update(fresh)
        token = identity.secret_value(obj, "token")
        if not token:
            raise errors.Invalid(f"secret {identity.NAMESPACE}/{name}: data.token: Required value")
        agents = self.agents
        self._take(obj, agents)
        self._set_agents(agents)
        return token.decode()

    async def revoke(self, cluster: str) -> None:
        """Revoke the token of ``cluster``'s agent on every replica (its Secret is deleted)."""
        with contextlib.suppress(errors.NotFound):
            await self._store.delete(identity.SECRET, identity.NAMESPACE, identity.agent_secret_name(cluster))
        agents = self.agents
        if agents.pop(cluster, None) is not None:
            _log.info("agent token revoked", cluster=cluster)
        self._set_agents(agents)

    def add_agent(self, cluster: str, token: str | None = None) -> str:
        raise TypeError("the tokens live in the store: use issue()")

    def revoke_agent(self, cluster: str) -> None:
        raise TypeError("the tokens live in the store: use revoke()")


def _cluster_of(obj: dict[str, Any]) -> str | None:
    """The cluster an agent-token Secret is for (its label, else its name's suffix)."""
    metadata = obj.get("metadata") or {}
    labels = metadata.get("labels") or {}
    if labels.get(identity.CREDENTIAL_LABEL) != "agent":
        return None
    name = str(metadata.get("name") or "")
    cluster = labels.get(identity.CLUSTER_LABEL) or name.removeprefix(identity.AGENT_SECRET_PREFIX)
    return str(cluster) if name == identity.agent_secret_name(str(cluster)) else None


__all__ = ["StoreTokens"]
