"""Object storage of one simulated cluster (everything except pods, see ``pods.py``).

Objects are wire dicts keyed by (group, kind, namespace, name): versions of a kind share
storage, as in Kubernetes. The store owns what an API server owns: one cluster-wide
revision stamped as ``resourceVersion`` on every write, ``uid`` and
``creationTimestamp`` on create, ``generation`` (1 on create, +1 whenever something
outside metadata and status changes), and server-side apply (the API server's own,
:mod:`fleetkeeper.api.serverapply`).

Stored dicts are **never mutated in place**: every write stores a new dict (sharing
unchanged sub-trees). Readers therefore get consistent snapshots for free, and watch
events can hold the stored dict and copy it only when delivered.

Indexes kept so no call scans every object: by kind → namespace → name (list of one
namespace, namespace deletion) and by owner uid (garbage collection of dependents).
Listeners hear every :class:`Change`; the cluster uses that to publish watch
events and wake workload controllers. An apply's result passes the store's ``admit`` check
(what the API server refuses, see ``validate.py``) and gets its ``defaults`` (a Service's, see
``services.py``) before it is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from fleetkeeper import errors
from fleetkeeper.api import serverapply
from fleetkeeper.api.jsoncopy import json_copy

Obj = dict[str, Any]
_T = TypeVar("_T")


class GroupKind(NamedTuple):
    group: str
    kind: str


class ObjectKey(NamedTuple):
    group: str
    kind: str
    namespace: str
    name: str

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @classmethod
    def of(cls, obj: Obj) -> ObjectKey:
        meta = obj["metadata"]
        return cls(group_of(obj["apiVersion"]), obj["kind"], meta.get("namespace") or "", meta["name"])


@dataclass(frozen=True, slots=True)
class Change:
    """One write: ``old`` is None on create; on delete ``new`` is the last state (stamped
    with the deletion's revision) and ``deleted`` is set."""

    key: ObjectKey
    old: Obj | None
    new: Obj
    deleted: bool = False


Listener = Callable[[Change], None]


def group_of(api_version: str) -> str:
    """``apps/v1`` → ``apps``; ``v1`` → ``""``."""
    return api_version.rpartition("/")[0]


class Revisions:
    """The cluster-wide revision counter, plus the uid and timestamp sources writes use."""

    def __init__(self, uid_factory: Callable[[], str], now: Callable[[], str]) -> None:
        self.current = 0
        self.new_uid = uid_factory
        self.now = now

    def next(self) -> str:
        self.current += 1
        return str(self.current)


class ObjectStore:
    """Storage with Kubernetes write semantics for every kind but Pod."""

    def __init__(self, revisions: Revisions, *, admit: Callable[[Obj], None] | None = None) -> None:
        self.revisions = revisions
        #: raises (``errors.Invalid``) when an applied object may not be stored
        self.admit = admit
        #: an admitted object (and its stored version) as the API server stores it: its defaults
        self.defaults: Callable[[Obj | None, Obj], Obj] | None = None
        self._by_kind: dict[GroupKind, dict[str, dict[str, Obj]]] = {}
        self._dependents: dict[str, set[ObjectKey]] = {}
        self.listeners: list[Listener] = []

    # -- reads ---------------------------------------------------------------------------
    def get(self, key: ObjectKey) -> Obj | None:
        return self._by_kind.get(key.group_kind, {}).get(key.namespace, {}).get(key.name)

    def items(self, gk: GroupKind, namespace: str | None = None) -> Iterator[Obj]:
        """Objects of a kind in (namespace, name) order."""
        spaces = self._by_kind.get(gk, {})
        names = [namespace] if namespace is not None else sorted(spaces)
        for ns in names:
            objects = spaces.get(ns, {})
            for name in sorted(objects):
                yield objects[name]

    def namespace_keys(self, namespace: str) -> list[ObjectKey]:
        """Every stored object of one namespace (for namespace deletion)."""
        return [ObjectKey(gk.group, gk.kind, namespace, name)
                for gk in sorted(self._by_kind) for name in sorted(self._by_kind[gk].get(namespace, {}))]

    def dependents(self, uid: str) -> list[ObjectKey]:
        """Objects whose ownerReferences name ``uid``."""
        return sorted(self._dependents.get(uid, ()))

    # -- writes --------------------------------------------------------------------------
    def apply(self, manifest: Obj, *, manager: str, force: bool) -> Obj:
        """Server-side apply (``manifest`` already has its namespace settled; the stored object
        may share the manifest's sub-trees, so the caller hands over a copy of its own)."""
        key = ObjectKey.of(manifest)
        live = self.get(key)
        check_preconditions(live, manifest)
        result = serverapply.apply(live, manifest, apply_request(manifest, manager=manager, force=force,
                                                                 now=self.revisions.now()))
        if serverapply.unchanged(live, result):
            assert live is not None
            return live
        if self.admit is not None:
            self.admit(result)
        stored = result if self.defaults is None else self.defaults(live, result)
        return self.write(key, live, stored, body_changed=body_changed(live, result))

    def create(self, obj: Obj) -> Obj:
        """Store a new object made by a controller (``AlreadyExists`` when taken)."""
        key = ObjectKey.of(obj)
        if self.get(key) is not None:
            raise errors.AlreadyExists(f'{key.kind} "{key.name}" already exists', kind=key.kind,
                                       name=key.name)
        return self.write(key, None, obj, body_changed=True)

    def replace(self, key: ObjectKey, **fields: Any) -> Obj:
        """Replace top-level fields of a stored object (a controller's update); no-op when equal."""
        live = self.get(key)
        if live is None:
            raise errors.NotFound(f'{key.kind} "{key.name}" not found', kind=key.kind, name=key.name)
        if all(live.get(name) == value for name, value in fields.items()):
            return live
        new = {**live, **fields}
        body_changed = any(name not in ("metadata", "status") for name in fields)
        return self.write(key, live, new, body_changed=body_changed)

    def write(self, key: ObjectKey, live: Obj | None, new: Obj, *, body_changed: bool) -> Obj:
        """Stamp server-owned metadata on ``new`` (a fresh dict), store it, tell listeners."""
        meta = dict(new["metadata"])
        if live is None:
            meta["uid"] = meta.get("uid") or self.revisions.new_uid()
            meta["creationTimestamp"] = self.revisions.now()
            meta["generation"] = 1
        else:
            old_meta = live["metadata"]
            for field in ("uid", "creationTimestamp", "generation"):
                meta[field] = old_meta[field]
            if body_changed:
                meta["generation"] = old_meta["generation"] + 1
        meta["resourceVersion"] = self.revisions.next()
        new = {**new, "metadata": meta}
        self._by_kind.setdefault(key.group_kind, {}).setdefault(key.namespace, {})[key.name] = new
        self._index_owners(key, live, new)
        for listener in self.listeners:
            listener(Change(key, live, new))
        return new

    def remove(self, key: ObjectKey) -> Obj | None:
        """Remove one object (no cascade; the cluster's garbage collector does that)."""
        spaces = self._by_kind.get(key.group_kind, {})
        live = spaces.get(key.namespace, {}).pop(key.name, None)
        if live is None:
            return None
        if not spaces[key.namespace]:
            del spaces[key.namespace]
        self._index_owners(key, live, None)
        gone = {**live, "metadata": {**live["metadata"], "resourceVersion": self.revisions.next()}}
        for listener in self.listeners:
            listener(Change(key, live, gone, deleted=True))
        return gone

    def _index_owners(self, key: ObjectKey, old: Obj | None, new: Obj | None) -> None:
        for ref in owner_uids(old):
            self._dependents.get(ref, set()).discard(key)
            if not self._dependents.get(ref, True):
                del self._dependents[ref]
        for ref in owner_uids(new):
            self._dependents.setdefault(ref, set()).add(key)


def clone(value: _T) -> _T:
    """A deep copy of a JSON-shaped value (every object a cluster hands out is one; see
    :func:`~fleetkeeper.api.jsoncopy.json_copy`)."""
    return json_copy(value)


def owner_uids(obj: Obj | None) -> list[str]:
    if obj is None:
        return []
    return [str(ref["uid"]) for ref in obj["metadata"].get("ownerReferences") or [] if ref.get("uid")]


def apply_request(manifest: Obj, *, manager: str, force: bool, now: str) -> serverapply.ApplyRequest:
    """How a member applies: as its manifest's version, status never (controllers own it)."""
    return serverapply.ApplyRequest(manager=manager, force=force, api_version=manifest["apiVersion"], now=now)


def body_changed(live: Obj | None, new: Obj) -> bool:
    """Whether something outside metadata and status differs (a new generation)."""
    if live is None:
        return True
    return any(new.get(key) != live.get(key) for key in set(new) | set(live) if key not in _NOT_BODY)


_NOT_BODY = frozenset({"apiVersion", "kind", "metadata", "status"})


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
    "Change", "GroupKind", "Listener", "Obj", "ObjectKey", "ObjectStore", "Revisions", "apply_request",
    "body_changed", "check_preconditions", "clone", "group_of", "owner_uids",
]
