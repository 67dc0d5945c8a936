"""Each Pull agent's own RBAC grants: stored objects, kept in step with the agents' tokens.

A Pull agent is the user ``system:fleetkeeper:agent:C``. What every agent may do is the default
ClusterRole ``system:fleetkeeper:agent`` (:mod:`fleetkeeper.apiserver.rbac_defaults`). What
only the agent of ``C`` may do is written here as ordinary RBAC objects, labelled with the
cluster, while ``C`` has an agent token:

* ClusterRole and ClusterRoleBinding ``system:fleetkeeper:agent:C``: read, watch and update its
  Cluster, read its subresources and write its ``/status`` (``resourceNames: [C]``);
* Role and RoleBinding ``system:fleetkeeper:agent:C`` in ``karmada-cluster``: its heartbeat
  Lease ``C`` (``resourceNames: [C]``);
* RoleBinding ``system:fleetkeeper:agent`` in ``karmada-es-C``: the Works of its execution
  namespace (ClusterRole ``system:fleetkeeper:agent-execution``).

:class:`AgentGrants` writes them when a token appears, deletes them when it is revoked, and at
start gives back what an edited one lacks and removes those of clusters without a token. Every
replica does it; the writes are idempotent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind, Scheme
from fleetkeeper.apiserver.auth import AGENT_USER_PREFIX, EXECUTION_NAMESPACE_PREFIX, LEASE_NAMESPACE
from fleetkeeper.apiserver.rbac import GROUP
from fleetkeeper.apiserver.rbac_defaults import (
    AGENT_EXECUTION_ROLE,
    AGENT_ROLE,
    API_VERSION,
    AUTOUPDATE,
    BOOTSTRAPPING,
    binding,
    reconcile,
)
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol

#: the label naming the cluster whose agent an object grants
CLUSTER_LABEL = "fleetkeeper.io/pull-agent"
KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
READ = ["get", "list", "watch"]


def _rules(group: str, resource: str, name: str, *grants: tuple[list[str], str]) -> list[dict[str, Any]]:
    return [{"apiGroups": [group], "resources": [resource + suffix], "resourceNames": [name], "verbs": verbs}
            for verbs, suffix in grants]


def grants(cluster: str) -> tuple[dict[str, Any], ...]:
    """The RBAC objects that give the agent of ``cluster`` what only it may do."""
    name, user = f"{AGENT_ROLE}:{cluster}", ("User", AGENT_USER_PREFIX + cluster)
    labels = {**BOOTSTRAPPING, CLUSTER_LABEL: cluster}

    def role(kind: str, rules: list[dict[str, Any]], namespace: str = "") -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "labels": labels, "annotations": {AUTOUPDATE: "true"}}
        if namespace:
            meta["namespace"] = namespace
        return {"apiVersion": API_VERSION, "kind": kind, "metadata": meta, "rules": rules}

    own = {CLUSTER_LABEL: cluster}
    return (
        role("ClusterRole", _rules("cluster.karmada.io", "clusters", cluster, ([*READ, "update"], ""),
                                   ([*READ, "patch", "update"], "/status"))),
        binding("ClusterRoleBinding", name, ("ClusterRole", name), user, labels=own),
        role("Role", _rules("coordination.k8s.io", "leases", cluster,
                            ([*READ, "delete", "patch", "update"], "")), LEASE_NAMESPACE),
        binding("RoleBinding", name, ("Role", name), user, namespace=LEASE_NAMESPACE, labels=own),
        binding("RoleBinding", AGENT_ROLE, ("ClusterRole", AGENT_EXECUTION_ROLE), user,
                namespace=EXECUTION_NAMESPACE_PREFIX + cluster, labels=own),
    )


class AgentGrants:
    """Keeps the per-agent RBAC objects in step with the agents (see the module notes); ``written``
    gets each object written or deleted (kind, object, deleted), so the server decides with it
    before its watch event comes."""

    def __init__(self, store: StoreProtocol, *, scheme: Scheme, clock: Clock,
                 written: Callable[[str, dict[str, Any], bool], None]) -> None:
        self._store = store
        self._scheme = scheme
        self._clock = clock
        self._written = written
        self._granted: set[str] = set()

    async def start(self, clusters: Iterable[str]) -> None:
        """Grant every agent in ``clusters`` (giving back what an edited grant lacks) and remove the
        grants of any other cluster."""
        wanted = set(clusters)
        stored: set[str] = set()
        for kind in KINDS:
            listed = await self._store.list(GroupKind(GROUP, kind), label_selector=CLUSTER_LABEL)
            stored.update(str(obj["metadata"]["labels"][CLUSTER_LABEL]) for obj in listed.items)
        self._granted = stored
        for cluster in sorted(wanted):
            await self._grant(cluster)
        await self.sync(wanted)

    async def sync(self, clusters: Iterable[str]) -> None:
        """Grant the agents of ``clusters`` that have no grants yet; remove those of the others."""
        wanted = set(clusters)
        for cluster in sorted(wanted - self._granted):
            await self._grant(cluster)
        for cluster in sorted(self._granted - wanted):
            await self._revoke(cluster)

    async def _grant(self, cluster: str) -> None:
        for obj in grants(cluster):
            written = await reconcile(self._store, self._scheme, obj, clock=self._clock)
            if written is not None:
                self._written(obj["kind"], written, False)
        self._granted.add(cluster)

    async def _revoke(self, cluster: str) -> None:
        for obj in grants(cluster):
            meta, gk = obj["metadata"], GroupKind(GROUP, obj["kind"])
            with contextlib.suppress(errors.NotFound):
                gone = await self._store.delete(gk, str(meta.get("namespace") or ""), meta["name"])
                self._written(obj["kind"], gone, True)
        self._granted.discard(cluster)


__all__ = ["CLUSTER_LABEL", "AgentGrants", "grants"]
