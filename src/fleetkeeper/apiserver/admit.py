"""The admission step of every write path (create, update, patch, apply).

A body becomes a stored object in three moves:

1. **shape** — ``apiVersion``/``kind`` must be the URL's (filled in when missing);
   ``metadata.namespace`` is the URL's for namespaced kinds (a different one is
   ``400``) and dropped for cluster-scoped kinds; the URL's name wins the same way;
2. **decode** — the fields set to ``null`` are dropped as kube-apiserver drops them
   (:mod:`~fleetkeeper.apiserver.nulls`), and the wire dict becomes the kind's model.
   Unknown fields (found by the typed model, or for the kinds kept unstructured by their schema:
   :mod:`~fleetkeeper.apiserver.fieldcheck`) and the duplicate keys of a JSON body follow
   ``?fieldValidation=`` as kube-apiserver's strict decoding does: ``Strict`` (what kubectl
   sends) refuses them with ``400`` naming every one (``strict decoding error: unknown
   field "spec.replcas"``), ``Warn`` (the default) drops them and says so in a ``Warning``
   header each, ``Ignore`` drops them silently;
3. **admit** — :func:`fleetkeeper.api.admission.admit` defaults and validates
   main-resource writes (``/status`` writes are only decoded, as the local client does)
   (``422 Invalid`` with one cause per field path), and the result is rendered back
   to its wire form, which is what the store keeps;
4. **confine** — a Pull agent's write is checked on its content
   (:mod:`fleetkeeper.apiserver.confine`): what the written object may say, beyond
   which objects the agent may write at all.

Whether the namespace exists is :mod:`fleetkeeper.apiserver.namespaces`' to judge (create only).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.admission import Operation, admit, check_namespace_finalizers
from fleetkeeper.api.base import UNKNOWN_FIELD
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.api.validation import FieldErrors
from fleetkeeper.apiserver import confine, fieldcheck
from fleetkeeper.apiserver.auth import User
from fleetkeeper.apiserver.nulls import drop_nulls
from fleetkeeper.apiserver.request import Target

VALIDATION_MODES = ("Strict", "Warn", "Ignore")
#: the longest field path a strict decoding error or warning names in full
MAX_PATH = 256
_TOKEN = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def check_validation_mode(value: str | None, default: str = "Strict") -> str:
    if not value:
        return default
    if value not in VALIDATION_MODES:
        modes = ", ".join(VALIDATION_MODES)
        raise errors.BadRequest(f"fieldValidation must be one of {modes}, got {value!r}")
    return value


def shape(target: Target, obj: dict[str, Any]) -> dict[str, Any]:
    """Check and fill type, namespace and name from the URL (in place; returns ``obj``)."""
    info = target.info
    for key, want in (("apiVersion", info.api_version), ("kind", info.kind)):
        have = obj.get(key)
        if have in (None, ""):
            obj[key] = want
        elif have != want:
            raise errors.BadRequest(f"the {key} in the body ({have!r}) does not match the URL ({want!r})")
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.BadRequest("metadata must be a JSON object")
    if info.namespaced:
        namespace = meta.get("namespace")
        if namespace in (None, ""):
            meta["namespace"] = target.namespace
        elif namespace != target.namespace:
            raise errors.BadRequest("the namespace of the provided object does not match the namespace "
                                    f"sent on the request ({namespace!r} vs {target.namespace!r})")
    else:
        meta.pop("namespace", None)
    if target.name is not None:
        name = meta.get("name")
        if name in (None, ""):
            meta["name"] = target.name
        elif name != target.name:
            raise errors.BadRequest(f"the name of the object ({name!r}) does not match the name on the URL "
                                    f"({target.name!r})")
    return obj


def _unknown_fields(exc: errors.Invalid) -> list[str]:
    """The paths of the unknown fields among the problems of ``exc``."""
    return [cause.field for cause in exc.causes
            if cause.reason == "FieldValueNotSupported" and cause.message == UNKNOWN_FIELD]


def _prune(obj: Any, path: fieldcheck.Path) -> None:
    node = obj
    for token in path[:-1]:
        in_list = isinstance(token, int) and isinstance(node, list) and token < len(node)
        in_map = isinstance(token, str) and isinstance(node, dict) and token in node
        if not (in_list or in_map):
            return
        node = node[token]
    if path and isinstance(node, dict):
        node.pop(path[-1], None)


def _tokens(path: str) -> fieldcheck.Path:
    return tuple(int(i) if i else key for i, key in _TOKEN.findall(path))


def _shortened(path: str) -> str:
    """A field path as a message names it: at most :data:`MAX_PATH` characters."""
    return path if len(path) <= MAX_PATH else path[:MAX_PATH] + "..."


def _strict_error(info: ResourceInfo, duplicates: Sequence[str], unknown: list[fieldcheck.Path], *,
                  patch: bool) -> errors.BadRequest:
    """kube-apiserver's refusal of a body with unknown or duplicate fields (a patch's names no kind);
    the causes name each field too."""
    causes = [errors.Cause(path, "duplicate field", "FieldValueDuplicate") for path in duplicates]
    causes += [errors.Cause(_shortened(fieldcheck.format_path(path)), UNKNOWN_FIELD, "FieldValueNotSupported")
               for path in unknown]
    text = "strict decoding error: " + ", ".join(f'{c.message} "{c.field}"' for c in causes)
    if not patch:
        text = f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {text}'
    return errors.BadRequest(text, causes=causes)


def _named(exc: errors.Invalid, info: ResourceInfo, obj: dict[str, Any]) -> errors.Invalid:
    """Fill in what kubectl prints (``The Kind "name" is invalid: …``)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    exc.kind = exc.kind or info.kind
    exc.group = exc.group if exc.group is not None else info.group
    exc.name = exc.name or str(meta.get("name") or meta.get("generateName") or "") or None
    return exc


def check_strict(info: ResourceInfo, obj: dict[str, Any], *, duplicates: Sequence[str]) -> None:
    """Refuse an apply intent with unknown or duplicate fields before it is merged (Strict mode), as
    kube-apiserver refuses one that does not fit the kind's schema before looking for conflicts."""
    with contextlib.suppress(errors.Invalid):  # an intent may leave out what the kind requires
        _decode(info, json_copy(obj), "Strict", duplicates=duplicates, patch=True)


def _decode(info: ResourceInfo, obj: dict[str, Any], validation: str, *, duplicates: Sequence[str],
            patch: bool) -> tuple[Any, list[str]]:
    checker = fieldcheck.checker_for(info)
    unknown: list[fieldcheck.Path] = []
    if checker is not None:
        unknown = checker.unknown(obj)
    else:
        try:
            decoded = info.model.from_dict(obj)
        except errors.Invalid as exc:
            unknown = [_tokens(path) for path in dict.fromkeys(_unknown_fields(exc))]
            if not unknown:
                raise _named(exc, info, obj) from None
        else:
            if not duplicates or validation == "Ignore":
                return decoded, []
    duplicates = [_shortened(path) for path in duplicates[:fieldcheck.MAX_REPORTED]]
    if (duplicates or unknown) and validation == "Strict":
        raise _strict_error(info, duplicates, unknown, patch=patch)
    problems = [f'duplicate field "{path}"' for path in duplicates]
    problems += [f'unknown field "{_shortened(fieldcheck.format_path(path))}"' for path in unknown]
    for path in unknown:
        _prune(obj, path)
    try:
        return info.model.from_dict(obj), problems if validation == "Warn" else []
    except errors.Invalid as exc:
        raise _named(exc, info, obj) from None


def admit_object(
    info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None, *,
    operation: Operation, now: datetime, user: User | None, validation: str = "Strict",
    subresource: str | None = None, duplicates: Sequence[str] = (), patch: bool = False,
) -> tuple[dict[str, Any], list[str]]:
    """Decode, default and validate ``obj`` written by ``user`` (``None``: the server itself);
    return its wire form and any warnings. ``duplicates`` are the paths of the keys the request's
    body gave twice; ``patch`` says the object is the result of a patch (kube-apiserver's
    message then names no kind).

    A ``/status`` write is decoded (so its shape is checked) but skips the kind's
    admission rules, which judge what users declare, not what controllers observe.
    """
    drop_nulls(info, obj)
    new, warnings = _decode(info, obj, validation, duplicates=duplicates, patch=patch)
    if subresource == "finalize":
        _finalizer_names(new.to_dict(), info)
    if subresource is not None:
        wire = new.to_dict()
        confine.check_write(user, info, wire, old, subresource=subresource)
        return wire, warnings
    previous = None
    if old is not None:
        try:
            previous = info.model.from_dict(old)
        except errors.Invalid:
            previous = None  # stored before a schema change: validate the new object alone
    admitted = admit(new, previous, operation=operation, now=now).to_dict()
    confine.check_write(user, info, admitted, old)
    return admitted, warnings


def _finalizer_names(namespace: dict[str, Any], info: ResourceInfo) -> None:
    """A Namespace's ``spec.finalizers`` are qualified names (what ``/finalize`` writes)."""
    errs = FieldErrors()
    check_namespace_finalizers((namespace.get("spec") or {}).get("finalizers") or (), errs)
    errs.raise_if_any(kind=info.kind, name=str((namespace.get("metadata") or {}).get("name") or ""),
                      group=info.group)


__all__ = ["VALIDATION_MODES", "admit_object", "check_strict", "check_validation_mode", "shape"]
