"""The storage semantics of one write, as pure functions over wire dicts.

Given the caller's object and the stored one, these decide what gets stored: system
metadata filled on create, fields an update may not change carried over, ``generation``
bumped only when something outside ``metadata``/``status`` changed, ``/status`` writes
that touch only ``status``, and the finalizer rules of a delete. They never mutate the
stored dict (stored dicts are shared); they build new top-level and ``metadata`` dicts
and may share untouched nested values with the old state, which is safe because stored
state is never mutated.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_OBJECT_BYTES
from fleetkeeper.api.meta import default_plural
from fleetkeeper.api.scheme import SCHEME, GroupKind
from fleetkeeper.store.backend import Key, Record

#: top-level fields that are not "spec-like": changing them never bumps ``generation``
_NOT_SPEC = frozenset(("apiVersion", "kind", "metadata", "status"))

#: generateName suffix alphabet (Kubernetes' ``utilrand``: no vowels, no confusable digits)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def copy_in(obj: dict[str, Any]) -> dict[str, Any]:
    """The caller's object with private top-level and ``metadata`` dicts (the only parts the
    store modifies); deeper values stay shared, which is safe because the stored snapshot
    is the JSON serialized before the write returns (see :func:`snapshot`)."""
    if not isinstance(obj, dict):
        raise errors.BadRequest(f"an object must be a JSON object, got {type(obj).__name__}")
    result = dict(obj)
    meta = result.get("metadata")
    if meta is None:
        result["metadata"] = {}
    elif not isinstance(meta, dict):
        raise errors.BadRequest("metadata must be a JSON object")
    else:
        result["metadata"] = dict(meta)
    return result


def snapshot(obj: dict[str, Any], revision: int) -> Record:
    """The record of a built object; raises ``BadRequest`` if it is not JSON."""
    try:
        return Record.of(obj, revision)
    except TypeError as exc:
        raise errors.BadRequest(f"object is not JSON-serializable: {exc}") from None


def check_size(key: Key, raw: bytes, stored: Record | None = None) -> None:
    """Refuse an object whose encoding ``raw`` is over :data:`~fleetkeeper.api.limits.MAX_OBJECT_BYTES`
    (``413``, as kube-apiserver answers what etcd cannot hold) — unless it replaces a ``stored``
    state that was larger still (one stored before the limit may shrink)."""
    if len(raw) > MAX_OBJECT_BYTES and (stored is None or len(raw) > len(stored.raw)):
        gk = key.group_kind
        raise errors.RequestEntityTooLarge(
            f'{resource_name(gk)} "{key.name}" is too large: it encodes to {len(raw)} bytes, more than the '
            f"limit of {MAX_OBJECT_BYTES} bytes (1.5 MiB) for a stored object",
            kind=_plural(gk), group=gk.group, name=key.name)


def encoded(obj: dict[str, Any]) -> bytes:
    """The JSON bytes of ``obj`` (what a dry run measures; a write measures its snapshot's)."""
    try:
        return orjson.dumps(obj)
    except TypeError as exc:
        raise errors.BadRequest(f"object is not JSON-serializable: {exc}") from None


def resource_name(gk: GroupKind) -> str:
    """``clusters.cluster.karmada.io`` — how Kubernetes names a resource in messages."""
    info = SCHEME.by_group_kind(gk)
    plural = info.plural if info is not None else default_plural(gk.kind)
    return f"{plural}.{gk.group}" if gk.group else plural


def _plural(gk: GroupKind) -> str:
    info = SCHEME.by_group_kind(gk)
    return info.plural if info is not None else default_plural(gk.kind)


def not_found(key: Key) -> errors.NotFound:
    gk = key.group_kind
    return errors.NotFound(f'{resource_name(gk)} "{key.name}" not found',
                           kind=_plural(gk), group=gk.group, name=key.name)


def already_exists(key: Key) -> errors.AlreadyExists:
    gk = key.group_kind
    return errors.AlreadyExists(f'{resource_name(gk)} "{key.name}" already exists',
                                kind=_plural(gk), group=gk.group, name=key.name)


def conflict(key: Key, why: str) -> errors.Conflict:
    gk = key.group_kind
    return errors.Conflict(f'Operation cannot be fulfilled on {resource_name(gk)} "{key.name}": {why}',
                           kind=_plural(gk), group=gk.group, name=key.name)


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def key_of(obj: dict[str, Any]) -> Key:
    """The storage key of a wire dict (raises ``Invalid`` when kind or name is missing)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise _required("apiVersion")
    if not isinstance(kind, str) or not kind:
        raise _required("kind")
    meta = obj["metadata"]
    name, namespace = meta.get("name"), meta.get("namespace") or ""
    if not isinstance(name, str) or not name:
        raise _required("metadata.name")
    if not isinstance(namespace, str):
        raise errors.Invalid("metadata.namespace: must be a string",
                             causes=[errors.Cause("metadata.namespace", "must be a string")])
    return Key(api_version.rpartition("/")[0], kind, namespace, name)


def _required(path: str) -> errors.Invalid:
    return errors.Invalid(f"{path}: Required value", causes=[errors.Cause(path, "Required value",
                                                                          "FieldValueRequired")])


def generated_name(prefix: str, entropy: str) -> str:
    """``prefix`` (cut to 58 characters) plus five characters derived from ``entropy`` (a fresh uid)."""
    number = int.from_bytes(hashlib.blake2b(entropy.encode(), digest_size=8).digest(), "big")
    chars = []
    for _ in range(5):
        number, idx = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[idx])
    return prefix[:58] + "".join(chars)


def prepare_create(obj: dict[str, Any], *, uid: str, now: str, revision: int) -> None:
    """Fill the system metadata of a new object in place (``obj`` is the private copy)."""
    meta = obj["metadata"]
    if meta.get("resourceVersion"):
        raise errors.BadRequest("resourceVersion should not be set on objects to be created")
    stamp_created(meta, uid=uid, now=now, version=str(revision))
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    if not meta.get("namespace"):
        meta.pop("namespace", None)


def stamp_created(meta: dict[str, Any], *, uid: str, now: str, version: str) -> None:
    """The system metadata of a new object, set in ``meta`` (a private dict): its ``uid``,
    ``creationTimestamp``, ``generation`` 1 and ``resourceVersion``."""
    meta["uid"] = uid
    meta["creationTimestamp"] = now
    meta["generation"] = 1
    meta["resourceVersion"] = version


def carry_identity(meta: dict[str, Any], old_meta: dict[str, Any], *, changed: bool) -> None:
    """What an update keeps of the stored metadata, set in ``meta`` (a private dict): ``uid``
    and ``creationTimestamp``, and ``generation``, moved on when a spec-like field ``changed``."""
    for field in _IDENTITY:
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)
    meta["generation"] = next_generation(old_meta, changed=changed)


def next_generation(old_meta: dict[str, Any], *, changed: bool) -> int:
    """The ``generation`` after an update: the stored one, plus one when a spec-like field changed."""
    generation = int(old_meta.get("generation") or 1)
    return generation + 1 if changed else generation


def spec_changed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether a top-level field outside ``apiVersion``, ``kind``, ``metadata`` and ``status``
    differs (one that moves ``generation`` on)."""
    for field, value in new.items():
        if field not in _NOT_SPEC and (field not in old or (old[field] is not value and old[field] != value)):
            return True
    return any(field not in new for field in old if field not in _NOT_SPEC)


def _check_immutable(new_meta: dict[str, Any], old_meta: dict[str, Any], key: Key) -> None:
    uid = new_meta.get("uid")
    if uid and uid != old_meta.get("uid"):
        raise errors.Invalid(f'{key.kind} "{key.name}" is invalid: metadata.uid: field is immutable',
                             causes=[errors.Cause("metadata.uid", "field is immutable")],
                             kind=key.kind, name=key.name)


def _check_finalizers(new_meta: dict[str, Any], old_meta: dict[str, Any], key: Key) -> None:
    if not old_meta.get("deletionTimestamp"):
        return
    added = set(new_meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
    if added:
        message = ("no new finalizers can be added if the object is being deleted, "
                   f"found new finalizers {sorted(added)}")
        raise errors.Invalid(f'{key.kind} "{key.name}" is invalid: metadata.finalizers: {message}',
                             causes=[errors.Cause("metadata.finalizers", message, "FieldValueForbidden")],
                             kind=key.kind, name=key.name)


_IDENTITY = ("uid", "creationTimestamp")
_CARRIED = (*_IDENTITY, "deletionTimestamp", "deletionGracePeriodSeconds")


def prepare_update(new: dict[str, Any], old: dict[str, Any], key: Key, *,
                   with_status: bool = False) -> dict[str, Any]:
    """The object a main-resource update stores (``resourceVersion`` still to be stamped).

    Keeps the stored ``status`` (``with_status``: stores ``new``'s) and the system
    metadata, bumps ``generation`` when a spec-like field changed and refuses new
    finalizers on a deleting object. A Namespace keeps its ``spec.finalizers``: as in
    Kubernetes, only ``/finalize`` changes them.
    """
    new_meta, old_meta = new["metadata"], old["metadata"]
    _check_immutable(new_meta, old_meta, key)
    _check_finalizers(new_meta, old_meta, key)
    if _is_namespace(old):
        _keep_namespace_finalizers(new, old)
    for field in _CARRIED:
        if field in old_meta:
            new_meta[field] = old_meta[field]
        else:
            new_meta.pop(field, None)
    if not new_meta.get("namespace"):
        new_meta.pop("namespace", None)
    new_meta["generation"] = next_generation(old_meta, changed=spec_changed(new, old))
    if with_status:
        return new
    if "status" in old:
        new["status"] = old["status"]
    else:
        new.pop("status", None)
    return new


def prepare_finalize_update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The object a Namespace's ``/finalize`` write stores: the stored Namespace with
    ``new``'s ``spec.finalizers`` (nothing else of ``new`` is taken)."""
    result = dict(old)
    result["metadata"] = dict(old["metadata"])
    result["spec"] = _with_finalizers(old.get("spec"), (new.get("spec") or {}).get("finalizers"))
    return result


def _with_finalizers(spec: Any, finalizers: Any) -> dict[str, Any]:
    """A copy of a Namespace's ``spec`` (a dict, else empty) holding ``finalizers`` (none when empty)."""
    out = {k: v for k, v in spec.items() if k != "finalizers"} if isinstance(spec, dict) else {}
    if finalizers:
        out["finalizers"] = finalizers
    return out


def prepare_status_update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The object a ``/status`` write stores: the stored object with ``new``'s status."""
    result = dict(old)
    result["metadata"] = dict(old["metadata"])
    if "status" in new:
        result["status"] = new["status"]
    else:
        result.pop("status", None)
    return result


def _keep_namespace_finalizers(new: dict[str, Any], old: dict[str, Any]) -> None:
    """``new`` with ``old``'s ``spec.finalizers`` (a new ``spec`` dict: the sent one is the caller's)."""
    spec = _with_finalizers(new.get("spec"), (old.get("spec") or {}).get("finalizers"))
    if spec or "spec" in old:
        new["spec"] = spec
    else:
        new.pop("spec", None)


def same_content(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether ``new`` equals ``old`` apart from ``resourceVersion`` (a no-op write)."""
    new_meta, old_meta = new["metadata"], old["metadata"]
    if len(new) != len(old) or any(k != "metadata" and new.get(k) != v for k, v in old.items()):
        return False
    return {k: v for k, v in new_meta.items() if k != "resourceVersion"} == {
        k: v for k, v in old_meta.items() if k != "resourceVersion"
    }


def _is_namespace(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"


def held(obj: dict[str, Any]) -> bool:
    """Whether finalizers keep ``obj`` when it is deleted: its ``metadata.finalizers`` and,
    for a Namespace, its ``spec.finalizers`` (Kubernetes' ``kubernetes`` finalizer, which
    the namespace cleanup removes once the namespace is empty)."""
    if obj["metadata"].get("finalizers"):
        return True
    spec = obj.get("spec")
    return _is_namespace(obj) and isinstance(spec, dict) and bool(spec.get("finalizers"))


def is_finished(obj: dict[str, Any]) -> bool:
    """A deleting object whose last finalizer is gone: the write removes it."""
    return bool(obj["metadata"].get("deletionTimestamp")) and not held(obj)


def mark_deleting(old: dict[str, Any], *, now: str) -> dict[str, Any]:
    """The object a delete stores while finalizers hold it (a Namespace turns ``Terminating``)."""
    result = dict(old)
    meta = result["metadata"] = dict(old["metadata"])
    meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0
    if _is_namespace(old):
        result["status"] = {**(old.get("status") or {}), "phase": "Terminating"}
    return result


def restamp(obj: dict[str, Any], revision: int) -> dict[str, Any]:
    """A shallow copy of ``obj`` carrying ``revision`` as its resourceVersion."""
    result = dict(obj)
    meta = result["metadata"] = dict(obj["metadata"])
    meta["resourceVersion"] = str(revision)
    return result


__all__ = [
    "STALE", "already_exists", "carry_identity", "check_size", "conflict", "copy_in", "encoded",
    "generated_name", "is_finished", "key_of", "mark_deleting", "next_generation", "not_found",
    "prepare_create", "prepare_finalize_update", "prepare_status_update", "prepare_update",
    "resource_name", "restamp", "same_content", "snapshot", "spec_changed", "stamp_created",
]
