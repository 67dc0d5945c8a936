"""Namespace cleanup: deleting a Namespace deletes what was in it.

In Kubernetes a namespace is emptied before it goes, so ``kubectl delete namespace prod``
removes the workloads in it. Here the Namespace object goes at once (no finalizer holds
it) and this controller empties what it leaves behind: when a Namespace is deleted,
every object of a namespaced kind the scheme knows is deleted from that namespace —
templates, policies, bindings, ConfigMaps, Secrets, Events … — and through the detector
and the binding controller the copies in the member clusters go with them. Objects
already being deleted are left to their finalizers.

Not touched: a namespace that exists again by the time the cleanup runs (deleted and
re-created: its new objects stay), and the execution namespaces ``karmada-es-*``, which
the cluster controller owns. A deletion that happened while no control plane ran is not
seen afterwards: nothing holds the Namespace until its contents are gone.
"""

from __future__ import annotations

import contextlib

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.reconcile import Request, Result

CONTROLLER_NAME = "namespace-cleanup"

_log = structlog.get_logger("fleetkeeper.namespaces")


class NamespaceCleanup:
    """Deletes what a deleted Namespace left behind (see the module notes)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def reconcile(self, request: Request) -> Result:
        name = request.name
        if name.startswith(constants.EXECUTION_SPACE_PREFIX):
            return Result()
        with contextlib.suppress(errors.NotFound):
            await self._ctx.client.get(Namespace, name)
            return Result()  # re-created meanwhile (the store, not a cache that may lag, says so)
        deleted = 0
        for info in sorted(SCHEME.infos(), key=lambda i: (i.group, i.kind)):
            if not info.namespaced:
                continue
            for obj in (await self._ctx.client.list(info.model, name)).items:
                if obj.metadata.deletion_timestamp is not None:
                    continue
                with contextlib.suppress(errors.NotFound):
                    await self._ctx.client.delete(info.model, obj.name, name)
                    deleted += 1
        if deleted:
            _log.info("namespace deleted: its objects deleted too", namespace=name, objects=deleted)
        return Result()


def _deleted(old: Namespace | None, new: Namespace | None) -> bool:
    return new is None and old is not None


def setup(mgr: Manager, ctx: Context) -> None:
    """Watches Namespaces; empties the ones deleted (control planes, not Pull agents)."""
    if ctx.scope.is_agent:
        return
    namespaces = mgr.informers.informer_for(Namespace)
    controller = mgr.controller(CONTROLLER_NAME, NamespaceCleanup(ctx))
    controller.watch(namespaces, predicate=_deleted)


__all__ = ["CONTROLLER_NAME", "NamespaceCleanup", "setup"]
