"""A simulated cluster as a Store: what the API server serves a simulated member from.

:class:`ClusterStore` implements :class:`fleetkeeper.store.interface.StoreProtocol` over one
:class:`~fleetkeeper.members.simulated.cluster.SimulatedCluster`, so
:func:`fleetkeeper.apiserver.app.build_app` serves a member as it serves the control plane.
The storage stays the cluster's engine and every write goes through it: it is checked as an
in-process apply is (``validate.py``, a Service's defaults and cluster IP), takes the
engine's next revision, and wakes the workload controllers, which settle before the call
returns (a Deployment created here has its ReplicaSet and pods when ``create`` returns).
Every call first passes the cluster's fault gate (``faults.py``: down answers ``503``, a black
hole ``504`` once the call's time is up); watches are
:mod:`~fleetkeeper.members.simulated.api_watch`'s.

Where a simulated member differs from a plain store, it keeps what the member always did:

* a Pod is written by the pod's server-side apply (``podapply.py``), forced, as its field
  manager; an update that sends the pod's spec as read keeps the spec it was applied with;
* ``delete`` removes the object and, first, its dependents, at once (the cluster's garbage
  collection); finalizers hold nothing;
* ``/status`` of the kinds whose status the cluster's controllers write (pods, nodes and the
  workloads) cannot be written (``MethodNotAllowed``); other kinds' status is written as
  the store writes it (a CRD's conditions, set by the API server's CRD controller);
* a namespaced object's missing namespace is created, unless the cluster stands for a real
  one (``create_namespaces=False``: ``NotFound``, as Kubernetes answers);
* a watch is of one kind; ``batch`` groups nothing, every write being one atomic step.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.api.selectors import parse_field_selector, parse_label_selector
from fleetkeeper.members.interface import FIELD_MANAGER
from fleetkeeper.members.simulated import objects as sim
from fleetkeeper.members.simulated.api_watch import HISTORY, Broken, ClusterWatch, Failure, Tap, gone
from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.engine import CONTROLLERS, POD
from fleetkeeper.members.simulated.events import EVENT
from fleetkeeper.members.simulated.faults import fail, refuses
from fleetkeeper.members.simulated.nodes import NODE
from fleetkeeper.members.simulated.podapply import apply_pod
from fleetkeeper.store import objects as o
from fleetkeeper.store.backend import Key
from fleetkeeper.store.interface import ListResult, Watch
from fleetkeeper.store.listing import decode_continue, encode_continue, matches
from fleetkeeper.store.watch import Hub, StoreWatch

#: the kinds whose status the cluster's own controllers write
OWNED_STATUS = frozenset({*CONTROLLERS, POD, NODE})
#: the kinds the cluster renders from records (their changes carry only the old labels)
RENDERED = frozenset({POD, EVENT})
#: metadata a create fills whatever was sent
_SERVER_SET = ("uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds")


class ClusterStore:
    """One simulated cluster behind the Store contract (see the module notes)."""

    def __init__(self, cluster: SimulatedCluster, *, history: int = HISTORY,
                 watch_queue: int | None = None) -> None:
        self._cluster = cluster
        self._engine = cluster.engine
        self._history = history
        self._hub = Hub(watch_queue if watch_queue is not None else history)
        self._taps: dict[sim.GroupKind, Tap] = {}
        self._closed = False
        #: a watcher's buffer is filling up: the writing call yields once before it answers
        self._pressure = False

    @property
    def cluster(self) -> SimulatedCluster:
        return self._cluster

    @property
    def revision(self) -> int:
        return self._engine.store.revision

    @property
    def watchers(self) -> int:
        """How many watches are open."""
        return len(self._hub)

    # ---------------------------------------------------------------- reads
    async def get(self, gk: GroupKind, namespace: str, name: str, *, shared: bool = False) -> dict[str, Any]:
        await self._gate()
        key = sim.ObjectKey(gk.group, gk.kind, namespace, name)
        self._tap(key.group_kind)
        obj = self._cluster.read(key)
        if obj is None:
            raise o.not_found(Key(*key))
        return obj if shared else json_copy(obj)

    async def list(
        self,
        gk: GroupKind,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListResult:
        await self._gate()
        labels = parse_label_selector(label_selector) if label_selector else ()
        fields = parse_field_selector(field_selector) if field_selector else ()
        tap = self._tap(sim.GroupKind(gk.group, gk.kind))
        revision, after = self.revision, None
        if continue_token:
            revision, after = decode_continue(continue_token)
            if not 0 <= revision <= self.revision:
                raise errors.BadRequest(f"invalid continue token {continue_token!r}: revision {revision} "
                                        f"is not one this store has reached ({self.revision})")
        found = {_position(obj): obj for obj in self._cluster.items(tap.gk, namespace)}
        if revision < self.revision:
            tap.rewind(found, revision, namespace)
        items: list[dict[str, Any]] = []
        token = None
        for position in sorted(found):
            if after is not None and position <= after:
                continue
            obj = found[position]
            if not matches(labels, fields, obj):
                continue
            if limit and limit > 0 and len(items) == limit:
                token = encode_continue(revision, _position(items[-1]))
                break
            items.append(json_copy(obj))
        return ListResult(items=items, revision=revision, continue_token=token)

    # ---------------------------------------------------------------- writes
    async def create(
        self, obj: dict[str, Any], *, shared: bool = False, dry_run: bool = False
    ) -> dict[str, Any]:
        await self._gate()
        self._check_open()
        new = json_copy(o.copy_in(obj))  # the engine keeps what it is given: nothing the caller holds
        meta = new["metadata"]
        if meta.get("resourceVersion"):
            raise errors.BadRequest("resourceVersion should not be set on objects to be created")
        key = self._claim_name(new)
        engine = self._engine
        if dry_run:
            engine.check(new)
            o.prepare_create(new, uid=engine.store.new_uid(), now=engine.now(), revision=0)
            del new["metadata"]["resourceVersion"]
            o.check_size(Key(*key), o.encoded(new))
            return new
        if key.namespace:
            self._cluster.namespace_for(key.namespace)
        for field in _SERVER_SET:
            meta.pop(field, None)
        o.check_size(Key(*key), o.encoded(new))
        if key.group_kind == POD:
            live = self._write_pod(new)
        else:
            engine.check(new)
            live = engine.store.create(engine.services.default(None, new))
        return await self._written(new["apiVersion"], key, live, shared=shared)

    async def update(
        self, obj: dict[str, Any], *, subresource: str | None = None, shared: bool = False,
        with_status: bool = False, dry_run: bool = False,
    ) -> dict[str, Any]:
        if subresource not in (None, "status", "finalize"):
            raise errors.BadRequest(f"unknown subresource {subresource!r}")
        if subresource == "finalize" and (obj.get("apiVersion"), obj.get("kind")) != ("v1", "Namespace"):
            raise errors.BadRequest("only a Namespace has the finalize subresource")
        await self._gate()
        self._check_open()
        new = json_copy(o.copy_in(obj))
        key = _key_of(new)
        self._tap(key.group_kind)
        current = self._cluster.read(key)
        if current is None:
            raise o.not_found(Key(*key))
        version = current["metadata"].get("resourceVersion")
        wanted = new["metadata"].get("resourceVersion")
        if wanted and wanted != version:
            raise o.conflict(Key(*key), o.STALE)
        if subresource == "status" and key.group_kind in OWNED_STATUS:
            resource = o.resource_name(GroupKind(*key.group_kind))
            raise errors.MethodNotAllowed(f"{resource}/status: the simulated cluster's controllers own it; "
                                          "it cannot be written")
        if subresource == "status":
            result = o.prepare_status_update(new, current)
        elif subresource == "finalize":
            result = o.prepare_finalize_update(new, current)
        else:
            result = o.prepare_update(new, current, Key(*key), with_status=with_status)
        result["metadata"]["resourceVersion"] = version
        o.check_size(Key(*key), o.encoded(result))
        if dry_run:
            return result
        if o.same_content(result, current):
            return current if shared else json_copy(current)
        if key.group_kind == POD:
            live = self._write_pod(self._pod_update(key, result, current))
        else:
            engine = self._engine
            engine.check(result)
            stored = engine.services.default(current, result)
            spec_changed = result["metadata"].get("generation") != current["metadata"].get("generation")
            live = engine.store.write(key, current, stored, body_changed=spec_changed)
        return await self._written(result["apiVersion"], key, live, shared=shared)

    async def delete(
        self,
        gk: GroupKind,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
    ) -> dict[str, Any]:
        await self._gate()
        self._check_open()
        key = sim.ObjectKey(gk.group, gk.kind, namespace, name)
        self._tap(key.group_kind)
        current = self._cluster.read(key)
        if current is None:
            raise o.not_found(Key(*key))
        meta = current["metadata"]
        if uid and uid != meta.get("uid"):
            raise o.conflict(Key(*key), f"Precondition failed: UID in precondition: {uid}, "
                                        f"UID in object meta: {meta.get('uid')}")
        if resource_version and resource_version != meta.get("resourceVersion"):
            raise o.conflict(Key(*key), o.STALE)
        self._engine.delete_object(key)
        last = o.restamp(current, self.revision)  # the removal is the engine's last write
        await self._settle()
        return json_copy(last)

    @asynccontextmanager
    async def batch(self) -> AsyncIterator[None]:
        """Every write of a simulated cluster is one atomic step already: nothing to group."""
        yield

    # ---------------------------------------------------------------- watch
    def watch(
        self,
        gk: GroupKind | None,
        namespace: str | None = None,
        *,
        since: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        if gk is None:
            raise errors.BadRequest("a simulated cluster is watched one kind at a time")
        labels = parse_label_selector(label_selector) if label_selector else ()
        fields = parse_field_selector(field_selector) if field_selector else ()
        tap = self._tap(sim.GroupKind(gk.group, gk.kind))
        current = self.revision
        if since is None or since < 0:
            since = current
        if since < tap.start:
            raise gone(since, tap.start)
        sub = self._hub.subscribe(gk, namespace, labels, fields, since=since)
        if self._closed:
            sub.close()
        start = since

        async def history() -> list[Any]:
            return tap.after(start)

        return ClusterWatch(StoreWatch(sub, history if since < current else None), self._gate)

    def compact(self) -> None:
        """Forget the watch history and end every open watch, as an API server restart does: the
        revision moves on one, so a watch resuming from before now is Gone (410) and its client
        lists again, while a list made now and its watch go on."""
        for tap in list(self._taps.values()):
            tap.close()
        self._taps.clear()
        self._hub.close_all()
        self._engine.store.next_version()

    async def close(self) -> None:
        """End every watch; the cluster itself keeps running."""
        if self._closed:
            return
        self._closed = True
        for tap in self._taps.values():
            tap.detach()
        self._taps.clear()
        self._hub.close_all()

    # ---------------------------------------------------------------- internals
    async def _gate(self) -> None:
        """Fail as the cluster fails a call now, in the API's terms: down is ``503``, a black
        hole ``504`` once the call's time is up (what a client of the served API is told)."""
        cluster = self._cluster
        if not refuses(cluster.state):
            return
        try:
            await fail(cluster.state, cluster.name, clock=cluster.clock, call_timeout=cluster.call_timeout)
        except errors.MemberUnreachable as refused:
            raise errors.ServiceUnavailable(str(refused)) from None
        except errors.MemberTimeout as silent:
            raise errors.Timeout(str(silent)) from None

    def _check_open(self) -> None:
        if self._closed:
            raise errors.InternalError("the store is closed")

    def _tap(self, gk: sim.GroupKind) -> Tap:
        """The feed of a kind's changes, started on first use (see ``api_watch.py``)."""
        tap = self._taps.get(gk)
        if tap is None or tap.broken:
            rendered = self._cluster.items(gk) if gk in RENDERED else None
            tap = Tap(gk, start=self.revision, capacity=self._history, publish=self._publish,
                      ended=self._ended, rendered=rendered)
            if not self._closed:
                self._taps[gk] = tap
                self._engine.hub.register(tap)
        return tap

    def _publish(self, change: Any) -> None:
        if self._hub.publish((change,)):
            self._pressure = True

    async def _settle(self) -> None:
        """Let the cluster's controllers settle; then, if a watcher fills up, let readers drain."""
        self._engine.drain()
        if self._pressure:
            self._pressure = False
            await asyncio.sleep(0)

    def _ended(self, failure: Failure | None) -> None:
        if failure is None:
            self._hub.close_all()
        else:
            self._hub.fail_all(Broken(failure))

    def _claim_name(self, new: dict[str, Any]) -> sim.ObjectKey:
        meta = new["metadata"]
        prefix = meta.get("generateName")
        if meta.get("name") or not prefix:
            key = _key_of(new)
            self._tap(key.group_kind)
            if self._cluster.read(key) is not None:
                raise o.already_exists(Key(*key))
            return key
        for _ in range(8):
            meta["name"] = o.generated_name(str(prefix), self._engine.store.new_uid())
            key = _key_of(new)
            self._tap(key.group_kind)
            if self._cluster.read(key) is None:
                return key
        raise o.already_exists(Key(*key))

    def _pod_update(self, key: sim.ObjectKey, result: dict[str, Any],
                    current: dict[str, Any]) -> dict[str, Any]:
        """An updated pod as applied: its spec as read stands for the spec it was applied with."""
        pod = self._engine.pods.get(key.namespace, key.name)
        if pod is not None and result.get("spec") == current.get("spec"):
            result["spec"] = pod.spec
        result.pop("status", None)
        return result

    def _write_pod(self, manifest: dict[str, Any]) -> dict[str, Any]:
        meta = manifest["metadata"]
        managed = meta.pop("managedFields", None) or []
        manager = next((str(entry["manager"]) for entry in managed
                        if isinstance(entry, dict) and entry.get("manager")), FIELD_MANAGER)
        for field in ("resourceVersion", "uid", "creationTimestamp", "generation"):
            meta.pop(field, None)
        return apply_pod(self._engine, manifest, manager=manager, force=True)

    async def _written(self, api_version: str, key: sim.ObjectKey, live: dict[str, Any], *,
                       shared: bool) -> dict[str, Any]:
        """Tell the cluster what it now serves, let its controllers settle, answer ``live``."""
        self._cluster.observe(api_version, key, live)
        await self._settle()
        return live if shared else json_copy(live)


def _key_of(obj: dict[str, Any]) -> sim.ObjectKey:
    return sim.ObjectKey(*o.key_of(obj))


def _position(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


__all__ = ["OWNED_STATUS", "RENDERED", "ClusterStore"]
