"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) over wire dicts.

Pure functions: the input document is never modified, the result shares nothing with
the patch. :func:`apply_json_patch` reads RFC 6902 strictly (the binding controller's
overrides); the API server and the local client apply a client's JSON patch as
kube-apiserver does (:mod:`fleetkeeper.api.kubepatch`). They live in the lowest layer so
that the local client, the API server and the binding controller's overrides (which may
not import one another) patch alike.

Errors: a patch document that is malformed (not a list of operations, an unknown
``op``, a pointer without a leading ``/``) is :class:`errors.BadRequest`; a well-formed
patch that cannot apply to this document (a missing path, a failed ``test``) is
:class:`errors.Invalid`, naming the operation.

A JSON patch is bounded as kube-apiserver bounds it (:mod:`fleetkeeper.api.limits`): at most
:data:`~.limits.MAX_PATCH_OPERATIONS` operations, and at most
:data:`~.limits.MAX_PATCH_BYTES` written in all — each ``add``, ``replace`` and ``copy``
counts the encoded size of the value it writes, measured as the value is copied (the copy
is made from those bytes), before anything is added, so forty ``copy`` operations doubling
a value stop at the budget with memory still bounded. Both are ``413``, naming the
operation's index. A patch that nests the document deeper than
:data:`~.limits.MAX_DEPTH` (copies and moves can deepen it) is ``422``.
"""

from __future__ import annotations

from typing import Any

import orjson

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_DEPTH, MAX_PATCH_BYTES, MAX_PATCH_OPERATIONS, depth_of, too_deep

_OPS = ("add", "remove", "replace", "move", "copy", "test")


def _copy(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value)) if isinstance(value, (dict, list)) else value


# --------------------------------------------------------------------------- RFC 7386


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON merge patch: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return _copy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


# --------------------------------------------------------------------------- RFC 6902


def _parse_pointer(pointer: Any, what: str) -> list[str]:
    if not isinstance(pointer, str):
        raise errors.BadRequest(f"json patch: {what} must be a string JSON pointer, got {pointer!r}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise errors.BadRequest(f"json patch: {what} {pointer!r} must start with '/'")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _index(container: list[Any], token: str, *, appending: bool, path: str) -> int:
    if appending and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise _cannot(f"{token!r} is not an array index", path)
    index = int(token)
    limit = len(container) if appending else len(container) - 1
    if index > limit:
        raise _cannot(f"array index {index} is out of range", path)
    return index


def _cannot(why: str, path: str) -> errors.Invalid:
    return errors.Invalid(f"json patch cannot apply at {path!r}: {why}",
                          causes=[errors.Cause(path or "/", why, "FieldValueInvalid")])


def _walk(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise _cannot("the path does not exist", path)
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, appending=False, path=path)]
        else:
            raise _cannot("the path goes through a scalar", path)
    return node


def _add(doc: Any, tokens: list[str], value: Any, path: str) -> Any:
    if not tokens:
        return value
    parent = _walk(doc, tokens[:-1], path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, appending=True, path=path), value)
    else:
        raise _cannot("the parent is not an object or array", path)
    return doc


def _remove(doc: Any, tokens: list[str], path: str) -> tuple[Any, Any]:
    if not tokens:
        raise _cannot("the whole document cannot be removed", path)
    parent = _walk(doc, tokens[:-1], path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise _cannot("the path does not exist", path)
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, appending=False, path=path))
    raise _cannot("the parent is not an object or array", path)


def json_equal(a: Any, b: Any) -> bool:
    """JSON value equality (unlike Python, ``true`` is not ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


class WriteBudget:
    """What one JSON patch has written so far, against :data:`~.limits.MAX_PATCH_BYTES`."""

    __slots__ = ("written",)

    def __init__(self) -> None:
        self.written = 0

    def copy(self, value: Any, index: int, kind: str, path: str) -> Any:
        """A private copy of ``value``, counted; ``413`` once the patch's writes pass the budget."""
        try:
            encoded = orjson.dumps(value)
        except TypeError as exc:  # nesting beyond the encoder's bound, or a value that is not JSON
            raise _cannot(f"operation {index} ({kind}) cannot write this value: {exc}", path) from None
        self.written += len(encoded)
        if self.written > MAX_PATCH_BYTES:
            raise errors.RequestEntityTooLarge(
                f"json patch operation {index} ({kind} at {path!r}) would bring what the patch writes to "
                f"{self.written} bytes, more than the limit of {MAX_PATCH_BYTES} (the encoded size of every "
                "value written by add, replace and copy counts)")
        return orjson.loads(encoded) if isinstance(value, (dict, list)) else value


def _operation(doc: Any, op: dict[str, Any], index: int, writes: WriteBudget) -> Any:
    kind = op.get("op")
    if kind not in _OPS:
        raise errors.BadRequest(f"json patch: unknown op {kind!r} (expected one of {', '.join(_OPS)})")
    path = op.get("path")
    tokens = _parse_pointer(path, "path")
    assert isinstance(path, str)
    if kind in ("add", "replace", "test") and "value" not in op:
        raise errors.BadRequest(f"json patch: {kind} at {path!r} needs a value")
    if kind == "add":
        return _add(doc, tokens, writes.copy(op["value"], index, kind, path), path)
    if kind == "remove":
        return _remove(doc, tokens, path)[0]
    if kind == "replace":
        doc, _ = _remove(doc, tokens, path) if tokens else (doc, None)
        return _add(doc, tokens, writes.copy(op["value"], index, kind, path), path)
    if kind == "test":
        if not json_equal(_walk(doc, tokens, path), op["value"]):
            raise _cannot(f"test failed: the value is not {op['value']!r}", path)
        return doc
    source = _parse_pointer(op.get("from"), "from")
    if kind == "copy":
        value = _walk(doc, source, str(op.get("from")))
        return _add(doc, tokens, writes.copy(value, index, kind, path), path)
    if tokens[:len(source)] == source and len(tokens) > len(source):
        raise _cannot("cannot move a value into one of its own children", path)
    doc, value = _remove(doc, source, str(op.get("from")))
    return _add(doc, tokens, value, path)


def apply_json_patch(doc: Any, patch: Any) -> Any:
    """Apply a JSON patch (a list of operations) atomically: all apply, or none and an error."""
    if not isinstance(patch, list):
        raise errors.BadRequest("json patch must be a JSON array of operations")
    if len(patch) > MAX_PATCH_OPERATIONS:
        raise errors.RequestEntityTooLarge(
            f"json patch has {len(patch)} operations, more than the limit of {MAX_PATCH_OPERATIONS}")
    try:
        result = _copy(doc)
    except TypeError as exc:  # only a program's document can be beyond the encoder (or not JSON)
        raise errors.BadRequest(f"json patch: the document cannot be patched: {exc}") from None
    writes = WriteBudget()
    for index, op in enumerate(patch):
        if not isinstance(op, dict):
            raise errors.BadRequest(f"json patch: each operation must be an object, got {op!r}")
        result = _operation(result, op, index, writes)
    if too_deep(result) and depth_of(result) > depth_of(doc):
        why = f"the patched object would nest objects and arrays more than {MAX_DEPTH} levels deep"
        raise errors.Invalid(f"json patch: {why}", causes=[errors.Cause("", why, "FieldValueInvalid")])
    return result


def pointer_get(doc: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901): ``BadRequest`` when it is malformed, ``Invalid``
    when there is nothing there."""
    return _walk(doc, _parse_pointer(pointer, "path"), pointer)


__all__ = ["WriteBudget", "apply_json_patch", "apply_merge_patch", "json_equal", "pointer_get"]
