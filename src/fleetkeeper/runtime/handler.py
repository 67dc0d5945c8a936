"""Event handlers: how a change seen by an informer becomes keys in a controller's queue.

An informer calls its handlers synchronously with ``on_add(obj)``,
``on_update(old, new)`` and ``on_delete(obj)``. Handlers must be cheap and must not
block — the usual one only computes keys and adds them to a workqueue, which is a
synchronous, deduplicating step. The reconciler later reads the *current* state, so
the handler's only job is to decide *which* keys are affected.

:class:`EnqueueMapped` is that handler. Its map function turns an object into the
requests it affects: by default the object's own key (``Request.for_object``); for a
secondary kind it may be its owner (a Work → its ResourceBinding) or a fan-out (a
Cluster → every binding placed on it). On update both the old and the new object are
mapped, so a change that moves an object from one owner to another wakes both. An
optional predicate ``(old, new) -> bool`` filters events (``old`` is ``None`` for an
add, ``new`` is ``None`` for a delete), e.g. :func:`generation_changed` to ignore
status-only writes.

:class:`FuncHandler` adapts one ``(old, new)`` callable to the three methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from fleetkeeper.api.meta import Resource
from fleetkeeper.runtime.reconcile import Request

T = TypeVar("T", bound=Resource)
T_contra = TypeVar("T_contra", bound=Resource, contravariant=True)

#: object → the requests it affects
MapFunc = Callable[[T], Iterable[Request]]
#: (old, new) → whether to enqueue; ``old`` is None on add, ``new`` is None on delete
Predicate = Callable[[T | None, T | None], bool]


class EventHandler(Protocol[T_contra]):
    """Receives an informer's changes; must be quick and must not raise."""

    def on_add(self, obj: T_contra) -> None: ...

    def on_update(self, old: T_contra, new: T_contra) -> None: ...

    def on_delete(self, obj: T_contra) -> None: ...


class Enqueuer(Protocol):
    """Something that accepts keys (a controller)."""

    def enqueue(self, request: Request) -> None: ...


class Delayed:
    """An :class:`Enqueuer` that asks for each key ``seconds`` from now (a pending key keeps its
    earliest deadline): events that come in bursts are then looked at once, after the burst."""

    def __init__(self, target: DelayedTarget, seconds: float) -> None:
        self._target = target
        self._seconds = seconds

    def enqueue(self, request: Request) -> None:
        self._target.enqueue_after(request, self._seconds)


class DelayedTarget(Protocol):
    """Something that accepts keys for later (a controller)."""

    def enqueue_after(self, request: Request, seconds: float) -> None: ...


def _own_key(obj: Resource) -> Iterable[Request]:
    return (Request.for_object(obj),)


class EnqueueMapped(Generic[T]):
    """Enqueue the requests ``map_to`` finds for every (accepted) event."""

    def __init__(
        self, target: Enqueuer, map_to: MapFunc[T] | None = None, *, predicate: Predicate[T] | None = None
    ) -> None:
        self._target = target
        self._map: MapFunc[T] = map_to if map_to is not None else _own_key
        self._predicate = predicate

    def on_add(self, obj: T) -> None:
        if self._predicate is None or self._predicate(None, obj):
            self._enqueue(obj)

    def on_update(self, old: T, new: T) -> None:
        if self._predicate is None or self._predicate(old, new):
            if self._map is _own_key:  # an update keeps the name: one key
                self._enqueue(new)
            else:
                self._enqueue(old, new)

    def on_delete(self, obj: T) -> None:
        if self._predicate is None or self._predicate(obj, None):
            self._enqueue(obj)

    def _enqueue(self, *objs: T) -> None:
        for obj in objs:
            for request in self._map(obj):
                self._target.enqueue(request)


class FuncHandler(Generic[T]):
    """One callable ``fn(old, new)`` for all three events (old None on add, new None on delete)."""

    def __init__(self, fn: Callable[[T | None, T | None], None]) -> None:
        self._fn = fn

    def on_add(self, obj: T) -> None:
        self._fn(None, obj)

    def on_update(self, old: T, new: T) -> None:
        self._fn(old, new)

    def on_delete(self, obj: T) -> None:
        self._fn(obj, None)


def deleted(old: Resource | None, new: Resource | None) -> bool:
    """Predicate: deletes only."""
    return new is None


def generation_changed(old: Resource | None, new: Resource | None) -> bool:
    """Predicate: adds, deletes, and updates that changed ``metadata.generation`` (spec)."""
    if old is None or new is None:
        return True
    return old.metadata.generation != new.metadata.generation


__all__ = [
    "Delayed", "DelayedTarget", "EnqueueMapped", "Enqueuer", "EventHandler", "FuncHandler", "MapFunc",
    "Predicate", "deleted", "generation_changed",
]
