"""A kind of the store kept in memory: listed once, then followed with a watch.

What the API server decides on every request — who is bound to which role, which
ServiceAccounts exist — must not cost a store read per request. A :class:`Mirror` lists
one kind, hands the listing to its owner, then hands it every watch event from that
listing's revision on. When the watch breaks (the store restarts, history was compacted)
it waits a little, lists again and resumes; what it knew last stays in force meanwhile.
Each wait doubles up to :data:`RETRY_MAX` seconds, so a store that stays away is not
hammered.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import structlog

from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import Event, StoreProtocol

_log = structlog.get_logger("fleetkeeper.apiserver")
RETRY_FIRST, RETRY_MAX = 0.2, 5.0


class Mirror:
    """Follows one kind; ``on_list`` gets each full listing, ``on_event`` each change after it."""

    def __init__(self, store: StoreProtocol, gk: GroupKind, *, clock: Clock,
                 on_list: Callable[[list[dict[str, Any]]], None], on_event: Callable[[Event], None],
                 namespace: str | None = None, label_selector: str | None = None) -> None:
        self._store = store
        self._gk = gk
        #: what of the kind is followed: one namespace, objects with a label (all when None)
        self._namespace = namespace
        self._selector = label_selector
        self._clock = clock
        self._on_list = on_list
        self._on_event = on_event
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """List the kind, then follow it in the background."""
        revision = await self._relist()
        name = f"mirror-{self._gk.kind}"
        self._task = asyncio.get_running_loop().create_task(self._follow(revision), name=name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _relist(self) -> int:
        listed = await self._store.list(self._gk, self._namespace, label_selector=self._selector)
        self._on_list(listed.items)
        return listed.revision

    async def _follow(self, revision: int) -> None:
        delay = RETRY_FIRST
        while True:
            try:
                watch = self._store.watch(self._gk, self._namespace, since=revision,
                                          label_selector=self._selector)
                try:
                    async for event in watch:
                        self._on_event(event)
                        revision = event.revision
                        delay = RETRY_FIRST
                finally:
                    await watch.close()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store went away or compacted: list again, then resume
                _log.warning("following the store again", kind=self._gk.kind, error=str(exc), retry_in=delay)
                await self._clock.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                with contextlib.suppress(Exception):
                    revision = await self._relist()
                continue
            await self._clock.sleep(delay)  # the stream ended: pause, then go on from where it stopped


__all__ = ["Mirror"]
