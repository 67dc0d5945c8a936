"""Authentication (bearer tokens) and authorization (who may do what).

Identities:

* **admin** — the operator's token (written into the admin kubeconfig): everything;
* **pull agent of cluster C** — one token per Pull-mode cluster, the user
  ``system:fleetkeeper:agent:C`` in the group ``system:fleetkeeper:agents``. An agent runs next
  to its member, possibly on a machine we trust less, so it may touch only what it needs: its
  own ``Cluster`` (register it, read it, write its ``/status``), its heartbeat Lease
  ``karmada-cluster/C``, the Works in its execution namespace ``karmada-es-C`` and Events about
  those. That is said in RBAC like everyone's rights — the default ClusterRole
  ``system:fleetkeeper:agent`` and each agent's own grants (:mod:`fleetkeeper.apiserver.agent_rbac`)
  — and what RBAC cannot say (a create names no object; that the Cluster stays ``Pull`` and
  never tells the plane where to call out, that an Event is about the agent's own objects) is
  checked on the object written, by :mod:`fleetkeeper.apiserver.confine`;
* **anonymous** (no ``Authorization`` header) — only the public, read-only endpoints:
  discovery, OpenAPI, ``/version`` and the health checks. Anything else is ``401``.

A wrong token is ``401`` whatever the path. Tokens are compared in constant time.
:class:`Tokens` can be saved to and loaded from a JSON file (mode ``0600``) so a
restarted server keeps the agents' credentials.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from fleetkeeper import errors
from fleetkeeper.apiserver.rbac import RbacIndex

AGENT_USER_PREFIX = "system:fleetkeeper:agent:"
LEASE_NAMESPACE = "karmada-cluster"
EXECUTION_NAMESPACE_PREFIX = "karmada-es-"


@dataclass(frozen=True)
class User:
    """An authenticated (or anonymous) caller."""

    name: str
    groups: tuple[str, ...] = ()
    #: the cluster a pull agent acts for, else None
    cluster: str | None = None

    @property
    def is_anonymous(self) -> bool:
        return self.name == ANONYMOUS.name

    @property
    def is_admin(self) -> bool:
        return "system:masters" in self.groups


ANONYMOUS = User("system:anonymous", ("system:unauthenticated",))
ADMIN = User("fleetkeeper-admin", ("system:masters", "system:authenticated"))


def new_token() -> str:
    """A fresh random bearer token."""
    return secrets.token_urlsafe(32)


class Tokens:
    """Bearer tokens and the identities they stand for."""

    def __init__(self, *, admin: str, agents: dict[str, str] | None = None) -> None:
        self.admin = admin
        self._agents: dict[str, str] = dict(agents or {})
        self._listeners: list[Callable[[], None]] = []

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever the set of agents' tokens changes."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    @property
    def agents(self) -> dict[str, str]:
        """cluster name → token (a copy)."""
        return dict(self._agents)

    def add_agent(self, cluster: str, token: str | None = None) -> str:
        """Issue (or set) the token of the pull agent of ``cluster``; return it."""
        self._agents[cluster] = token or new_token()
        self._changed()
        return self._agents[cluster]

    def revoke_agent(self, cluster: str) -> None:
        if self._agents.pop(cluster, None) is not None:
            self._changed()

    async def revoke(self, cluster: str) -> None:
        """Revoke the token of ``cluster``'s agent (where the tokens are kept)."""
        self.revoke_agent(cluster)

    def authenticate(self, authorization: str | None) -> User:
        """The caller of a request from its ``Authorization`` header (``ANONYMOUS`` if none)."""
        if not authorization:
            return ANONYMOUS
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise errors.Unauthorized("Unauthorized: only bearer tokens are accepted")
        if hmac.compare_digest(token.encode(), self.admin.encode()):
            return ADMIN
        for cluster, agent_token in self._agents.items():
            if hmac.compare_digest(token.encode(), agent_token.encode()):
                groups = ("system:fleetkeeper:agents", "system:authenticated")
                return User(AGENT_USER_PREFIX + cluster, groups, cluster=cluster)
        raise errors.Unauthorized("Unauthorized: the bearer token is not valid")

    def save(self, path: Path) -> None:
        """Write the tokens to ``path`` (JSON, mode 0600)."""
        data = json.dumps({"admin": self.admin, "agents": self._agents}, indent=2, sort_keys=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(data)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> Tokens:
        data = json.loads(path.read_text())
        agents = {str(k): str(v) for k, v in data.get("agents", {}).items()}
        return cls(admin=str(data["admin"]), agents=agents)

    @classmethod
    def load_or_create(cls, path: Path) -> Tokens:
        """Load ``path``, or create it with a new admin token."""
        if path.exists():
            return cls.load(path)
        tokens = cls(admin=new_token())
        path.parent.mkdir(parents=True, exist_ok=True)
        tokens.save(path)
        return tokens


@dataclass(frozen=True)
class Attributes:
    """What a resource request does, for authorization."""

    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    subresource: str | None = None
    field_selector: str | None = None

    def describe(self, user: User) -> str:
        scope = f'in the namespace "{self.namespace}"' if self.namespace else "at the cluster scope"
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        qualified = f"{self.resource}.{self.group}" if self.group else self.resource
        what = f'{qualified} "{self.name}"' if self.name else qualified
        return (f'{what} is forbidden: User "{user.name}" cannot {self.verb} resource "{resource}" '
                f'in API group "{self.group}" {scope}')


def _pinned_name(field_selector: str | None) -> str | None:
    for term in (field_selector or "").split(","):
        key, op, value = term.replace("==", "=").partition("=")
        if op and key.strip() == "metadata.name" and not key.endswith("!"):
            return value.strip()
    return None


#: where an agent's Events live: a Cluster's (cluster-scoped) in ``default``, a Work's in its namespace
EVENT_NAMESPACE = "default"


Rule = dict[str, list[str]]
#: the self reviews every authenticated caller may post (``kubectl auth whoami``, ``kubectl auth can-i``)
SELF_REVIEWS: Rule = {
    "verbs": ["create"], "apiGroups": ["authorization.k8s.io", "authentication.k8s.io"],
    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews"]}


def rules(user: User, namespace: str, rbac: RbacIndex | None = None) -> tuple[list[Rule], list[Rule]]:
    """What ``user`` may do in ``namespace`` (and at the cluster scope), as RBAC's resource and
    non-resource rules: what the stored RBAC bindings grant the caller (``rbac``) — a Pull agent
    like anyone — and the answer of ``kubectl auth can-i --list``."""
    if user.is_admin:
        return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}])
    public: list[Rule] = [{"verbs": ["get"],
                           "nonResourceURLs": sorted([*PUBLIC_PATHS, *(p + "/*" for p in PUBLIC_PATHS)])}]
    bound = [r.wire() for r in rbac.rules_for(user.name, user.groups, namespace)] if rbac is not None else []
    public += [r for r in bound if "nonResourceURLs" in r]
    return [SELF_REVIEWS, *(r for r in bound if "nonResourceURLs" not in r)], public


def _rbac_allows(rbac: RbacIndex, user: User, a: Attributes) -> bool:
    """Whether the stored RBAC bindings grant the request (a create names nothing, as in
    Kubernetes; a list or watch pinned to one name names it)."""
    name = "" if a.verb == "create" else \
        a.name or (_pinned_name(a.field_selector) or "" if a.verb in ("list", "watch") else "")
    return rbac.allows(user.name, user.groups, verb=a.verb, group=a.group, resource=a.resource,
                       subresource=a.subresource, namespace=a.namespace, name=name)


def authorize(user: User, attributes: Attributes, rbac: RbacIndex | None = None) -> None:
    """Raise ``Unauthorized``/``Forbidden`` unless ``user`` may make this resource request: the
    admin (``system:masters``) any, anyone else — a Pull agent too — what the stored RBAC
    bindings grant them (``rbac``)."""
    if user.is_admin:
        return
    authenticated(user)
    if rbac is not None and _rbac_allows(rbac, user, attributes):
        return
    if attributes.verb == "create":  # kube-apiserver names no object in a refused create
        attributes = replace(attributes, name="")
    raise errors.Forbidden(attributes.describe(user), kind=attributes.resource,
                           group=attributes.group, name=attributes.name or None)


#: non-resource paths every caller may GET (and what lies below them); the rest are the admin's
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version", "/api", "/apis", "/openapi")


def authenticated(user: User) -> None:
    """Raise ``Unauthorized`` for an anonymous caller (requests that need a bearer token)."""
    if user.is_anonymous:
        raise errors.Unauthorized("Unauthorized: this request needs a bearer token")


def authorize_path(user: User, verb: str, path: str, rbac: RbacIndex | None = None) -> None:
    """Raise ``Forbidden`` unless ``user`` may make this non-resource request: the admin any,
    every caller ``get`` of :data:`PUBLIC_PATHS`, anyone what a ClusterRoleBinding grants them."""
    if user.is_admin:
        return
    if verb.lower() == "get" and any(path == p or path.startswith(p + "/") for p in PUBLIC_PATHS):
        return
    if rbac is not None and not user.is_anonymous \
            and rbac.allows_path(user.name, user.groups, verb.lower(), path):
        return
    raise errors.Forbidden(f'forbidden: User "{user.name}" cannot {verb} path "{path}"')


__all__ = [
    "ADMIN", "AGENT_USER_PREFIX", "ANONYMOUS", "EVENT_NAMESPACE", "EXECUTION_NAMESPACE_PREFIX",
    "LEASE_NAMESPACE", "PUBLIC_PATHS", "SELF_REVIEWS", "Attributes", "Rule", "Tokens", "User",
    "authenticated", "authorize", "authorize_path", "new_token", "rules",
]
