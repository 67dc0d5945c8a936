"""The keys and apply rules of a simulated cluster's objects.

A cluster stores every kind but Pod in a :class:`~fleetkeeper.store.local.LocalStore` (the
engine's ``store``), which owns what an API server owns: one cluster-wide revision stamped
as ``resourceVersion``, ``uid`` and ``creationTimestamp`` on create, ``generation`` moved on
whenever something outside metadata and status changes, an owner index and listeners.
Objects are wire dicts keyed by (group, kind, namespace, name) — versions of a kind share
storage, as in Kubernetes — and are never mutated in place.

What is here is the member's side of it: :class:`ObjectKey`, the store's key made from a
wire dict, and the rules an apply follows before it reaches the store (preconditions, and
the request the API server's server-side apply, :mod:`fleetkeeper.api.serverapply`, is given).
"""

from __future__ import annotations

from typing import TypeVar

from fleetkeeper import errors
from fleetkeeper.api import serverapply
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store import objects as store_objects
from fleetkeeper.store.backend import Key
from fleetkeeper.store.local import Listener, Obj, owner_uids
from fleetkeeper.store.local import Write as Change

_T = TypeVar("_T")


class ObjectKey(Key):
    """Where an object lives: the store's :class:`~fleetkeeper.store.backend.Key`, made from a wire dict."""

    __slots__ = ()

    @classmethod
    def of(cls, obj: Obj) -> ObjectKey:
        meta = obj["metadata"]
        return cls(group_of(obj["apiVersion"]), obj["kind"], meta.get("namespace") or "", meta["name"])


def group_of(api_version: str) -> str:
    """``apps/v1`` → ``apps``; ``v1`` → ``""``."""
    return api_version.rpartition("/")[0]


def clone(value: _T) -> _T:
    """A deep copy of a JSON-shaped value (every object a cluster hands out is one; see
    :func:`~fleetkeeper.api.jsoncopy.json_copy`)."""
    return json_copy(value)


def apply_request(manifest: Obj, *, manager: str, force: bool, now: str) -> serverapply.ApplyRequest:
    """How a member applies: as its manifest's version, status never (controllers own it)."""
    return serverapply.ApplyRequest(manager=manager, force=force, api_version=manifest["apiVersion"], now=now)


def body_changed(live: Obj | None, new: Obj) -> bool:
    """Whether something outside metadata and status differs (a new generation)."""
    return live is None or store_objects.spec_changed(new, live)


def check_preconditions(live: Obj | None, manifest: Obj) -> None:
    """An applied ``resourceVersion`` / ``uid`` must match the live object, as in Kubernetes."""
    meta = manifest["metadata"]
    for field in ("resourceVersion", "uid"):
        wanted = meta.get(field)
        if wanted and (live is None or live["metadata"].get(field) != wanted):
            raise errors.Conflict(
                f"Operation cannot be fulfilled on {manifest['kind']} {meta['name']!r}: "
                f"the object has been modified; precondition {field}={wanted} failed",
                kind=manifest["kind"], name=meta["name"],
            )


__all__ = [
    "Change", "GroupKind", "Listener", "Obj", "ObjectKey", "apply_request", "body_changed",
    "check_preconditions", "clone", "group_of", "owner_uids",
]
