"""Shared informers: one list+watch per (kind, namespace, selector), for every controller.

Ten controllers that look at ResourceBindings need one watch on the store and one
cached copy, not ten. :class:`InformerFactory` hands out informers keyed by
(model, namespace, label selector, field selector): asking twice returns the same
informer, so its cache and indices are shared and each controller just adds its own
handler (which replays what is already cached).

The factory is one runnable: ``run()`` starts every informer it has made under one
``TaskGroup`` and keeps the group open, so an informer first asked for after the
factory started is started at once in the same group. ``wait_for_sync()`` returns when
every informer made so far has loaded its first list — the manager waits for it
before starting controllers, so no controller reconciles against an empty cache.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, cast

from structlog.typing import FilteringBoundLogger

from fleetkeeper.api.meta import Resource
from fleetkeeper.clock import Clock
from fleetkeeper.runtime.informer import Informer, ListWatcher

T = TypeVar("T", bound=Resource)

_Key = tuple[type[Resource], str | None, str | None, str | None]


class InformerFactory:
    """Makes and runs shared informers over one client."""

    def __init__(
        self, client: ListWatcher, *, clock: Clock, logger: FilteringBoundLogger | None = None
    ) -> None:
        self._client = client
        self._clock = clock
        self._logger = logger
        self._informers: dict[_Key, Informer[Any]] = {}
        self._group: asyncio.TaskGroup | None = None

    def informer_for(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Informer[T]:
        """The shared informer for ``model`` in ``namespace`` (``None`` = all namespaces)."""
        key: _Key = (model, namespace, label_selector, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(
                self._client, model, namespace=namespace, label_selector=label_selector,
                field_selector=field_selector, clock=self._clock, logger=self._logger,
            )
            self._informers[key] = informer
            if self._group is not None:
                self._start(self._group, informer)
        return cast(Informer[T], informer)

    def informers(self) -> list[Informer[Any]]:
        """Every informer made so far, in the order they were asked for."""
        return list(self._informers.values())

    @property
    def has_synced(self) -> bool:
        return all(informer.has_synced for informer in self._informers.values())

    async def wait_for_sync(self) -> None:
        """Return once every informer made so far has synced (including ones made meanwhile)."""
        waited: set[int] = set()
        while True:
            pending = [inf for inf in self._informers.values() if id(inf) not in waited]
            if not pending:
                return
            for informer in pending:
                await informer.wait_for_sync()
                waited.add(id(informer))

    async def run(self) -> None:
        """Run every informer, present and future, until cancelled."""
        if self._group is not None:
            raise RuntimeError("the informer factory is already running")
        try:
            async with asyncio.TaskGroup() as group:
                self._group = group
                for informer in self._informers.values():
                    self._start(group, informer)
                await asyncio.Event().wait()  # keep the group open for late informers
        finally:
            self._group = None

    @staticmethod
    def _start(group: asyncio.TaskGroup, informer: Informer[Any]) -> None:
        group.create_task(informer.run(), name=f"informer-{informer.model.KIND or informer.model.__name__}")


__all__ = ["InformerFactory"]
