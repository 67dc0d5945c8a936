"""Optimistic-concurrency writes, retried in place on Conflict.

Reconcilers read from informer caches, which may lag the store by a few events, and
write with the resourceVersion they read — so a write can meet ``Conflict``. Raising
would retry the whole reconcile through the controller's rate limiter, whose token
bucket (10/s) is shared by every key: under load, a burst of harmless conflicts would
then crawl. Instead :func:`write` re-reads the object from the client, recomputes the
desired object with the same pure ``change`` function, and tries again at once — the
desired object is always computed from the version being replaced, never blindly
overwritten. Only persistent conflicts (another writer winning ``ATTEMPTS`` times in a
row) surface as an error, and then the controller's backoff is the right answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

from fleetkeeper import errors
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.interface import Client

T = TypeVar("T", bound=Resource)

ATTEMPTS = 8

#: current object → the object to write, or None when it already is as desired
Change = Callable[[T], T | None]


async def write(client: Client, current: T, change: Change[T], *,
                subresource: Literal["main", "status"] = "main") -> T | None:
    """Write ``change(current)`` (main resource or ``/status``); re-read and retry on Conflict.

    Returns the stored object, or None when there was nothing to write. ``NotFound``
    (the object went away meanwhile) propagates.
    """
    model = type(current)
    for _ in range(ATTEMPTS):
        desired = change(current)
        if desired is None:
            return None
        try:
            if subresource == "status":
                return await client.update_status(desired)
            return await client.update(desired)
        except errors.Conflict:
            current = await client.get(model, current.name, current.metadata.namespace or "")
    raise errors.Conflict(f"{model.KIND} {current.key}: gave up after {ATTEMPTS} conflicting writes",
                          kind=model.KIND, name=current.name)


__all__ = ["ATTEMPTS", "Change", "write"]
