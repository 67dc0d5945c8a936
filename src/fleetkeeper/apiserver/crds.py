"""Serving CustomResourceDefinitions: the kinds the stored CRDs define, served the moment they exist.

kube-apiserver serves a CRD's kind as soon as the CRD is established — discovery, every
verb, watch, ``/status`` and ``/scale`` when declared — and drops it when the CRD is
deleted. :class:`CrdServing` keeps this server's scheme equal to the CRDs in the store
(:mod:`fleetkeeper.api.crd` does the registering):

* before the server answers its first request it lists every stored CRD and serves what
  each defines (a restart, a second replica);
* then it watches CRDs from that list's revision, so a CRD created, changed or deleted
  through *any* server sharing the store (replicas over one etcd) is served or dropped
  here too. A watch that fell behind (``410 Gone``) or ended lists again;
* a write to a CRD through this server is followed at once by the same step for that CRD
  (:meth:`CrdServing.refresh`) before the response leaves, so a client that creates a CRD
  and then asks for discovery or creates an object of the new kind finds it served. Each
  CRD's last handled resourceVersion is kept, so a late event never undoes a newer state;
* each CRD gets the status kube-apiserver's naming and establishing controllers write:
  accepted names, ``NamesAccepted`` and ``Established`` (or, for names another CRD holds,
  the conflict), ``storedVersions`` (:func:`~fleetkeeper.api.crd.desired_status`). It is
  written through the store's ``/status`` path with the CRD's resourceVersion as
  precondition, only when it differs; the status is a function of the CRD, so replicas
  agree, and one that loses the race leaves it to the event its rival's write causes;
* when a CRD is gone its kind stops being served and the objects of that kind are
  deleted, as kube-apiserver's CRD finalizer deletes them before the CRD goes.

A stored CRD that cannot be read as one (it names no group or kind) is logged and left
unserved.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog

from fleetkeeper import errors
from fleetkeeper.api.base import format_time
from fleetkeeper.api.crd import CRD, CUSTOM_KINDS, CustomKind, CustomKinds, desired_status
from fleetkeeper.apiserver.state import ServerState
from fleetkeeper.store.interface import Event

log = structlog.get_logger("fleetkeeper.apiserver.crds")
#: pause before watching again after a watch ended or failed
REWATCH_SECONDS = 0.2
#: the longest pause between attempts while the store keeps failing (a member cluster that is down)
REWATCH_MAX_SECONDS = 10.0


def _name_and_revision(obj: dict[str, Any]) -> tuple[str, int]:
    meta = obj.get("metadata") or {}
    revision = str(meta.get("resourceVersion") or "0")
    return str(meta.get("name") or ""), int(revision) if revision.isdigit() else 0


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Take a finished read's outcome, so a stream ending while the server closes is not reported
    as an exception never retrieved."""
    if not future.cancelled():
        future.exception()


class CrdServing:
    """Serves the kinds of the stored CRDs (see the module notes)."""

    def __init__(self, state: ServerState, kinds: CustomKinds = CUSTOM_KINDS) -> None:
        self._state = state
        self._kinds = kinds
        self._started = False
        self._lock = asyncio.Lock()
        #: CRD name → the resourceVersion last handled (of the object, or of its deletion)
        self._handled: dict[str, int] = {}
        #: CRD name → what this server serves for it
        self._served: dict[str, CustomKind] = {}
        self._task: asyncio.Task[None] | None = None

    async def ensure(self) -> None:
        """Serve every stored CRD and start following changes (once, before the first answer)."""
        if self._started:
            return
        async with self._lock:
            if self._started:
                return
            revision = await self._resync()
            self._task = asyncio.get_running_loop().create_task(self._follow(revision), name="crd-serving")
            self._started = True

    async def refresh(self, name: str | None) -> None:
        """Bring one CRD (``None``: every CRD) up to date now, after a write to it through this server.

        The write succeeded whatever happens here: a failure is logged and left to the watch."""
        try:
            if name is None:
                await self._resync()
                return
            try:
                obj = await self._state.store.get(CRD, "", name)
            except errors.NotFound:
                await self._gone(name, self._state.store.revision)
                return
            await self._serve(obj)
        except Exception as exc:
            log.warning("CustomResourceDefinition not served at once after a write; its watch event will",
                        name=name, error=repr(exc))

    # ------------------------------------------------------------------ following the store
    async def _resync(self) -> int:
        """Serve every stored CRD and drop the ones no longer stored; the list's revision."""
        listed = await self._state.store.list(CRD)
        present = set()
        for obj in listed.items:
            present.add(_name_and_revision(obj)[0])
            await self._serve(obj)
        for name in sorted(set(self._served) - present):
            await self._gone(name, listed.revision)
        return listed.revision

    async def _follow(self, revision: int) -> None:
        """Watch CRDs until the server closes; list again when the watch is lost."""
        closing = asyncio.ensure_future(self._state.closing.wait())
        since: int | None = revision
        failures = 0  # in a row: each doubles the pause; the first is logged at warning, the others at debug
        try:
            while not closing.done():
                try:
                    if since is None:
                        since = await self._resync()
                    since = await self._watch(since, closing)
                    failures = 0
                except errors.Gone:
                    log.info("CRD watch expired; listing again", resource_version=since)
                    since = None
                    continue
                except Exception as exc:  # a store hiccup must not end serving: list and watch again
                    (log.warning if failures == 0 else log.debug)(
                        "CRD watch failed; listing again", error=repr(exc), failures=failures + 1)
                    since = None
                    failures += 1
                # the stream ended or failed: pause, then go on from where it stopped
                pause = min(REWATCH_SECONDS * 2 ** min(failures, 16), REWATCH_MAX_SECONDS)
                await asyncio.wait({closing}, timeout=pause)
        finally:
            closing.cancel()

    async def _watch(self, revision: int, closing: asyncio.Future[Any]) -> int:
        """Handle one watch stream's events until it ends or the server closes; the last revision seen."""
        watch = self._state.store.watch(CRD, since=revision)
        iterator = watch.__aiter__()
        try:
            while not closing.done():
                pending = asyncio.ensure_future(iterator.__anext__())
                pending.add_done_callback(_retrieve)
                await asyncio.wait({pending, closing}, return_when=asyncio.FIRST_COMPLETED)
                if not pending.done():
                    pending.cancel()
                    with contextlib.suppress(BaseException):
                        await pending
                    break
                try:
                    event: Event = pending.result()
                except StopAsyncIteration:
                    break
                revision = event.revision
                if event.type == "DELETED":
                    await self._gone(_name_and_revision(event.object)[0], event.revision)
                else:
                    await self._serve(event.object)
        finally:
            await watch.close()
        return revision

    # ------------------------------------------------------------------ one CRD
    def _fresh(self, name: str, revision: int) -> bool:
        """Whether ``revision`` of CRD ``name`` is newer than what was handled (and note it)."""
        if revision and revision < self._handled.get(name, 0):
            return False
        self._handled[name] = max(revision, self._handled.get(name, 0))
        return True

    async def _serve(self, obj: dict[str, Any]) -> None:
        name, revision = _name_and_revision(obj)
        if not name or not self._fresh(name, revision):
            return
        try:
            conflict = self._kinds.register(obj)
        except ValueError as exc:
            log.warning("stored CustomResourceDefinition not served", name=name, error=str(exc))
            return
        served = self._kinds.by_name(name)
        if conflict is None and served is not None:
            self._served[name] = served
        elif conflict is not None:
            log.info("CustomResourceDefinition names not accepted", name=name, reason=conflict.reason,
                     message=conflict.message)
        status = desired_status(obj, conflict=conflict, now=format_time(self._state.clock.now()))
        if status == obj.get("status"):
            return
        # changed or gone meanwhile: its event brings this CRD back here
        with contextlib.suppress(errors.Conflict, errors.NotFound):
            await self._state.store.update({**obj, "status": status}, subresource="status")

    async def _gone(self, name: str, revision: int) -> None:
        if not self._fresh(name, revision):
            return
        kind = self._served.pop(name, None)
        self._kinds.unregister(name)  # may be gone already: another part of this process saw it first
        if kind is None:
            return
        await self._delete_objects(kind)
        for obj in (await self._state.store.list(CRD)).items:  # one may have waited for the names it held
            if _name_and_revision(obj)[0] not in self._served:
                await self._serve(obj)

    async def _delete_objects(self, kind: CustomKind) -> None:
        """Delete what was stored of a kind whose CRD is gone (unless a CRD serves the kind again)."""
        store = self._state.store
        listed = await store.list(kind.group_kind)
        for item in listed.items:
            if self._kinds.get(kind.group_kind) is not None:
                return
            meta = item.get("metadata") or {}
            namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            with contextlib.suppress(errors.NotFound, errors.Conflict):
                await store.delete(kind.group_kind, namespace, name)
        if listed.items:
            log.info("objects of a deleted CustomResourceDefinition deleted", crd=kind.name,
                     count=len(listed.items))


__all__ = ["REWATCH_MAX_SECONDS", "REWATCH_SECONDS", "CrdServing"]
