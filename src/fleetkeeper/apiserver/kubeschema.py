"""OpenAPI schemas of Kubernetes' own kinds (Deployment, Pod, …), derived from lightkube's models.

fleetkeeper stores Deployments, ConfigMaps and the other built-in kinds as they are, but
kubectl expects the server to know their shape: ``kubectl explain deployment.spec`` walks
the schema the server publishes, and ``kubectl apply`` leaves unknown-field checks to the
server. lightkube-models (a dependency already, for real member clusters) is generated
from Kubernetes' own OpenAPI document: one typed struct per Kubernetes type, with the
field names, types and descriptions of the API. :func:`kind_schemas` turns one kind's
struct and everything it refers to into OpenAPI v3 component schemas named as
kube-apiserver names them (``io.k8s.api.apps.v1.Deployment``,
``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``), so nothing about those kinds is
written by hand here.

What the models do not carry is rendered conservatively: a map whose value type they do
not give is a map of strings (labels, annotations, selectors, data, resource lists), and
raw JSON (``RawExtension``, a CRD's ``JSON``) keeps unknown fields. An ``int | str`` union
is ``x-kubernetes-int-or-string``.

Nothing is imported or built until a schema is asked for (an OpenAPI document, or the
first write of a built-in kind through the API server), and then only what that kind
needs; a type several kinds share is built once for the process. The models' field types
are read from their annotation strings (:func:`parse_annotation`), a small regular
grammar, instead of having ``typing`` evaluate every annotation, which costs several times
more than building the schemas.
"""

from __future__ import annotations

import functools
import re
import sys
from datetime import datetime
from types import ModuleType
from typing import Any

from fleetkeeper.api.builtin import BUILTIN

_MODELS = "lightkube.models."
#: lightkube module → the OpenAPI name prefix kube-apiserver uses for its types
_PREFIXES = {
    "meta_v1": "io.k8s.apimachinery.pkg.apis.meta.v1.",
    "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.",
    "runtime": "io.k8s.apimachinery.pkg.runtime.",
    "util_intstr": "io.k8s.apimachinery.pkg.util.intstr.",
    "resource": "io.k8s.apimachinery.pkg.api.resource.",
}
_PARAM = re.compile(r"^\s*\* \*\*(\w+)\*\* ``[^`]*`` - (.*)$")
_FREE = {"x-kubernetes-preserve-unknown-fields": True}
#: field types lightkube models as a bare map that hold arbitrary JSON
_RAW_JSON = re.compile(r"\b(RawExtension|FieldsV1|JSON)\b")


def module_name(group: str, version: str) -> str:
    """The lightkube module of a group-version (``apps``/``v1`` → ``apps_v1``, core → ``core_v1``)."""
    short = group.split(".")[0] if group else "core"
    return f"{short}_{version}"


def type_prefix(module: str) -> str:
    """The OpenAPI name prefix of a lightkube module's types."""
    return _PREFIXES.get(module) or "io.k8s.api." + module.replace("_", ".", 1) + "."


_SCALARS: dict[object, dict[str, str]] = {
    str: {"type": "string"}, int: {"type": "integer", "format": "int64"},
    float: {"type": "number", "format": "double"}, bool: {"type": "boolean"},
    datetime: {"type": "string", "format": "date-time"},
}
_NAME = re.compile(r"\s*([\w.]+)\s*")
#: a parsed annotation: a name and its arguments (``Optional[List[core_v1.Container]]``)
Annotation = tuple[str, tuple["Annotation", ...]]


def parse_annotation(text: str) -> Annotation:
    """lightkube's annotations are strings of one small grammar: ``Name``, ``module.Name`` and
    ``Name[Arg, …]``. Reading them here is much cheaper than having ``typing`` evaluate them."""
    found, end = _parse(text, 0)
    if end != len(text):
        raise ValueError(f"unexpected annotation {text!r}")
    return found


def _parse(text: str, pos: int) -> tuple[Annotation, int]:
    match = _NAME.match(text, pos)
    if match is None:
        raise ValueError(f"unexpected annotation {text!r}")
    name, pos = match.group(1), match.end()
    args: list[Annotation] = []
    if pos < len(text) and text[pos] == "[":
        pos += 1
        while True:
            arg, pos = _parse(text, pos)
            args.append(arg)
            if pos >= len(text) or text[pos] not in ",]":
                raise ValueError(f"unexpected annotation {text!r}")
            pos += 1
            if text[pos - 1] == "]":
                break
    return (name, tuple(args)), pos


def _described(doc: str | None) -> tuple[str, dict[str, str]]:
    """A model docstring's text and its per-parameter descriptions (by Python field name)."""
    head, _, params = (doc or "").partition("**parameters**")
    fields: dict[str, str] = {}
    current: list[str] | None = None
    for line in params.splitlines():
        match = _PARAM.match(line)
        if match:
            current = [match.group(2).strip()]
            fields[match.group(1)] = current  # type: ignore[assignment]
        elif current is not None and line.strip():
            current.append(line.strip())
    text = " ".join(part.strip() for part in head.split())
    return text, {name: " ".join(lines) for name, lines in fields.items()}


def _is_struct(value: object) -> bool:
    return isinstance(value, type) and hasattr(value, "__struct_encode_fields__")


class _Builder:
    """Component schemas for a set of lightkube structs and everything they refer to."""

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}

    def ref(self, cls: type) -> dict[str, Any]:
        module = cls.__module__.removeprefix(_MODELS)
        name = type_prefix(module) + cls.__name__
        if name not in self.schemas:
            self.schemas[name] = {}  # placeholder: recursive types refer back while being built
            self.schemas[name] = self._struct(cls, free_maps=module.startswith("apiextensions"))
        return {"$ref": "#/components/schemas/" + name}

    def _struct(self, cls: type, *, free_maps: bool) -> dict[str, Any]:
        text, described = _described(cls.__doc__)
        properties: dict[str, Any] = {}
        names: tuple[str, ...] = getattr(cls, "__struct_fields__", ())
        encoded: tuple[str, ...] = getattr(cls, "__struct_encode_fields__", names)
        required = list(encoded[:len(names) - len(getattr(cls, "__struct_defaults__", ()))])
        annotations: dict[str, Any] = getattr(cls, "__annotations__", {})
        owner = sys.modules[cls.__module__]
        for field, wire in zip(names, encoded, strict=True):
            annotation = str(annotations.get(field, ""))
            sub = dict(_FREE) if _RAW_JSON.search(annotation) or not annotation else \
                self.type(parse_annotation(annotation), owner, free_maps=free_maps)
            description = described.get(field)
            if description:
                sub = ({"allOf": [sub], "description": description} if "$ref" in sub
                       else {**sub, "description": description})
            properties[wire] = sub
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if text:
            schema["description"] = text
        if required:
            schema["required"] = required
        return schema

    def type(self, annotation: Annotation, owner: ModuleType, *, free_maps: bool) -> dict[str, Any]:
        name, args = annotation
        if name == "Optional" and len(args) == 1:
            return self.type(args[0], owner, free_maps=free_maps)
        if name == "List" and len(args) == 1:
            return {"type": "array", "items": self.type(args[0], owner, free_maps=free_maps)}
        if name == "Dict" and len(args) == 2:
            return {"type": "object", "additionalProperties": self.type(args[1], owner, free_maps=free_maps)}
        value: object = owner
        for part in name.split("."):
            value = getattr(value, part, None) if part not in ("str", "int", "float", "bool", "dict") \
                else {"str": str, "int": int, "float": float, "bool": bool, "dict": dict}[part]
        return self._resolved(value, free_maps=free_maps)

    def _resolved(self, value: object, *, free_maps: bool) -> dict[str, Any]:
        if _is_struct(value):
            assert isinstance(value, type)
            return self.ref(value)
        if value in _SCALARS:
            return dict(_SCALARS[value])
        if value is dict or getattr(value, "__origin__", None) is dict:  # dict, typing.Dict
            values = dict(_FREE) if free_maps else {"type": "string"}
            return {"type": "object", "additionalProperties": values}
        if set(getattr(value, "__args__", ())) == {int, str}:  # IntOrString
            return {"x-kubernetes-int-or-string": True, "format": "int-or-string"}
        return dict(_FREE)


@functools.cache
def _modules() -> dict[str, ModuleType]:
    """lightkube's modules of the groups the API server serves (imported on first use)."""
    from lightkube.models import (
        apiextensions_v1,
        apps_v1,
        autoscaling_v2,
        batch_v1,
        core_v1,
        networking_v1,
        policy_v1,
        rbac_v1,
        scheduling_v1,
        storage_v1,
    )

    found = (apiextensions_v1, apps_v1, autoscaling_v2, batch_v1, core_v1, networking_v1, policy_v1, rbac_v1,
             scheduling_v1, storage_v1)
    return {module.__name__.removeprefix(_MODELS): module for module in found}


@functools.cache
def _builder() -> _Builder:
    """One builder for the process: a type several kinds share is built once."""
    return _Builder()


def _referenced(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            _referenced(value, out)
    elif isinstance(node, list):
        for value in node:
            _referenced(value, out)


@functools.lru_cache(maxsize=64)
def kind_schemas(group: str, version: str, kind: str) -> tuple[str, dict[str, dict[str, Any]]] | None:
    """The component name of a built-in kind and the schemas it needs, or ``None`` when it is
    not one lightkube models. The result is shared: do not change it."""
    api_version = f"{group}/{version}" if group else version
    if (api_version, kind) not in {(m.API_VERSION, m.KIND) for m in BUILTIN.values()}:
        return None
    cls = getattr(_modules().get(module_name(group, version)), kind, None)
    if not _is_struct(cls):
        return None
    assert isinstance(cls, type)
    builder = _builder()
    name = builder.ref(cls)["$ref"].rsplit("/", 1)[1]
    schemas = builder.schemas
    needed, pending = {name}, [name]
    while pending:
        found: set[str] = set()
        _referenced(schemas[pending.pop()], found)
        pending += sorted(found - needed)
        needed |= found
    return name, {n: schemas[n] for n in sorted(needed)}


__all__ = ["Annotation", "kind_schemas", "module_name", "parse_annotation", "type_prefix"]
