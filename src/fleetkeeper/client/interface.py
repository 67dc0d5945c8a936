"""Client protocols: how controllers, the scheduler, agents and the CLI talk to the
control plane. Two implementations behave the same: ``local`` (in-process, straight
onto the Store, through the same admission chain as the API server) and ``rest``
(HTTPS against an API server).

Everything is typed over the api models: ``get(work.ResourceBinding, name, ns)``
returns a ``ResourceBinding``. Kinds we do not model are reached through
``SCHEME.model_for("apps/v1", "Deployment")`` (an ``Unstructured`` subclass).
Namespaces: ``""`` for cluster-scoped objects; ``None`` in list/watch = all namespaces.

:func:`batch` groups the writes a caller makes in a block into one store transaction
when the client can (the local client's ``batch()``); over REST it is a plain block, so
code that batches runs unchanged against either client.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from fleetkeeper.api.meta import Resource

T = TypeVar("T", bound=Resource)
PatchType = Literal["merge", "json", "strategic", "apply"]
WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]


@dataclass(frozen=True, slots=True)
class ObjectList(Generic[T]):
    items: list[T]
    resource_version: str


@dataclass(frozen=True, slots=True)
class WatchEvent(Generic[T]):
    type: WatchEventType
    object: T


class Reader(Protocol):
    async def get(self, model: type[T], name: str, namespace: str = "") -> T: ...

    async def list(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ObjectList[T]: ...


class Writer(Protocol):
    async def create(self, obj: T) -> T: ...

    async def update(self, obj: T) -> T: ...

    async def patch(
        self,
        model: type[T],
        name: str,
        namespace: str = "",
        *,
        patch: dict[str, Any] | list[Any],
        patch_type: PatchType = "merge",
        subresource: str | None = None,
    ) -> T: ...

    async def delete(
        self, model: type[T], name: str, namespace: str = "", *, resource_version: str | None = None
    ) -> None: ...


class StatusWriter(Protocol):
    async def update_status(self, obj: T) -> T: ...

    async def finalize(self, obj: T) -> T:
        """Write a Namespace's ``spec.finalizers`` (``/finalize``; a plain update keeps them)."""
        ...


class Watcher(Protocol):
    def watch(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> AsyncIterator[WatchEvent[T]]:
        """Events after ``resource_version`` (raises ``errors.Gone`` when compacted)."""
        ...


class Client(Reader, Writer, StatusWriter, Watcher, Protocol):
    """Everything a controller needs."""


def batch(client: object) -> AbstractAsyncContextManager[None]:
    """``client.batch()`` when the client has one, else a block that groups nothing.

    Inside, the writes of the calling task are committed together when the block ends (and
    all discarded if it raises); other tasks keep reading committed state and wait to write.
    Keep such blocks to writes: they hold the store's write lock.
    """
    grouped = getattr(client, "batch", None)
    if grouped is None:
        return contextlib.nullcontext()
    block: AbstractAsyncContextManager[None] = grouped()
    return block
