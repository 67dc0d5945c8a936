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
first write of a built-in kind through the API server); each kind's schemas are built once.
"""

from __future__ import annotations

import functools
import re
from types import ModuleType
from typing import Any

import msgspec

from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.scheme import split_api_version

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


_SCALARS: tuple[tuple[type, dict[str, str]], ...] = (
    (msgspec.inspect.StrType, {"type": "string"}),
    (msgspec.inspect.IntType, {"type": "integer", "format": "int64"}),
    (msgspec.inspect.FloatType, {"type": "number", "format": "double"}),
    (msgspec.inspect.BoolType, {"type": "boolean"}),
    (msgspec.inspect.DateTimeType, {"type": "string", "format": "date-time"}),
)


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


class _Builder:
    """Component schemas for a set of lightkube structs and everything they refer to."""

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}

    def ref(self, struct: msgspec.inspect.StructType) -> dict[str, Any]:
        cls = struct.cls
        module = cls.__module__.removeprefix(_MODELS)
        name = type_prefix(module) + cls.__name__
        if name not in self.schemas:
            self.schemas[name] = {}  # placeholder: recursive types refer back while being built
            self.schemas[name] = self._struct(struct, free_maps=module.startswith("apiextensions"))
        return {"$ref": "#/components/schemas/" + name}

    def _struct(self, struct: msgspec.inspect.StructType, *, free_maps: bool) -> dict[str, Any]:
        text, described = _described(struct.cls.__doc__)
        properties: dict[str, Any] = {}
        required: list[str] = []
        annotations = getattr(struct.cls, "__annotations__", {})
        for f in struct.fields:
            raw_json = _RAW_JSON.search(str(annotations.get(f.name, "")))
            sub = dict(_FREE) if raw_json else self.type(f.type, free_maps=free_maps)
            description = described.get(f.name)
            if description:
                sub = ({"allOf": [sub], "description": description} if "$ref" in sub
                       else {**sub, "description": description})
            properties[f.encode_name] = sub
            if f.required:
                required.append(f.encode_name)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if text:
            schema["description"] = text
        if required:
            schema["required"] = required
        return schema

    def type(self, t: msgspec.inspect.Type, *, free_maps: bool) -> dict[str, Any]:
        inspect = msgspec.inspect
        if isinstance(t, inspect.UnionType):
            options = [o for o in t.types if not isinstance(o, inspect.NoneType)]
            kinds = {type(o) for o in options}
            if kinds == {inspect.IntType, inspect.StrType}:
                return {"x-kubernetes-int-or-string": True, "format": "int-or-string"}
            if len(options) == 1:
                return self.type(options[0], free_maps=free_maps)
            return dict(_FREE)
        if isinstance(t, inspect.StructType):
            return self.ref(t)
        if isinstance(t, inspect.ListType):
            return {"type": "array", "items": self.type(t.item_type, free_maps=free_maps)}
        if isinstance(t, inspect.DictType):
            known = free_maps or not isinstance(t.value_type, inspect.AnyType)
            value = self.type(t.value_type, free_maps=free_maps) if known else {"type": "string"}
            return {"type": "object", "additionalProperties": value}
        for kind, schema in _SCALARS:
            if isinstance(t, kind):
                return dict(schema)
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
def _built() -> tuple[dict[tuple[str, str, str], str], dict[str, dict[str, Any]]]:
    """Every built-in kind's component name and the schemas of all their types (one pass: the
    types the kinds share are read once)."""
    modules = _modules()
    classes: dict[tuple[str, str, str], type] = {}
    for model in BUILTIN.values():
        group, version = split_api_version(model.API_VERSION)
        cls = getattr(modules.get(module_name(group, version)), model.KIND, None)
        if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
            classes[(group, version, model.KIND)] = cls
    builder = _Builder()
    roots: dict[tuple[str, str, str], str] = {}
    for key, info in zip(classes, msgspec.inspect.multi_type_info(list(classes.values())), strict=True):
        assert isinstance(info, msgspec.inspect.StructType)
        roots[key] = builder.ref(info)["$ref"].rsplit("/", 1)[1]
    return roots, builder.schemas


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
    roots, schemas = _built()
    name = roots.get((group, version, kind))
    if name is None:
        return None
    needed, pending = {name}, [name]
    while pending:
        found: set[str] = set()
        _referenced(schemas[pending.pop()], found)
        pending += sorted(found - needed)
        needed |= found
    return name, {n: schemas[n] for n in sorted(needed)}


__all__ = ["kind_schemas", "module_name", "type_prefix"]
