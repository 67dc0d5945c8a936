"""JSON patch (RFC 6902) as kube-apiserver applies ``application/json-patch+json``.

kube-apiserver applies JSON patches with the semantics of evanphx/json-patch v4, which clients
(kubectl users, Karmada's guides) rely on where they differ from the RFC:

* ``replace`` of an absent object member sets it; ``add`` sets or overwrites a member;
* ``test`` of an absent or ``null`` member passes against ``null`` (or no ``value``), and
  ``copy`` from an absent member writes ``null``;
* array indices are read as integers: ``+1`` and ``01`` are 1, a negative index counts from
  the end (``-1`` is the last element, or the end for ``add``), ``-`` appends (``add`` only);
* at the root (``""``) ``add``, ``remove``, ``move`` and ``copy`` do not apply, ``replace``
  swaps in a whole object and ``test`` compares the whole document;
* a path is split on ``/`` after its first segment, so ``spec/x`` means ``/x``;
* an unknown ``op`` and a missing ``path`` are ``422`` like every operation that does not apply.

A failed operation is ``422 Invalid`` whose message is the library's own sentence (for example
``replace operation does not apply: doc is missing key: /spec/x/0: missing value``);
kube-apiserver sends a generic sentence instead, fleetkeeper keeps the specific one. A body that
is not a list of objects is ``400``. The bounds of :mod:`fleetkeeper.api.limits` hold as in
:func:`fleetkeeper.api.patch.apply_json_patch`: operations counted, bytes written budgeted
(``413``), nesting depth checked.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_DEPTH, MAX_PATCH_OPERATIONS, depth_of, too_deep
from fleetkeeper.api.patch import WriteBudget

_MISSING = "missing value"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_ESCAPE = re.compile(r"~[01]")
_INT64 = 1 << 63


class _Refused(Exception):
    """An operation that does not apply; its text is the message of the ``422``."""


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    return "string" if isinstance(value, str) else "number"


def _quote(text: str) -> str:
    return orjson.dumps(text).decode()


def _string_field(op: dict[str, Any], name: str, missing: str) -> str:
    value = op.get(name)
    if value is None:
        raise _Refused(f"{missing}: {_MISSING}")
    if not isinstance(value, str):
        raise _Refused(f"json: cannot unmarshal {_go_type(value)} into Go value of type string")
    return value


def _field(op: dict[str, Any], name: str, failure: str, *, wrap: bool = True) -> str:
    """``op[name]`` as a string, or the operation's decode failure (``wrap``: with the cause)."""
    missing = "operation missing path field" if name == "path" else "operation, missing from field"
    try:
        return _string_field(op, name, missing)
    except _Refused as exc:
        raise _Refused(f"{failure}: {exc}" if wrap else f"{failure}: {_MISSING}") from None


def _split(path: str) -> list[str] | None:
    parts = path.split("/")
    if len(parts) < 2:
        return None
    return [_ESCAPE.sub(lambda m: "/" if m.group() == "~1" else "~", part) for part in parts[1:]]


def _atoi(key: str) -> int:
    if not _INTEGER.fullmatch(key):
        raise _Refused(f"strconv.Atoi: parsing {_quote(key)}: invalid syntax")
    index = int(key)
    if not -_INT64 <= index < _INT64:
        raise _Refused(f"strconv.Atoi: parsing {_quote(key)}: value out of range")
    return index


def _invalid_index(index: int) -> _Refused:
    return _Refused(f"Unable to access invalid index: {index}: invalid index referenced")


def _position(array: list[Any], key: str) -> int:
    """The element ``key`` names in ``array`` (get, replace, remove)."""
    index = _atoi(key)
    position = index + len(array) if index < 0 else index
    if not 0 <= position < len(array):
        raise _invalid_index(index)
    return position


def _get(container: dict[str, Any] | list[Any], key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    return container[_position(container, key)]


def _find(doc: Any, path: str) -> tuple[dict[str, Any] | list[Any], str] | None:
    """The container a path's last segment is in, and that segment; ``None`` when a parent is missing."""
    tokens = _split(path)
    if tokens is None or not isinstance(doc, (dict, list)):
        return None
    node: dict[str, Any] | list[Any] = doc
    for token in tokens[:-1]:
        try:
            child = _get(node, token)
        except _Refused:
            return None
        if not isinstance(child, (dict, list)):
            return None
        node = child
    return node, tokens[-1]


def _insert(place: tuple[dict[str, Any] | list[Any], str], value: Any) -> None:
    container, key = place
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _Refused as exc:
        raise _Refused(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(container) + 1
    if index >= size or index < -size:
        raise _invalid_index(index)
    container.insert(index + size if index < 0 else index, value)


def _delete(container: dict[str, Any] | list[Any], key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise _Refused(f"Unable to remove nonexistent key: {key}: {_MISSING}")
        return container.pop(key)
    return container.pop(_position(container, key))


def _equal(have: Any, want: Any) -> bool:
    """The library's equality: members and elements alike, scalars by JSON text (``1`` is not ``1.0``)."""
    if isinstance(have, dict):
        return (isinstance(want, dict) and have.keys() == want.keys()
                and all(_equal(value, want[key]) for key, value in have.items()))
    if isinstance(have, list):
        return (isinstance(want, list) and len(have) == len(want)
                and all(_equal(a, b) for a, b in zip(have, want, strict=True)))
    if isinstance(want, (dict, list)):
        return False
    try:
        return orjson.dumps(have) == orjson.dumps(want)
    except TypeError:  # an integer beyond 64 bits: compare it as a value
        return type(have) is type(want) and bool(have == want)


def _add(doc: Any, op: dict[str, Any], *, write: _Write) -> Any:
    path = _field(op, "path", "add operation failed to decode path", wrap=False)
    found = _find(doc, path)
    if found is None:
        raise _Refused(f'add operation does not apply: doc is missing path: "{path}": {_MISSING}')
    try:
        _insert(found, write(op.get("value"), path))
    except _Refused as exc:
        raise _Refused(f"error in add for path: '{path}': {exc}") from None
    return doc


def _remove(doc: Any, op: dict[str, Any], *, write: _Write) -> Any:
    path = _field(op, "path", "remove operation failed to decode path", wrap=False)
    found = _find(doc, path)
    if found is None:
        raise _Refused(f'remove operation does not apply: doc is missing path: "{path}": {_MISSING}')
    try:
        _delete(*found)
    except _Refused as exc:
        raise _Refused(f"error in remove for path: '{path}': {exc}") from None
    return doc


def _replace(doc: Any, op: dict[str, Any], *, write: _Write) -> Any:
    path = _field(op, "path", "replace operation failed to decode path")
    value = op.get("value")
    if path == "":
        if not isinstance(value, (dict, list)):
            raise _Refused("replace operation value must be object or array: %!w(<nil>)")
        return write(value, path)
    found = _find(doc, path)
    if found is None:
        raise _Refused(f"replace operation does not apply: doc is missing path: {path}: {_MISSING}")
    container, key = found
    if isinstance(container, dict):
        container[key] = write(value, path)
        return doc
    try:
        position = _position(container, key)
    except _Refused:
        raise _Refused(f"replace operation does not apply: doc is missing key: {path}: {_MISSING}") from None
    container[position] = write(value, path)
    return doc


def _move(doc: Any, op: dict[str, Any], *, write: _Write) -> Any:
    source = _field(op, "from", "move operation failed to decode from")
    found = _find(doc, source)
    if found is None:
        raise _Refused(f"move operation does not apply: doc is missing from path: {source}: {_MISSING}")
    container, key = found
    try:
        value = _delete(container, key)
    except _Refused as exc:
        raise _Refused(f"error in move for path: '{key}': {exc}") from None
    path = _field(op, "path", "move operation failed to decode path")
    found = _find(doc, path)
    if found is None:
        raise _Refused(f"move operation does not apply: doc is missing destination path: {path}: {_MISSING}")
    try:
        _insert(found, value)
    except _Refused as exc:
        raise _Refused(f"error in move for path: '{path}': {exc}") from None
    return doc


def _copy(doc: Any, op: dict[str, Any], *, write: _Write) -> Any:
    source = _field(op, "from", "copy operation failed to decode from")
    found = _find(doc, source)
    if found is None:
        raise _Refused(f"copy operation does not apply: doc is missing from path: {source}: {_MISSING}")
    try:
        value = _get(*found)
    except _Refused as exc:
        raise _Refused(f"error in copy for from: '{source}': {exc}") from None
    path = _field(op, "path", "copy operation failed to decode path", wrap=False)
    found = _find(doc, path)
    if found is None:
        raise _Refused(f"copy operation does not apply: doc is missing destination path: {path}: {_MISSING}")
    try:
        _insert(found, write(value, path))
    except _Refused as exc:
        raise _Refused(f"error while adding value during copy: {exc}") from None
    return doc


def _test(doc: Any, op: dict[str, Any], *, write: _Write) -> Any:
    path = _field(op, "path", "test operation failed to decode path")
    want = op.get("value")
    if path == "":
        if want is None or not _equal(doc, want):
            raise _Refused(f"testing value {path} failed: test failed")
        return doc
    found = _find(doc, path)
    if found is None:
        raise _Refused(f"test operation does not apply: is missing path: {path}: {_MISSING}")
    try:
        have = _get(*found)
    except _Refused as exc:
        raise _Refused(f"error in test for path: '{path}': {exc}") from None
    if (have is None) != (want is None) or (have is not None and not _equal(have, want)):
        raise _Refused(f"testing value {path} failed: test failed")
    return doc


class _Write:
    """Copies a value into the document against the patch's write budget."""

    __slots__ = ("budget", "index", "kind")

    def __init__(self, budget: WriteBudget, *, index: int, kind: str) -> None:
        self.budget, self.index, self.kind = budget, index, kind

    def __call__(self, value: Any, path: str) -> Any:
        return self.budget.copy(value, self.index, self.kind, path)


_OPERATIONS = {"add": _add, "remove": _remove, "replace": _replace, "move": _move, "copy": _copy,
               "test": _test}


def _kind(op: dict[str, Any] | None) -> str:
    kind = op.get("op") if op is not None else None
    return kind if isinstance(kind, str) else "unknown"


def _decoded(patch: Any) -> list[dict[str, Any] | None]:
    if patch is None:
        return []
    if not isinstance(patch, list):
        raise errors.BadRequest(
            f"json: cannot unmarshal {_go_type(patch)} into Go value of type jsonpatch.Patch")
    for op in patch:
        if op is not None and not isinstance(op, dict):
            raise errors.BadRequest(
                f"json: cannot unmarshal {_go_type(op)} into Go value of type jsonpatch.Operation")
    if len(patch) > MAX_PATCH_OPERATIONS:
        raise errors.RequestEntityTooLarge(
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_PATCH_OPERATIONS}, got {len(patch)}")
    return patch


def apply_kube_json_patch(doc: Any, patch: Any) -> Any:
    """Apply a JSON patch as kube-apiserver does, atomically: all operations apply, or none and an error."""
    operations = _decoded(patch)
    try:
        result = orjson.loads(orjson.dumps(doc))
    except TypeError as exc:  # only a program's document can be beyond the encoder (or not JSON)
        raise errors.BadRequest(f"json patch: the document cannot be patched: {exc}") from None
    budget = WriteBudget()
    for index, op in enumerate(operations):
        kind = _kind(op)
        apply = _OPERATIONS.get(kind)
        try:
            if apply is None or op is None:
                raise _Refused(f"Unexpected kind: {kind}")
            result = apply(result, op, write=_Write(budget, index=index, kind=kind))
        except _Refused as exc:
            raise errors.Invalid(str(exc)) from None
    if too_deep(result) and depth_of(result) > depth_of(doc):
        why = f"the patched object would nest objects and arrays more than {MAX_DEPTH} levels deep"
        raise errors.Invalid(f"json patch: {why}", causes=[errors.Cause("", why, "FieldValueInvalid")])
    return result


__all__ = ["apply_kube_json_patch"]
