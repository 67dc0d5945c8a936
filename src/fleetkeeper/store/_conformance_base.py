"""Fixtures and helpers shared by the store conformance suite (see :mod:`.testing`)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

import pytest

from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.store import DEFAULT_HISTORY, Store, open_store
from fleetkeeper.store.interface import Event, Watch

DEPLOY = GroupKind("apps", "Deployment")
CONFIGMAP = GroupKind("", "ConfigMap")
CLUSTER = GroupKind("cluster.karmada.io", "Cluster")

#: a hang guard for reads that must complete; never an assertion about speed
HANG_GUARD = 10.0


class Opener(Protocol):
    def __call__(
        self, *, history: int = ..., watch_queue: int | None = ...,
        uid_factory: Callable[[], str] | None = ..., clock: Clock | None = ...,
    ) -> Store: ...


def counting_uids(prefix: str = "uid") -> Callable[[], str]:
    """A deterministic uid factory: ``uid-1``, ``uid-2`` …"""
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter)}"


def deployment(
    name: str,
    namespace: str = "default",
    *,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    finalizers: list[str] | None = None,
) -> dict[str, Any]:
    """A Deployment-shaped wire dict."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    if finalizers is not None:
        meta["finalizers"] = finalizers
    obj: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                           "spec": spec if spec is not None else {"replicas": 1}}
    if status is not None:
        obj["status"] = status
    return obj


def configmap(name: str, namespace: str = "default", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": dict(data)}


def cluster(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name, "labels": dict(labels)}, "spec": {"syncMode": "Push"}}


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def take(watch: Watch, n: int) -> list[Event]:
    """The next ``n`` events of ``watch`` (fails rather than hangs if they never come)."""
    events: list[Event] = []
    iterator = aiter(watch)
    async with asyncio.timeout(HANG_GUARD):
        while len(events) < n:
            events.append(await anext(iterator))
    return events


def summary(events: list[Event]) -> list[tuple[str, str, int]]:
    """(type, name, revision) of each event, for compact assertions."""
    return [(e.type, e.object["metadata"]["name"], e.revision) for e in events]


class StoreFixtures:
    """Fixtures every conformance mixin uses; a backend's test class sets the hooks."""

    #: whether the backend keeps data across reopening the same URL (enables durability tests)
    durable: ClassVar[bool] = False

    def url(self, tmp_path: Path) -> str:
        """The store URL to test; called again with the same path to reopen."""
        raise NotImplementedError

    @pytest.fixture
    async def opener(self, tmp_path: Path) -> AsyncIterator[Opener]:
        opened: list[Store] = []

        def open_(
            *, history: int = DEFAULT_HISTORY, watch_queue: int | None = None,
            uid_factory: Callable[[], str] | None = None, clock: Clock | None = None,
        ) -> Store:
            store = open_store(self.url(tmp_path), clock=clock or SystemClock(), history=history,
                               watch_queue=watch_queue, uid_factory=uid_factory)
            opened.append(store)
            return store

        yield open_
        for store in opened:
            await store.close()

    @pytest.fixture
    async def store(self, opener: Opener) -> Store:
        return opener(uid_factory=counting_uids())


__all__ = [
    "CLUSTER", "CONFIGMAP", "DEPLOY", "HANG_GUARD", "Opener", "StoreFixtures", "cluster", "configmap",
    "counting_uids", "deployment", "rv", "summary", "take",
]
