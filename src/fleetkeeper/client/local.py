"""The local client: the typed :class:`~fleetkeeper.client.interface.Client` straight onto a Store.

This is what the all-in-one control plane uses: controllers and the scheduler call it
in-process, with the same semantics as the REST client against the API server, so
either can be swapped in (both pass :mod:`fleetkeeper.client.testing`).

* Objects cross as typed models: encoded with ``to_dict()``, decoded with
  ``model.from_dict`` (the stored version is presented as the model's version — the
  conversion between versions of one kind is the identity for now).
* Writes to the main resource (create, update, patch) go through ``admission`` when
  given — the same defaulting and validation the API server runs; ``/status`` writes do
  not. An update without a resourceVersion is still checked against the object that
  admission saw, retrying on conflict, so admission never judges a stale ``old``. Given
  ``admission_reads_old``, the stored object is decoded for admission only for kinds whose
  rules look at it (most kinds' admission does not, and decoding is a write's main cost).
* ``patch`` supports JSON merge patch and JSON patch (:mod:`fleetkeeper.api.patch`),
  re-reading and re-applying on a resourceVersion conflict unless the patch itself
  pinned the resourceVersion. Strategic merge patch and server-side apply are the API
  server's business and are refused here with ``UnsupportedMediaType``.
* ``watch`` without a resourceVersion (or ``"0"``) starts, as Kubernetes does, with a
  synthetic ADDED for every current object, then streams changes after that list.
* Cluster-scoped kinds ignore the namespace argument.
* A watch of a kind this client also writes hands out, for the event of a write, the
  model that write returned instead of decoding the stored object again: both are
  read-only after the write (see ``_written``), and an informer's cache shares them.
* ``batch()`` groups the writes a task makes inside it into one store transaction
  (``Store.batch``); the REST client has no such thing, so callers look for it with
  ``getattr`` and fall back to plain writes.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar

from fleetkeeper import errors
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.kubepatch import apply_kube_json_patch
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.patch import apply_merge_patch
from fleetkeeper.api.scheme import GroupKind, group_kind_of
from fleetkeeper.client.interface import ObjectList, PatchType, WatchEvent
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol

T = TypeVar("T", bound=Resource)

#: how many times a write re-reads and retries after a conflict it caused no part of
MAX_RETRIES = 32
#: most written objects kept for this client's own watches to reuse (the oldest go first)
MAX_RECENT = 4096


class Admission(Protocol):
    """Defaulting and validation of a main-resource write (``fleetkeeper.api.admission.admit``)."""

    def __call__(
        self, new: Resource, old: Resource | None, *, operation: Literal["CREATE", "UPDATE"], now: datetime
    ) -> Resource: ...


def _gk(model: type[Resource]) -> GroupKind:
    if not model.KIND:
        raise TypeError(f"{model.__name__} is not a kind; use SCHEME.model_for(api_version, kind)")
    return group_kind_of(model.API_VERSION, model.KIND)


def _namespace(model: type[Resource], namespace: str | None) -> str:
    return (namespace or "") if model.NAMESPACED else ""


def _decode(model: type[T], data: dict[str, Any]) -> T:
    if model.API_VERSION:
        data["apiVersion"] = model.API_VERSION
    return model.from_dict(data)


def _encode(obj: Resource) -> dict[str, Any]:
    data = obj.to_dict()
    if not type(obj).NAMESPACED:
        data.get("metadata", {}).pop("namespace", None)
    return data


#: top-level fields every kind shares; the rest (spec, status, data …) are the sections
_TYPE_META = frozenset(("apiVersion", "kind", "metadata"))


def _sections(obj: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in obj.items() if key not in _TYPE_META}


def _written(model: type[T], sent: T, data: dict[str, Any], stored: dict[str, Any]) -> T:
    """The stored object as a model, after writing ``data`` (``sent`` encoded); ``stored``
    is the store's shared dict (read, never changed).

    The store only fills system metadata and, by subresource, keeps the stored ``status``
    or ``spec``. When every other section it returns equals what was sent (JSON equality,
    cheap next to validation), the result is ``sent`` with the stored metadata — only the
    metadata is decoded, and the result shares the sections with ``sent``: neither is to
    be changed in place after the write (as with objects from informer caches).
    Otherwise a deep copy of ``stored`` is decoded: models of unstructured kinds keep the
    dicts they are given.
    """
    if (model.API_VERSION and sent.api_version != model.API_VERSION) or _sections(stored) != _sections(data):
        return _decode(model, json_copy(stored))
    meta = type(sent.metadata).from_dict(stored["metadata"], path="metadata")
    return sent.model_copy(update={"metadata": meta})


class LocalClient:
    """A :class:`~fleetkeeper.client.interface.Client` over a Store (see the module docstring)."""

    def __init__(self, store: StoreProtocol, *, admission: Admission | None = None, clock: Clock,
                 admission_reads_old: Callable[[type[Resource]], bool] | None = None) -> None:
        self._store = store
        self._admission = admission
        self._clock = clock
        #: whether admission looks at the stored object of a kind (else it is not decoded for it)
        self._reads_old = admission_reads_old
        #: open watches by model; only writes of a watched model are kept in ``_recent``
        self._watched: dict[type[Resource], int] = {}
        #: (model, namespace, name) → the model a write returned, until a watch delivers it
        self._recent: dict[tuple[type[Resource], str, str], Resource] = {}

    @property
    def store(self) -> StoreProtocol:
        return self._store

    def batch(self) -> AbstractAsyncContextManager[None]:
        """Commit the writes this task makes inside the block as one store transaction."""
        return self._store.batch()

    # ---------------------------------------------------------------- reads
    async def get(self, model: type[T], name: str, namespace: str = "") -> T:
        data = await self._store.get(_gk(model), _namespace(model, namespace), name)
        return _decode(model, data)

    async def list(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ObjectList[T]:
        result = await self._store.list(_gk(model), namespace if model.NAMESPACED else None,
                                        label_selector=label_selector, field_selector=field_selector)
        return ObjectList(items=[_decode(model, item) for item in result.items],
                          resource_version=str(result.revision))

    # ---------------------------------------------------------------- writes
    async def create(self, obj: T) -> T:
        model = type(obj)
        admitted = self._admit(obj, None, "CREATE")
        data = _encode(admitted)
        return self._remember(_written(model, admitted, data, await self._store.create(data, shared=True)))

    async def update(self, obj: T) -> T:
        return await self._update(obj, with_status=False)

    async def update_with_status(self, obj: T) -> T:
        """Update the main resource and its status as one change (one watch event). The REST
        client has no such write: callers look for it with ``getattr`` and otherwise write
        the main resource, then ``/status``."""
        if not type(obj).HAS_STATUS:
            return await self.update(obj)
        return await self._update(obj, with_status=True)

    async def _update(self, obj: T, *, with_status: bool) -> T:
        model = type(obj)
        if self._admission is None:
            data = _encode(obj)
            return self._remember(_written(model, obj, data, await self._store.update(
                data, shared=True, with_status=with_status)))
        gk, namespace = _gk(model), _namespace(model, obj.metadata.namespace)
        pinned = obj.metadata.resource_version
        reads_old = self._needs_old(model)
        for _ in range(MAX_RETRIES):
            old: T | None = None
            version = pinned
            if not pinned or reads_old:  # admission or the version needs the stored object
                # shared: read here, and the write that follows reuses the parse
                current = await self._store.get(gk, namespace, obj.name, shared=True)
                old = self._old(model, current)
                version = pinned or current["metadata"]["resourceVersion"]
            admitted = self._admit(obj, old, "UPDATE")
            data = _encode(admitted)
            data["metadata"]["resourceVersion"] = version
            try:
                return self._remember(_written(model, admitted, data, await self._store.update(
                    data, shared=True, with_status=with_status)))
            except errors.Conflict:
                if pinned:
                    raise
        raise self._gave_up(gk, obj.name)

    async def update_status(self, obj: T) -> T:
        model = type(obj)
        if not model.HAS_STATUS:
            raise errors.NotFound(f"{model.KIND} has no status subresource", kind=model.PLURAL, name=obj.name)
        data = _encode(obj)
        return self._remember(_written(model, obj, data, await self._store.update(
            data, subresource="status", shared=True)))

    async def finalize(self, obj: T) -> T:
        model = type(obj)
        data = _encode(obj)
        return self._remember(_written(model, obj, data, await self._store.update(
            data, subresource="finalize", shared=True)))

    async def patch(
        self,
        model: type[T],
        name: str,
        namespace: str = "",
        *,
        patch: dict[str, Any] | builtins.list[Any],
        patch_type: PatchType = "merge",
        subresource: str | None = None,
    ) -> T:
        if patch_type not in ("merge", "json"):
            raise errors.UnsupportedMediaType(
                f"{patch_type} patches are served by the API server; the local client applies merge and json"
            )
        if subresource not in (None, "status"):
            raise errors.BadRequest(f"unknown subresource {subresource!r}")
        gk, namespace = _gk(model), _namespace(model, namespace)
        for _ in range(MAX_RETRIES):
            current = await self._store.get(gk, namespace, name)
            if patch_type == "merge":
                patched = apply_merge_patch(current, patch)
            else:
                patched = apply_kube_json_patch(current, patch)
            data = self._patched_object(model, current, patched, subresource)
            pinned = data["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]
            try:
                return _decode(model, await self._store.update(data, subresource=subresource))
            except errors.Conflict:
                if pinned:
                    raise
        raise self._gave_up(gk, name)

    async def delete(
        self, model: type[T], name: str, namespace: str = "", *, resource_version: str | None = None
    ) -> None:
        await self._store.delete(_gk(model), _namespace(model, namespace), name,
                                 resource_version=resource_version)

    # ---------------------------------------------------------------- watch
    def watch(
        self,
        model: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> AsyncIterator[WatchEvent[T]]:
        """Events after ``resource_version``; without one, ADDED for each current object first."""
        since: int | None = None
        if resource_version not in (None, "", "0"):
            try:
                since = int(str(resource_version))
            except ValueError:
                raise errors.BadRequest(f"resourceVersion {resource_version!r} is not a revision") from None
        scope = namespace if model.NAMESPACED else None
        return self._watch(model, scope, since, label_selector, field_selector)

    async def _watch(
        self, model: type[T], namespace: str | None, since: int | None, label_selector: str | None,
        field_selector: str | None,
    ) -> AsyncIterator[WatchEvent[T]]:
        gk = _gk(model)
        if since is None:
            listed = await self._store.list(gk, namespace, label_selector=label_selector,
                                            field_selector=field_selector)
            since = listed.revision
            for item in listed.items:
                yield WatchEvent("ADDED", _decode(model, item))
        watch = self._store.watch(gk, namespace, since=since, label_selector=label_selector,
                                  field_selector=field_selector)
        watched = self._watched
        watched[model] = watched.get(model, 0) + 1
        recent = self._recent
        try:
            async for event in watch:
                data = event.object
                meta = data["metadata"]
                written = recent.pop((model, meta.get("namespace") or "", meta["name"]), None)
                if written is None or written.metadata.resource_version != meta.get("resourceVersion"):
                    written = _decode(model, data)
                yield WatchEvent(event.type, written)  # type: ignore[arg-type]
        finally:
            await watch.close()
            watched[model] -= 1
            if not watched[model]:
                del watched[model]

    # ---------------------------------------------------------------- helpers
    def _remember(self, result: T) -> T:
        """Keep a write's result for a watch of its model to hand out (see the module notes)."""
        model = type(result)
        if model in self._watched:
            recent = self._recent
            key = (model, _namespace(model, result.metadata.namespace), result.name)
            recent.pop(key, None)
            if len(recent) >= MAX_RECENT:
                del recent[next(iter(recent))]
            recent[key] = result
        return result

    def _admit(self, obj: T, old: T | None, operation: Literal["CREATE", "UPDATE"]) -> T:
        if self._admission is None:
            return obj
        admitted = self._admission(obj, old, operation=operation, now=self._clock.now())
        if not isinstance(admitted, type(obj)):
            raise errors.InternalError(
                f"admission returned a {type(admitted).__name__} for a {type(obj).__name__}"
            )
        return admitted

    def _needs_old(self, model: type[Resource]) -> bool:
        """Whether admission reads the stored object of this kind."""
        return self._reads_old is None or self._reads_old(model)

    def _old(self, model: type[T], current: dict[str, Any]) -> T | None:
        """The stored object for admission, decoded only when admission reads it."""
        return _decode(model, dict(current)) if self._needs_old(model) else None

    def _patched_object(
        self, model: type[T], current: dict[str, Any], patched: Any, subresource: str | None
    ) -> dict[str, Any]:
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise errors.Invalid("the patched object must be a JSON object with metadata",
                                 causes=[errors.Cause("metadata", "Required value", "FieldValueRequired")])
        for field in ("name", "namespace"):
            if patched["metadata"].get(field) != current["metadata"].get(field):
                raise errors.Invalid(f"metadata.{field}: field is immutable",
                                     causes=[errors.Cause(f"metadata.{field}", "field is immutable")])
        if not patched["metadata"].get("resourceVersion"):
            patched["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        obj = _decode(model, patched)
        if subresource is None:
            obj = self._admit(obj, self._old(model, current), "UPDATE")
        return _encode(obj)

    @staticmethod
    def _gave_up(gk: GroupKind, name: str) -> errors.Conflict:
        return errors.Conflict(f'{gk} "{name}": gave up after {MAX_RETRIES} conflicting concurrent writes',
                               name=name, group=gk.group)


__all__ = ["MAX_RETRIES", "Admission", "LocalClient"]
