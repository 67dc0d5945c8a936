"""What Karmada-managed objects look like in the member clusters: list+watch caches.

The work-status controller must notice a member object's status changing (a Deployment
going from 0 to 3 ready replicas) without polling every object, and the execution
controller must notice a managed object deleted behind its back. This module keeps, per
(cluster, apiVersion, kind), a cache of the objects labelled ``karmada.io/managed=true``
— like Karmada's per-member informers — and calls every subscriber for every object
that changes, so the owning Work can be enqueued.

One :class:`MemberObjects` serves the controllers of a plane (the wiring layer builds it
and hands it to them in their :class:`~fleetkeeper.runtime.context.Context`, like Karmada's
one multi-cluster informer manager): one watch per (cluster, kind), not one per
controller. Each cache is one task of that runnable, started the first time a
caller needs it (:meth:`MemberObjects.ensure`) and stopped when its cluster goes away
(:meth:`forget_cluster`). Its loop is a reflector: **list** (bounded by the probe
timeout, so a black-holed member is noticed), replace the cache, then **watch** until the
stream fails. A failure marks the cache *unreachable* and reports every cached object,
so their Works can say ``health: Unknown``; the loop retries with backoff (0.8 s
doubling to 30 s) and the next successful list reports every object again, so health
recovers as soon as the member answers. Nothing is lost across an outage: the list
after it is the truth.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from fleetkeeper.api import constants
from fleetkeeper.clock import Clock
from fleetkeeper.members.interface import MemberEvent, MemberPool, bounded
from fleetkeeper.runtime.backoff import Backoff

Obj = dict[str, Any]
#: (cluster, apiVersion, kind)
WatchKey = tuple[str, str, str]
#: (cluster, the object, whether it was deleted) — called for every change a cache sees
Subscriber = Callable[[str, "Obj", bool], None]
MANAGED_SELECTOR = f"{constants.MANAGED_BY_KARMADA_LABEL}={constants.MANAGED_BY_KARMADA_LABEL_VALUE}"
_log = structlog.get_logger("fleetkeeper.member-watch")


@dataclass
class KindCache:
    """The managed objects of one kind in one member cluster."""

    key: WatchKey
    endpoint: str | None
    objects: dict[tuple[str, str], Obj] = field(default_factory=dict)
    #: the first list has completed (the cache can answer "absent")
    synced: bool = False
    #: the last list/watch is working (False while the member is unreachable)
    reachable: bool = True
    task: asyncio.Task[None] | None = None

    def get(self, namespace: str, name: str) -> Obj | None:
        return self.objects.get((namespace, name))


def _slim(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    if "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


def _id(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class MemberObjects:
    """Caches of managed member objects, one list+watch task per (cluster, kind)."""

    #: the caches run while the controllers that read them do
    needs_leader_election = True

    def __init__(self, members: MemberPool, *, clock: Clock, timeout: float) -> None:
        self._members = members
        self._clock = clock
        self._timeout = timeout
        self._subscribers: list[Subscriber] = []
        self._caches: dict[WatchKey, KindCache] = {}
        self._group: asyncio.TaskGroup | None = None
        self.name = "member-object-watches"

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call ``subscriber`` for every change of every cache (must be quick, never raise)."""
        self._subscribers.append(subscriber)

    def _notify(self, cluster: str, obj: Obj, deleted: bool) -> None:
        for subscriber in self._subscribers:
            try:
                subscriber(cluster, obj, deleted)
            except Exception as exc:
                _log.error("member change subscriber failed", error=repr(exc), exc_info=exc)

    def ensure(self, cluster: str, endpoint: str | None, api_version: str, kind: str) -> KindCache:
        """The cache of a kind in a cluster, started on first use."""
        key = (cluster, api_version, kind)
        cache = self._caches.get(key)
        if cache is None:
            cache = self._caches[key] = KindCache(key, endpoint)
            self._start(cache)
        return cache

    def forget_cluster(self, cluster: str) -> None:
        """Stop watching a cluster that no longer exists."""
        for key in [k for k in self._caches if k[0] == cluster]:
            cache = self._caches.pop(key)
            if cache.task is not None:
                cache.task.cancel()

    async def run(self) -> None:
        """Run the watches, present and future, until cancelled."""
        try:
            async with asyncio.TaskGroup() as group:
                self._group = group
                for cache in self._caches.values():
                    self._start(cache)
                await asyncio.Event().wait()
        finally:
            self._group = None
            for cache in self._caches.values():
                cache.task = None

    def _start(self, cache: KindCache) -> None:
        if self._group is not None and cache.task is None:
            name = f"member-watch-{'/'.join(cache.key)}"
            cache.task = self._group.create_task(self._loop(cache), name=name)

    # ---------------------------------------------------------------- the loop
    async def _loop(self, cache: KindCache) -> None:
        backoff = Backoff(clock=self._clock)
        cluster, api_version, kind = cache.key
        while True:
            try:
                member = self._members.member(cluster, cache.endpoint)
                items = await bounded(
                    member.list(api_version, kind, label_selector=MANAGED_SELECTOR), self._timeout, cluster)
                self._replace(cache, items)
                stream = member.watch(api_version, kind, label_selector=MANAGED_SELECTOR)
                try:
                    async for event in stream:
                        self._apply(cache, event)
                finally:
                    aclose = getattr(stream, "aclose", None)
                    if aclose is not None:
                        await aclose()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # unreachable, timeout, or anything a member says: retry
                _log.info("member watch lost", cluster=cluster, kind=kind, error=repr(exc))
                self._unreachable(cache)
            await self._clock.sleep(backoff.next())

    def _replace(self, cache: KindCache, items: list[Obj]) -> None:
        recovered = not cache.synced or not cache.reachable
        cache.synced, cache.reachable = True, True
        fresh = {_id(obj): _slim(obj) for obj in items}
        old = cache.objects
        cache.objects = fresh
        for ident, obj in fresh.items():
            before = old.get(ident)
            if recovered or before is None or _version(before) != _version(obj):
                self._notify(cache.key[0], obj, False)
        for ident in old.keys() - fresh.keys():
            self._notify(cache.key[0], old[ident], True)

    def _apply(self, cache: KindCache, event: MemberEvent) -> None:
        obj = _slim(event.object)
        deleted = event.type == "DELETED"
        if deleted:
            cache.objects.pop(_id(obj), None)
        else:
            cache.objects[_id(obj)] = obj
        self._notify(cache.key[0], obj, deleted)

    def _unreachable(self, cache: KindCache) -> None:
        if not cache.reachable:
            return
        cache.reachable = False
        for obj in list(cache.objects.values()):
            self._notify(cache.key[0], obj, False)


def _version(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("resourceVersion")


def work_of_member_object(obj: Obj) -> tuple[str, str] | None:
    """(namespace, name) of the Work a managed member object comes from, from its annotations."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    namespace = annotations.get(constants.WORK_NAMESPACE_ANNOTATION)
    name = annotations.get(constants.WORK_NAME_ANNOTATION)
    return (namespace, name) if namespace and name else None


__all__ = [
    "MANAGED_SELECTOR", "KindCache", "MemberObjects", "Subscriber", "WatchKey", "work_of_member_object",
]
