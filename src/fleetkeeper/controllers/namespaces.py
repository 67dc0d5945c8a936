"""Namespace cleanup: a deleted Namespace is emptied, then goes.

As in Kubernetes, a Namespace is created with the ``kubernetes`` finalizer in
``spec.finalizers``. Deleting it turns it ``Terminating`` — the store keeps it — and this
controller deletes every object of a namespaced kind the scheme knows in it: templates,
policies, bindings, ConfigMaps, Secrets, Events … — so through the detector and the
binding controller the copies in the member clusters go too. Objects already being
deleted are left to their finalizers; while one of them is still there the controller
looks again every :data:`RETRY_SECONDS`, and the Namespace's conditions say what is left
and which finalizers hold it, in Kubernetes' words (:mod:`namespace_rules`). Once the
namespace holds nothing that is still being deleted, the controller removes its
finalizer through ``/finalize`` (a plain update keeps a Namespace's ``spec.finalizers``, as
in Kubernetes) and the store removes the Namespace.
Since the Namespace is kept until then, a deletion made while no control plane ran is
finished by the next one that starts.

The execution namespaces ``karmada-es-*`` are no exception. The cluster controller deletes
their Works before it deletes the namespace of a cluster being removed; an execution
namespace deleted by hand while its cluster stays is emptied like any other — its Works
go, and with them their copies in the member — and once it is gone the cluster controller
creates it again and the binding controller dispatches the Works anew.

A Namespace stored without the finalizer (before namespaces carried one) goes at once;
what it leaves behind is deleted when the deletion is seen, unless the namespace exists
again by then.
"""

from __future__ import annotations

import contextlib

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.scheme import SCHEME, ResourceInfo
from fleetkeeper.controllers import namespace_rules as rules
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Watch

CONTROLLER_NAME = "namespace-cleanup"
#: how often a terminating namespace whose objects are still being deleted is looked at again
RETRY_SECONDS = 2.0

_log = structlog.get_logger("fleetkeeper.namespaces")


def _namespaced() -> list[ResourceInfo]:
    return sorted((i for i in SCHEME.infos() if i.namespaced), key=lambda i: (i.group, i.kind))


class NamespaceCleanup:
    """Empties deleted Namespaces and lets them go (see the module notes)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def reconcile(self, request: Request) -> Result:
        name = request.name
        client = self._ctx.client
        try:
            namespace: Namespace | None = await client.get(Namespace, name)
        except errors.NotFound:
            namespace = None
        if namespace is None:  # gone without a finalizer
            if not name.startswith(constants.EXECUTION_SPACE_PREFIX):  # the cluster controller's
                await self._empty(name)
            return Result()
        finalizers = namespace.spec.finalizers or []
        if namespace.metadata.deletion_timestamp is None or constants.NAMESPACE_FINALIZER not in finalizers:
            return Result()  # in use (perhaps created again), or held by someone else's finalizer
        content = await self._empty(name)
        namespace = await self._report(namespace, content)
        if content.total or content.failures:
            return Result(requeue_after=RETRY_SECONDS)
        kept = [f for f in finalizers if f != constants.NAMESPACE_FINALIZER]
        with contextlib.suppress(errors.NotFound):
            await client.finalize(namespace.model_copy(
                update={"spec": namespace.spec.model_copy(update={"finalizers": kept})}))
        _log.info("namespace emptied and finalized", namespace=name)
        return Result()

    async def _report(self, namespace: Namespace, content: rules.Content) -> Namespace:
        """Write the deletion conditions when they changed; the Namespace as it now is."""
        conditions = rules.deletion_conditions(namespace.status.conditions, content, self._ctx.clock.now())
        if conditions == namespace.status.conditions:
            return namespace
        reported = namespace.model_copy(
            update={"status": namespace.status.model_copy(update={"conditions": conditions})})
        try:
            return await self._ctx.client.update_status(reported)
        except errors.Conflict:
            return await self._ctx.client.get(Namespace, namespace.name)

    async def _empty(self, name: str) -> rules.Content:
        """Delete what is in namespace ``name``; what is still there (being deleted), and
        the deletes that failed."""
        client = self._ctx.client
        content = rules.Content()
        deleted = 0
        for info in _namespaced():
            resource = rules.resource_name(info.plural, info.group)
            for obj in (await client.list(info.model, name)).items:
                if obj.metadata.deletion_timestamp is None:
                    try:
                        await client.delete(info.model, obj.name, name)
                    except errors.NotFound:
                        continue
                    except errors.ApiError as exc:
                        content.failures.append(str(exc))
                    else:
                        deleted += 1
                        if not obj.metadata.finalizers:
                            continue  # gone
                content.left(resource, obj.metadata.finalizers)
        if deleted:
            _log.info("namespace deleted: its objects deleted too", namespace=name, objects=deleted)
        return content


def _deleting(old: Namespace | None, new: Namespace | None) -> bool:
    """Turned Terminating (or its finalizers changed while it is), or gone at once (no
    finalizer held it): a namespace this controller finalized has been emptied already, so
    its removal asks for nothing more. The cleanup's own condition writes wake nothing —
    a namespace still being emptied is looked at again every :data:`RETRY_SECONDS`."""
    if new is None:
        return old is not None and old.metadata.deletion_timestamp is None
    if new.metadata.deletion_timestamp is None:
        return False
    return (old is None or old.metadata.deletion_timestamp is None or old.spec != new.spec
            or old.metadata.finalizers != new.metadata.finalizers)


def _new(deps: Deps) -> NamespaceCleanup:
    return NamespaceCleanup(deps.ctx)


#: watches Namespaces; empties and finalizes the deleted ones (control planes, not Pull agents)
SPEC = ControllerSpec(CONTROLLER_NAME, reconciler=_new, kind=Namespace, runs=Runs.PLANE,
                      watches=(Watch(Namespace, predicate=_deleting),))


__all__ = ["CONTROLLER_NAME", "RETRY_SECONDS", "SPEC", "NamespaceCleanup"]
