"""Reading Kubernetes API requests: paths, query parameters, bodies, media types.

Everything a client can get wrong is turned into a 4xx ``Status`` here, before any
handler runs: an unknown resource is ``404``, a malformed query value or body ``400``,
a body over :data:`MAX_BODY_BYTES` ``413`` (read by :func:`fleetkeeper.api.limits.read_body`,
which the dashboard shares), an unsupported patch type ``415``.

Paths are parsed by hand instead of by router patterns: ``/apis/{g}/{v}/namespaces/{ns}/{r}``
and ``/apis/{g}/{v}/{r}/{name}/{sub}`` have the same shape, and only the scheme knows
which one a request means. Booleans parse like Go's ``strconv.ParseBool`` (clients
send ``watch=true``, ``watch=1`` and ``watch=True``). Integers are decimal and within
int64, as kube-apiserver parses them; anything else is ``400`` naming the parameter. A
missing ``Content-Type`` means JSON, as kube-apiserver assumes. YAML bodies are read with
a loader that keeps timestamps as strings, so every body is plain JSON data.

A body nesting objects and arrays deeper than :data:`~fleetkeeper.api.limits.MAX_DEPTH`
is ``400`` at this step, before any recursive code (admission, merges, the encoder) sees
it: YAML while it is composed, JSON right after the (non-recursive) parser. A YAML body's
aliases are expanded by the loader, so its values and bytes are counted as they would be
sent in JSON: more than :data:`MAX_BODY_VALUES` values or :data:`MAX_BODY_BYTES` bytes is
``413`` (a few kilobytes of aliases would otherwise stand for gigabytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_DEPTH, too_deep
from fleetkeeper.api.scheme import ResourceInfo, Scheme
from fleetkeeper.api.yamlload import BoundedLoader
from fleetkeeper.apiserver import protobuf
from fleetkeeper.apiserver.discovery import has_scale

MAX_BODY_BYTES = 3 * 1024 * 1024
#: the range of an integer query parameter (Go's int64, as kube-apiserver parses them)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

JSON = "application/json"
YAML = "application/yaml"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH, APPLY_PATCH)

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class _JsonLoader(BoundedLoader):
    """A safe YAML loader whose scalars are JSON's (timestamps stay strings)."""


_JsonLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in BoundedLoader.yaml_implicit_resolvers.items()
}


def parse_bool(name: str, value: str | None, default: bool = False) -> bool:
    """A query flag, parsed like Go's ``strconv.ParseBool``; empty means ``default``."""
    if value is None or value == "":
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise errors.BadRequest(f"invalid value {value!r} for query parameter {name!r}: expected a boolean")


def parse_int(name: str, value: str | None, *, minimum: int = INT64_MIN,
              maximum: int = INT64_MAX) -> int | None:
    """An integer query parameter (``None`` when absent): decimal digits with an optional sign,
    within ``minimum`` … ``maximum`` (int64 unless told), else ``400`` naming the parameter."""
    if value is None or value == "":
        return None
    digits = value[1:] if value[:1] in ("-", "+") else value
    if not (digits.isascii() and digits.isdigit()):
        message = f"invalid value {value[:40]!r} for query parameter {name!r}: expected an integer"
        raise errors.BadRequest(message)
    negative = value.startswith("-")
    number = int(value) if len(digits) <= 20 else None  # beyond 20 digits it is out of any range
    if number is None or not minimum <= number <= maximum:
        bound = f"at least {minimum}" if negative else f"at most {maximum}"
        raise errors.BadRequest(f"invalid value {value[:40]!r} for query parameter {name!r}: must be {bound}")
    return number


def media_type(header: str | None) -> str:
    """``application/json; charset=utf-8`` → ``application/json``; missing → JSON."""
    if not header:
        return JSON
    return header.split(";", 1)[0].strip().lower() or JSON


def decode(body: bytes, content_type: str) -> Any:
    """Parse a JSON or YAML body (``400`` with the parser's reason when malformed or nested
    deeper than :data:`~fleetkeeper.api.limits.MAX_DEPTH`)."""
    if not body.strip():
        raise errors.BadRequest("the request body is empty")
    if content_type in (YAML, APPLY_PATCH, "application/yml", "text/yaml"):
        try:
            docs = list(yaml.load_all(body, Loader=_JsonLoader))  # a SafeLoader subclass
        except yaml.YAMLError as exc:
            raise errors.BadRequest(f"the request body is not valid YAML: {exc}") from None
        if len(docs) != 1:
            raise errors.BadRequest(f"the request body must be one YAML document, found {len(docs)}")
        return _check_json(docs[0])
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion limit" in str(exc).lower():  # orjson stops at 1024
            raise _too_deep() from None
        raise errors.BadRequest(f"the request body is not valid JSON: {exc}") from None
    if too_deep(value):
        raise _too_deep()
    return value


def _too_deep() -> errors.BadRequest:
    return errors.BadRequest(f"the request body nests objects and arrays more than {MAX_DEPTH} levels deep "
                             "(the limit)")


#: Bound on the values one body may hold after YAML aliases are expanded ("billion laughs").
MAX_BODY_VALUES = 1_000_000


def _check_json(value: Any) -> Any:
    """Check that YAML gave plain JSON data, within :data:`MAX_BODY_VALUES` values,
    :data:`MAX_BODY_BYTES` bytes as JSON (counted low: a body refused here could not be stored)
    and :data:`~fleetkeeper.api.limits.MAX_DEPTH` levels once aliases are expanded (an alias
    may even make a value contain itself)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    visited = size = 0
    while stack:
        node, depth = stack.pop()
        visited += 1
        if visited > MAX_BODY_VALUES:
            raise _expanded()
        if isinstance(node, (dict, list)) and depth >= MAX_DEPTH:
            raise _too_deep()
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str):
                    raise errors.BadRequest(f"the request body has a non-string key {key!r}")
                _check_text(key)
                size += len(key) + 3
                stack.append((child, depth + 1))
            size += 2
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
            size += 2
        elif isinstance(node, str):
            _check_text(node)
            size += len(node) + 2
        elif node is None or isinstance(node, bool):
            size += 4
        elif isinstance(node, float) or (isinstance(node, int) and -(2**63) <= node < 2**64):
            size += 1
        elif isinstance(node, int):
            raise errors.BadRequest(f"the request body has an integer beyond 64 bits: {node}")
        else:
            raise errors.BadRequest(f"the request body has a value that is not JSON: {node!r}")
        if size > MAX_BODY_BYTES:
            raise _expanded()
    return value


def _expanded() -> errors.RequestEntityTooLarge:
    return errors.RequestEntityTooLarge(
        f"the request body is more than {MAX_BODY_VALUES} values or {MAX_BODY_BYTES} bytes once its YAML "
        "aliases are expanded (the limits)")


def _check_text(text: str) -> None:
    """YAML escapes can spell lone surrogates (``"\\ud800"``), which no UTF-8 document can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.BadRequest(
            "the request body has text that is not valid Unicode (a lone surrogate)") from None


def decode_object(body: bytes, content_type: str) -> dict[str, Any]:
    """A body that must be one object (create, update, apply); kubectl's typed commands send
    protobuf (:mod:`~fleetkeeper.apiserver.protobuf`)."""
    if content_type == protobuf.PROTOBUF:
        return protobuf.decode_body(body)
    if content_type not in (JSON, YAML, APPLY_PATCH, "application/yml", "text/yaml"):
        raise errors.UnsupportedMediaType(f"the body of this request cannot be {content_type!r}; "
                                          f"use {JSON}, {YAML} or {protobuf.PROTOBUF}")
    value = decode(body, content_type)
    if not isinstance(value, dict):
        raise errors.BadRequest(f"the request body must be a JSON object, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class Target:
    """The resource a request addresses."""

    info: ResourceInfo
    #: ``None``: every namespace (collections only); ``""``: cluster-scoped
    namespace: str | None
    name: str | None = None
    subresource: str | None = None

    @property
    def resource_name(self) -> str:
        """``clusters.cluster.karmada.io`` (how Kubernetes names it in messages)."""
        return f"{self.info.plural}.{self.info.group}" if self.info.group else self.info.plural


def not_found_path() -> errors.NotFound:
    return errors.NotFound("the server could not find the requested resource")


def resolve(scheme: Scheme, group: str, version: str, segments: list[str]) -> Target:
    """Map the segments after ``/apis/{g}/{v}`` (or ``/api/v1``) to a :class:`Target`."""
    segs = [s for s in segments if s != ""]
    if not segs:
        raise not_found_path()
    if segs[0] == "namespaces" and len(segs) >= 3 and not _is_namespace_item(scheme, group, version, segs):
        info = scheme.by_plural(group, version, segs[2])
        if info is None or not info.namespaced or len(segs) > 5:
            raise not_found_path()
        return _target(info, segs[1], segs[3:])
    info = scheme.by_plural(group, version, segs[0])
    if info is None or len(segs) > 3:
        raise not_found_path()
    if info.namespaced:
        if len(segs) > 1:
            raise not_found_path()  # a namespaced object needs /namespaces/{ns}/...
        return Target(info, None)
    return _target(info, "", segs[1:])


def _is_namespace_item(scheme: Scheme, group: str, version: str, segs: list[str]) -> bool:
    """``/api/v1/namespaces/{name}/status`` addresses a Namespace, not a resource ``status``."""
    return (len(segs) == 3 and scheme.by_plural(group, version, "namespaces") is not None
            and scheme.by_plural(group, version, segs[2]) is None)


def _target(info: ResourceInfo, namespace: str, rest: list[str]) -> Target:
    name = rest[0] if rest else None
    sub = rest[1] if len(rest) > 1 else None
    gk = (info.group, info.kind)
    served = ((sub == "status" and info.has_status) or (sub == "scale" and has_scale(info))
              or (sub == "finalize" and gk == ("", "Namespace"))
              or (sub == "token" and gk == ("", "ServiceAccount")))
    if sub is not None and not served:
        raise not_found_path()
    return Target(info, namespace, name, sub)


__all__ = [
    "APPLY_PATCH", "INT64_MAX", "JSON", "JSON_PATCH", "MAX_BODY_BYTES", "MERGE_PATCH", "PATCH_TYPES",
    "STRATEGIC_PATCH", "YAML", "Target", "decode", "decode_object", "media_type", "parse_bool", "parse_int",
    "resolve",
]
