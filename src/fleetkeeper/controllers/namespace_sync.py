"""Namespace sync: every user namespace exists in every member, as Karmada's does it.

A Deployment in namespace ``prod`` can only land in a member that has ``prod``; Karmada
makes sure it does by propagating each Namespace of the control plane to every member
cluster, with no policy needed (``pkg/controllers/namespace``). This controller does the
same: for each namespace :mod:`namespace_sync_rules` lets through, one Work per cluster in
``karmada-es-CLUSTER`` whose manifest is the Namespace (its labels and annotations kept in
step); the execution controller applies it like any other Work. A Work of an object in
that namespace waits, in the meantime, for the namespace to exist in the member (see the
execution controller).

**What wakes a namespace.** Its own changes (labels, annotations, deletion); a Cluster
created, which wakes every namespace (a new member gets them all); and one of its Works
deleted by someone else (it is put back, unless its execution namespace is going away).

**Going away.** A namespace deleted (or Terminating) has its Works deleted at once, so
the execution controller removes it from the members. A namespace that stops being
propagated — it got the opt-out label, or a pattern now skips it — keeps the Works it had,
as in Karmada: removing them would delete the namespace, and everything in it, from
every member.

**Cost.** Work is per namespace × cluster and happens only when a namespace or the set
of clusters changes; the Works of everything else are looked at only when deleted.
"""

from __future__ import annotations

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.work import Work
from fleetkeeper.controllers import namespace_sync_rules as rules
from fleetkeeper.options import namespace_patterns
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Watch

CONTROLLER_NAME = "namespace-sync-controller"

_log = structlog.get_logger("fleetkeeper.namespace_sync")


class NamespaceSync:
    """Keeps one Work per member cluster for each propagated namespace (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._keys = keys
        self._skipped = namespace_patterns(ctx.options.skipped_propagating_namespaces)
        self._namespaces: Informer[Namespace] = informers.informer_for(Namespace)
        self._clusters: Informer[Cluster] = informers.informer_for(Cluster)
        self._works: Informer[Work] = informers.informer_for(Work)
        self._clusters.add_handler(FuncHandler(self._cluster_changed))
        self._works.add_handler(FuncHandler(self._work_changed))

    def _cluster_changed(self, old: Cluster | None, new: Cluster | None) -> None:
        """A new cluster gets every namespace."""
        if old is None and new is not None:
            for key in self._namespaces.keys():  # noqa: SIM118 (an informer, not a dict)
                self._keys.enqueue(Request("", key))

    def _work_changed(self, old: Work | None, new: Work | None) -> None:
        """One of the namespaces' Works deleted: look at its namespace again."""
        if new is None and old is not None:
            owner = rules.owned_by(old)
            if owner is not None:
                self._keys.enqueue(Request("", owner))

    async def reconcile(self, request: Request) -> Result:
        name = request.name
        if not rules.is_synced(name, self._skipped):
            return Result()
        namespace = self._namespaces.get(name)
        if namespace is None or namespace.metadata.deletion_timestamp is not None:
            await self._withdraw(name)
            return Result()
        if rules.opted_out(namespace):
            return Result()
        for cluster in self._clusters.list():
            if cluster.metadata.deletion_timestamp is None:
                await self._sync(namespace, cluster.name)
        return Result()

    async def _sync(self, namespace: Namespace, cluster: str) -> None:
        """Create or update the namespace's Work for ``cluster``."""
        space = constants.execution_namespace(cluster)
        current = self._works.get(f"{space}/{rules.work_name(namespace.name)}")
        if current is not None and (rules.owned_by(current) != namespace.name
                                    or current.metadata.deletion_timestamp is not None):
            return  # another's Work of the same name (a policy's), or ours on its way out (it wakes us)
        if current is None:
            held = self._namespaces.get(space)
            if held is not None and held.metadata.deletion_timestamp is not None:
                return  # the cluster's execution namespace is being emptied
        desired = rules.desired_work(namespace, cluster, current)
        client = self._ctx.client
        if current is None:
            try:
                await client.create(desired)
            except errors.AlreadyExists:
                raise errors.Conflict(f"Work {space}/{desired.name} appeared meanwhile") from None
            _log.info("namespace propagated", namespace=namespace.name, cluster=cluster)
        elif rules.differs(current, desired):
            await client.update(desired)

    async def _withdraw(self, name: str) -> None:
        """Delete the Works of a namespace that is gone or going (they remove it from the members)."""
        work_name = rules.work_name(name)
        for cluster in self._clusters.list():
            space = constants.execution_namespace(cluster.name)
            work = self._works.get(f"{space}/{work_name}")
            if work is None or work.metadata.deletion_timestamp is not None or rules.owned_by(work) != name:
                continue
            try:
                await self._ctx.client.delete(Work, work_name, space)
            except errors.NotFound:
                continue
            _log.info("namespace deleted: removing it from the member", namespace=name, cluster=cluster.name)


def _changed(old: Namespace | None, new: Namespace | None) -> bool:
    """Created, deleted, or its labels, annotations, uid or deletion changed (not its status)."""
    if old is None or new is None:
        return True
    before, after = old.metadata, new.metadata
    return (before.labels != after.labels or before.annotations != after.annotations
            or before.uid != after.uid or before.deletion_timestamp != after.deletion_timestamp)


def _new(deps: Deps) -> NamespaceSync:
    return NamespaceSync(deps.ctx, deps.informers, deps.keys)


#: watches Namespaces (and Clusters created, and its Works deleted); writes one Work per
#: propagated namespace and member cluster (control planes, not Pull agents)
SPEC = ControllerSpec(CONTROLLER_NAME, reconciler=_new, kind=Namespace, runs=Runs.PLANE,
                      watches=(Watch(Namespace, predicate=_changed),))


__all__ = ["CONTROLLER_NAME", "SPEC", "NamespaceSync"]
