"""The Store contract (docs/architecture.md, Contracts), shared by every backend.

Objects are wire dicts (``apiVersion``, ``kind``, ``metadata`` …). The store does not
validate kinds — admission does that above it — but it owns the storage semantics:

* one global, strictly increasing revision; every write stamps
  ``metadata.resourceVersion = str(revision)``;
* ``create`` fills ``uid``, ``creationTimestamp`` (from the injected Clock),
  ``generation=1`` and fails with ``AlreadyExists``; ``generateName`` is honoured;
* ``update`` with a non-empty ``metadata.resourceVersion`` is a precondition
  (``Conflict`` when stale); ``generation`` increments only when something outside
  ``metadata`` and ``status`` changed; a main-resource update keeps the stored
  ``status``; ``update(..., subresource="status")`` changes only ``status``;
  ``uid``/``creationTimestamp``/``deletionTimestamp`` cannot be changed by updates;
* ``delete`` of an object with finalizers sets ``deletionTimestamp`` (once) and keeps
  it; an update that empties the finalizers of a deleting object removes it; a write
  may remove finalizers from a deleting object, never add them (``Invalid``). A
  Namespace is also held by its ``spec.finalizers``, as in Kubernetes, and turns
  ``status.phase: Terminating`` while it is held; those change only through
  ``update(..., subresource="finalize")`` (a main-resource update keeps them);
* ``list`` returns the items (sorted by namespace, name) and the revision they were
  read at; label selectors and field selectors as Kubernetes (string form);
* ``watch(since=rev)`` yields every later event of the matching objects in revision
  order, with no gaps or duplicates; ``since`` older than the retained history raises
  ``errors.Gone`` (clients re-list). ``since=None`` starts at the current revision.
  A watch with a selector turns "modified so it no longer matches" into ``DELETED`` and
  "modified so it now matches" into ``ADDED``, as Kubernetes does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from fleetkeeper.api.scheme import GroupKind

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True, slots=True)
class Event:
    """One change, as a watcher sees it. ``object`` is the state after the change
    (for DELETED: the last state, with the deletion's revision as resourceVersion)."""

    type: EventType
    object: dict[str, Any]
    revision: int


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[dict[str, Any]]
    revision: int
    #: opaque token for the next page when ``limit`` cut the list, else None
    continue_token: str | None = None


class Watch(Protocol):
    """An open watch: iterate for events; ``close()`` ends the iteration."""

    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def close(self) -> None: ...


class StoreProtocol(Protocol):
    """What controllers' clients, the API server and tests use (via ``Store``).

    Reads and writes return the object as a private dict the caller may change; with
    ``shared=True`` they return the store's own parsed dict instead (no copy), which the
    caller only reads — for in-process callers that decode it at once. ``with_status``:
    a main-resource update that stores the given status too, as one change (in-process
    callers writing a decision and its condition at once; the API has no such write).
    """

    @property
    def revision(self) -> int: ...

    async def create(
        self, obj: dict[str, Any], *, shared: bool = False, dry_run: bool = False
    ) -> dict[str, Any]: ...

    async def get(
        self, gk: GroupKind, namespace: str, name: str, *, shared: bool = False
    ) -> dict[str, Any]: ...

    async def list(
        self,
        gk: GroupKind,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListResult: ...

    async def update(
        self, obj: dict[str, Any], *, subresource: str | None = None, shared: bool = False,
        with_status: bool = False, dry_run: bool = False,
    ) -> dict[str, Any]: ...

    async def delete(
        self,
        gk: GroupKind,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
    ) -> dict[str, Any]: ...

    def watch(
        self,
        gk: GroupKind | None,
        namespace: str | None = None,
        *,
        since: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch: ...

    def batch(self) -> AbstractAsyncContextManager[None]:
        """Group the writes made inside into one backend transaction (when supported)."""
        ...

    async def close(self) -> None: ...
