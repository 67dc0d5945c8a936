"""Unknown and duplicate fields of objects kept unstructured, as kube-apiserver's strict decoding finds them.

Typed kinds (Karmada's) refuse unknown fields while they decode. The kinds fleetkeeper
keeps as given — Kubernetes' own (Deployment, Pod …, schemas from
:mod:`~fleetkeeper.apiserver.kubeschema`) and those a CustomResourceDefinition declares
with a schema — are checked here against their OpenAPI schema:

* :func:`checker_for` compiles a kind's schema once into a tree of :class:`Node` (the
  declared properties of an object, the item of a list, the value of a map with free keys
  such as ``labels`` or ``resources.limits``, or nothing to check below:
  ``x-kubernetes-preserve-unknown-fields``, int-or-string and other scalars). Every
  kind's ``metadata`` is ``ObjectMeta``, whatever its schema says, and so is that of an
  object a CRD embeds (``x-kubernetes-embedded-resource``);
* :meth:`Node.unknown` walks an object once, linear in its size, and reports the paths of
  the fields the schema does not declare (at most :data:`MAX_REPORTED`);
* :func:`duplicate_fields` finds keys a JSON body gives twice (the decoder keeps the last
  one silently): a first pass only notices, a second one, run only then, names the paths.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from fleetkeeper.api.crd import definition
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.apiserver.kubeschema import kind_schemas

#: the most problems one request reports (the rest of a huge object is not named)
MAX_REPORTED = 100
_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
Path = tuple[str | int, ...]


class Node:
    """What one place of an object may hold (see the module notes)."""

    __slots__ = ("items", "leaf", "nullable", "open", "properties", "values")

    def __init__(self) -> None:
        self.properties: dict[str, Node] | None = None
        #: fields beside the declared ones are kept (``x-kubernetes-preserve-unknown-fields``)
        self.open = False
        self.items: Node | None = None
        self.values: Node | None = None
        self.leaf = True
        #: ``null`` is a value here, kept as written (``nullable: true``; :mod:`~fleetkeeper.apiserver.nulls`)
        self.nullable = False

    def unknown(self, value: Any) -> list[Path]:
        """The paths of the fields under ``value`` that the schema does not declare."""
        out: list[Path] = []
        self._walk(value, (), out)
        return out

    def _walk(self, value: Any, path: Path, out: list[Path]) -> None:
        if isinstance(value, dict):
            if self.properties is not None:
                for key, sub in value.items():
                    child = self.properties.get(key)
                    if child is None:
                        if self.open:
                            continue
                        if len(out) >= MAX_REPORTED:
                            return
                        out.append((*path, key))
                    elif not child.leaf:
                        child._walk(sub, (*path, key), out)
            elif self.values is not None and not self.values.leaf:
                for key, sub in value.items():
                    self.values._walk(sub, (*path, key), out)
        elif isinstance(value, list) and self.items is not None and not self.items.leaf:
            for index, sub in enumerate(value):
                self.items._walk(sub, (*path, index), out)


def format_path(path: Path) -> str:
    """``("spec", "containers", 0, "nmae")`` → ``spec.containers[0].nmae``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _Compiler:
    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self._schemas = schemas
        self._named: dict[str, Node] = {}

    def node(self, schema: Any) -> Node:
        if not isinstance(schema, dict):
            return Node()
        ref = schema.get("$ref")
        if ref is None and len(schema.get("allOf") or ()) == 1:
            ref = schema["allOf"][0].get("$ref") if isinstance(schema["allOf"][0], dict) else None
        if isinstance(ref, str) and ref.startswith(_REF):
            name = ref[len(_REF):]
            if name not in self._named:
                self._named[name] = Node()  # filled below; a recursive type finds it meanwhile
                self._fill(self._named[name], self._schemas.get(name) or {})
            return self._named[name]
        node = Node()
        self._fill(node, schema)
        return node

    def _fill(self, node: Node, schema: dict[str, Any]) -> None:
        node.nullable = schema.get("nullable") is True
        if schema.get("x-kubernetes-int-or-string"):
            return
        node.open = schema.get("x-kubernetes-preserve-unknown-fields") is True
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if isinstance(properties, dict) and not extra:
            node.properties = {name: self.node(sub) for name, sub in properties.items()}
            node.leaf = False
        elif node.open:
            pass
        elif isinstance(extra, dict):
            node.values = self.node(extra)
            node.leaf = node.values.leaf
        elif schema.get("type") == "array" and isinstance(schema.get("items"), dict):
            node.items = self.node(schema["items"])
            node.leaf = node.items.leaf
        if schema.get("x-kubernetes-embedded-resource") is True:  # an object with its own metadata
            _with_metadata(node)


def compile_schema(schema: dict[str, Any], components: dict[str, dict[str, Any]] | None = None) -> Node:
    """The tree of an OpenAPI v3 schema (``components``: the schemas its ``$ref`` name)."""
    return _Compiler(components or {}).node(schema)


def _with_metadata(root: Node) -> Node:
    """Every kind's ``metadata`` is ``ObjectMeta``; ``apiVersion`` and ``kind`` are always known."""
    meta = _object_meta()
    if root.properties is None:  # nothing declared: only the metadata is checked
        root.properties, root.open = {}, True
    root.properties = {**root.properties, "metadata": meta, "apiVersion": Node(), "kind": Node()}
    root.leaf = False
    return root


@functools.cache
def _object_meta() -> Node:
    found = kind_schemas("", "v1", "ConfigMap")
    assert found is not None, "lightkube models ConfigMap"
    return _Compiler(found[1]).node({"$ref": _REF + _META})


@functools.lru_cache(maxsize=64)
def _builtin(group: str, version: str, kind: str) -> Node | None:
    found = kind_schemas(group, version, kind)
    if found is None:
        return None
    name, schemas = found
    return _with_metadata(_Compiler(schemas).node({"$ref": _REF + name}))


#: compiled CRD schemas by the identity of the schema (kept alive beside its tree)
_DECLARED: dict[int, tuple[object, Node]] = {}


def _declared(info: ResourceInfo) -> Node | None:
    custom = definition(info)
    version = custom.version(info.version) if custom is not None else None
    schema = version.schema if version is not None else None
    if schema is None:
        return None
    cached = _DECLARED.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    node = _with_metadata(compile_schema(dict(schema)))
    if len(_DECLARED) >= 256:
        _DECLARED.clear()
    _DECLARED[id(schema)] = (schema, node)
    return node


def checker_for(info: ResourceInfo) -> Node | None:
    """The compiled schema of a kind kept unstructured, or ``None`` (typed kinds, and kinds
    nothing describes, which are stored as given)."""
    if not issubclass(info.model, Unstructured):
        return None
    if definition(info) is not None:
        return _declared(info)
    return _builtin(info.group, info.version, info.kind)


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its key/value pairs, in order (second pass of :func:`duplicate_fields`)."""


def _note(found: list[bool]) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> None:
        if not found[0] and len({key for key, _ in pairs}) != len(pairs):
            found[0] = True

    return hook


def _duplicates(value: Any, path: Path, out: list[Path]) -> None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, sub in value:
            if key in seen and len(out) < MAX_REPORTED and (*path, key) not in out:
                out.append((*path, key))
            seen.add(key)
            _duplicates(sub, (*path, key), out)
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            _duplicates(sub, (*path, index), out)


def duplicate_fields(body: bytes) -> list[str]:
    """The paths of the keys a JSON body gives more than once (``[]`` for a body that is not JSON)."""
    if body.lstrip()[:1] not in (b"{", b"["):
        return []
    found = [False]
    try:
        json.loads(body, object_pairs_hook=_note(found))
    except (ValueError, RecursionError):
        return []  # not JSON (YAML flow style), or refused by the decoder later
    if not found[0]:
        return []
    out: list[Path] = []
    _duplicates(json.loads(body, object_pairs_hook=_Pairs), (), out)
    return [format_path(p) for p in out]


__all__ = ["MAX_REPORTED", "Node", "checker_for", "compile_schema", "duplicate_fields", "format_path"]
