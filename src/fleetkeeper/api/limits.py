"""The bounds every object and request is held to, as kube-apiserver and etcd hold them.

No request may make the plane hold, copy or recurse over more than these, whoever sends it
(an agent patching its own Work included):

* :data:`MAX_OBJECT_BYTES` — a stored object's encoded JSON, etcd's default request limit,
  which every Kubernetes object must fit. The store refuses a larger object on every write
  path (``413``), measuring the bytes it encodes anyway.
* :data:`MAX_DEPTH` — how deeply objects and arrays may nest in a request body. Bodies are
  checked as they are parsed, before any recursive code (admission, merges, the encoder)
  sees them, so nesting is a ``400`` and never a ``RecursionError``.
* :data:`MAX_PATCH_OPERATIONS` and :data:`MAX_PATCH_BYTES` — a JSON patch's operation count
  (kube-apiserver's) and the bytes its ``add``, ``replace`` and ``copy`` operations may
  write in all, so that a few hundred bytes of ``copy`` cannot double a value forty times.

:func:`too_deep` walks with an explicit stack (no recursion), visiting only containers.
:func:`read_body` reads a request body of at most a given size (the API server's, the
dashboard's), refusing a larger one with ``413`` on its ``Content-Length`` and again while
reading, so that a lying or chunked client cannot make the server buffer more.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from fleetkeeper import errors

#: a stored object's encoded size (etcd's default ``--max-request-bytes``, 1.5 MiB)
MAX_OBJECT_BYTES = 1_572_864
#: nesting of objects and arrays in a request body (``{"a": [1]}`` nests 2 deep)
MAX_DEPTH = 100
#: operations in one JSON patch (kube-apiserver's ``maxJSONPatchOperations``)
MAX_PATCH_OPERATIONS = 10_000
#: bytes a JSON patch may write into a document, summed over its add, replace and copy operations
MAX_PATCH_BYTES = MAX_OBJECT_BYTES


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` deep (a scalar nests 0 deep)."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def depth_of(value: Any) -> int:
    """How deeply ``value`` nests objects and arrays (iteratively; a scalar is 0)."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 1
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node)
                     if isinstance(child, (dict, list)))
    return deepest


class Body(Protocol):
    """A request whose body is read as a stream (a Starlette ``Request``)."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    def stream(self) -> AsyncIterator[bytes]: ...


async def read_body(request: Body, limit: int) -> bytes:
    """The request body, refusing more than ``limit`` bytes with ``413``."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise errors.RequestEntityTooLarge(f"the request body is {declared} bytes, more than {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise errors.RequestEntityTooLarge(f"the request body is more than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


__all__ = ["MAX_DEPTH", "MAX_OBJECT_BYTES", "MAX_PATCH_BYTES", "MAX_PATCH_OPERATIONS", "Body", "depth_of",
           "read_body", "too_deep"]
