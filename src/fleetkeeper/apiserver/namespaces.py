"""Namespace lifecycle, kept as kube-apiserver keeps it.

* **Bootstrap** — before it answers its first request, the server makes sure the
  namespaces a Karmada control plane starts with exist (:data:`BOOTSTRAP`: ``default``,
  ``kube-system``, ``kube-public``, ``kube-node-lease``, ``karmada-system``,
  ``karmada-cluster`` — where Pull agents renew their Leases and joined clusters keep
  their credentials). They are created ``Active`` when missing; one that exists is left
  alone.
* **Creation needs a namespace** (Kubernetes' ``NamespaceLifecycle`` admission): a
  namespaced object is created only in a namespace that exists — otherwise ``404``
  ``namespaces "prod" not found`` — and not in one being deleted: ``403`` ``unable to
  create new content in namespace prod because it is being terminated``. Updates,
  patches and deletes of objects already there are not judged.
* **Immortal namespaces** — ``default``, ``kube-system`` and ``kube-public``
  (:data:`IMMORTAL`) cannot be deleted: ``403`` ``this namespace may not be deleted``.

Only requests through the API server are judged. The control plane's own controllers
write through the local client, which does not look: the cluster controller creates an
execution namespace before the Works in it, and a simulation applies its story's objects
as the story gives them.
"""

from __future__ import annotations

import asyncio
import contextlib

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.admit import admit_object
from fleetkeeper.apiserver.request import Target
from fleetkeeper.apiserver.state import ServerState

NAMESPACE = GroupKind("", "Namespace")
#: namespaces the server creates when missing before it answers (kube-apiserver's bootstrap, and Karmada's)
BOOTSTRAP = constants.SYSTEM_NAMESPACES
#: namespaces that cannot be deleted (as in Kubernetes)
IMMORTAL = frozenset({constants.DEFAULT_NAMESPACE, "kube-system", "kube-public"})


class Bootstrap:
    """Creates the :data:`BOOTSTRAP` namespaces once, before the first request is answered."""

    def __init__(self, state: ServerState) -> None:
        self._state = state
        self._done = False
        self._lock = asyncio.Lock()

    async def ensure(self) -> None:
        if self._done:
            return
        async with self._lock:
            if self._done:
                return
            await self._create_missing()
            self._done = True

    async def _create_missing(self) -> None:
        state = self._state
        info = state.scheme.by_group_kind(NAMESPACE)
        assert info is not None, "the scheme has no Namespace"
        for name in state.config.bootstrap_namespaces:
            wire = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            admitted, _ = admit_object(info, wire, None, operation="CREATE", now=state.clock.now(), user=None)
            with contextlib.suppress(errors.AlreadyExists):  # there already, left alone
                await state.store.create(admitted)


async def check_create(state: ServerState, target: Target) -> None:
    """Refuse to create a namespaced object in a namespace that is missing or being deleted."""
    namespace = target.namespace
    if not target.info.namespaced or not namespace:
        return
    try:
        found = await state.store.get(NAMESPACE, "", namespace)
    except errors.NotFound:
        raise errors.NotFound(f'namespaces "{namespace}" not found', kind="namespaces",
                              name=namespace) from None
    if (found.get("metadata") or {}).get("deletionTimestamp"):
        raise errors.Forbidden(f"unable to create new content in namespace {namespace} because it is being "
                               "terminated", kind=target.info.plural, name=target.name or "",
                               group=target.info.group)


def check_delete(target: Target) -> None:
    """Refuse to delete an immortal namespace."""
    if target.info.group_kind == NAMESPACE and target.name in IMMORTAL:
        raise errors.Forbidden(f'namespaces "{target.name}" is forbidden: this namespace may not be deleted',
                               kind="namespaces", name=target.name)


__all__ = ["BOOTSTRAP", "IMMORTAL", "Bootstrap", "check_create", "check_delete"]
